"""A synthetic world in the geometry of CLIP embeddings.

:func:`make_clip_like` draws a world of
:func:`~temporal_xmodal.datasets.make_temporal_crossmodal` (categories, eras,
caption wordings that pass between categories at era boundaries, stable
pictures) and maps each modality into the geometry of CLIP output: a random
linear map to a wide space, a large offset shared by every item of the
modality (different per modality: the modality gap), strong isotropic noise,
and every row scaled to unit norm.  Read more in the user guide:
docs/datasets.md ("make_clip_like: a CLIP-like world").
"""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import validate_params

from .._constraints import Interval
from .._stacking import stack_modalities
from ._synthetic import make_temporal_crossmodal

__all__ = ["make_clip_like"]

#: The world :func:`make_clip_like` draws by default: keyword arguments of
#: :func:`make_temporal_crossmodal` (its other parameters at their defaults),
#: which the caller's ``**world`` overrides.  12 categories over 3 eras, 6 of
#: which pass their caption wordings round at each era boundary, a stable
#: writing style.
CLIP_LIKE_DEFAULTS = {"n_categories": 12, "drift": 0.0, "meaning_shift": 0.5}


def _to_clip_geometry(rng, features, n_features, offset, noise):
    """Map one modality's features into CLIP geometry; the map, offset and unit rows.

    A random Gaussian map to ``n_features`` columns, scaled so that the mapped
    features have unit root-mean-square row norm (the signal); a shared offset
    of norm ``offset`` in a random direction; isotropic noise of expected norm
    ``noise``; each row divided by its norm.
    """
    n, width = features.shape
    projection = rng.standard_normal((width, n_features))
    signal = features @ projection
    scale = np.sqrt(np.mean(np.sum(signal**2, axis=1)))
    if scale > 0:
        signal /= scale
        projection /= scale
    direction = rng.standard_normal(n_features)
    shared = offset * direction / np.linalg.norm(direction)
    embedded = signal + shared + noise / np.sqrt(n_features) * rng.standard_normal((n, n_features))
    embedded /= np.linalg.norm(embedded, axis=1, keepdims=True)
    return embedded, projection, shared


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "n_image_features": [Interval(Integral, 1, None, closed="left")],
        "n_text_features": [Interval(Integral, 1, None, closed="left")],
        "offset": [Interval(Real, 0, None, closed="left")],
        "embedding_noise": [Interval(Real, 0, None, closed="left")],
        "return_info": ["boolean"],
        "random_state": ["random_state"],
    },
    # The world's keyword arguments are validated by make_temporal_crossmodal.
    prefer_skip_nested_validation=False,
)
def make_clip_like(
    n_samples=10000,
    *,
    n_image_features=512,
    n_text_features=512,
    offset=3.0,
    embedding_noise=2.0,
    return_info=False,
    random_state=None,
    **world,
):
    r"""Generate a temporal cross-modal data set in the geometry of CLIP embeddings.

    Draws a world of :func:`make_temporal_crossmodal` (by default 12
    categories over 3 eras, half of which pass their caption wordings round
    at each era boundary, so a caption's category needs its date, and stable
    pictures) and maps each modality's features into the geometry of CLIP
    output, independently per modality:

    .. math::

        x_i = \frac{s_i + o + \sigma_E \varepsilon_i}
                   {\lVert s_i + o + \sigma_E \varepsilon_i \rVert},
        \qquad s_i = P^\top f_i / r,
        \quad \varepsilon_i \sim \mathcal{N}(0, I_D / D),

    where :math:`f_i` are the generator's features of the modality (its own
    noise included), :math:`P` a random Gaussian map to :math:`D` columns,
    :math:`r` the root-mean-square norm of :math:`P^\top f_i` over the items
    (the signal has unit mean square norm), :math:`o` the modality's shared
    offset (norm ``offset``, a random direction; another one for the other
    modality: the modality gap) and :math:`\sigma_E` = ``embedding_noise``.
    Every row has unit norm; two items of one modality have a mean cosine of
    about :math:`\lVert o \rVert^2 / (\lVert o \rVert^2 + 1 + \sigma_E^2)`
    (0.64 at the defaults), an image and a caption about 0 (the two maps are
    independent).

    Read more in the user guide: docs/datasets.md ("make_clip_like: a CLIP-like world"),
    with the difficulty a linear baseline measures on it.

    Parameters
    ----------
    n_samples : int, default=10000
        Number of items (at least the number of categories).
    n_image_features : int, default=512
        Width :math:`D` of the image embeddings.
    n_text_features : int, default=512
        Width of the text embeddings.
    offset : float, default=3.0
        Norm of each modality's shared offset, relative to the unit signal:
        CLIP's anisotropy (every embedding of a modality lies in a narrow
        cone).  ``0`` removes it.
    embedding_noise : float, default=2.0
        Expected norm :math:`\sigma_E \ge 0` of the isotropic noise added to
        each embedding before normalisation, relative to the unit signal.
    return_info : bool, default=False
        If True, also return the ground truth as a :class:`~sklearn.utils.Bunch`.
    random_state : int, RandomState instance or None, default=None
        Seed; an int gives reproducible output.  The world is drawn first,
        from the same stream: ``info`` holds the ground truth of
        ``make_temporal_crossmodal(n_samples, random_state=random_state,
        n_categories=12, drift=0.0, meaning_shift=0.5, **world)``.
    **world
        Keyword arguments of :func:`make_temporal_crossmodal` (except its
        ``n_image_features``, ``n_text_features``, ``return_info`` and
        ``random_state``), overriding the default world ``n_categories=12,
        drift=0.0, meaning_shift=0.5``: ``**TEMPORAL_WORLDS["static"]``
        gives that world in CLIP geometry.  The generator validates them.

    Returns
    -------
    X : ndarray of shape (n_samples, n_image_features + n_text_features + 1)
        ``[image embeddings | text embeddings | time]``, every embedding of
        unit norm.  Pass ``n_image_features=info.n_image_features`` to the
        estimators.
    y : ndarray of shape (n_samples,) or (n_samples, n_categories)
        The generator's labels (label noise included).
    info : :class:`~sklearn.utils.Bunch`
        Only if ``return_info=True``: every field of
        :func:`make_temporal_crossmodal`'s ground truth, with
        ``n_image_features`` and ``n_text_features`` the embedding widths,
        and ``image_features`` and ``text_features`` (the generator's
        features :math:`f_i`), ``image_projection`` and ``text_projection``
        (:math:`P / r`), ``image_offset`` and ``text_offset`` (:math:`o`),
        ``offset`` and ``embedding_noise``.

    Raises
    ------
    ValueError
        If a parameter is out of its range (the world's included).
    TypeError
        If a parameter has the wrong type, or ``world`` names a parameter
        :func:`make_temporal_crossmodal` does not have.

    See Also
    --------
    make_temporal_crossmodal : The world, in its own (Gaussian) geometry.
    temporal_xmodal.datasets.TEMPORAL_WORLDS : Named worlds, to pass as ``**world``.

    Examples
    --------
    >>> import numpy as np
    >>> from temporal_xmodal.datasets import make_clip_like
    >>> X, y, info = make_clip_like(600, return_info=True, random_state=0)
    >>> X.shape, info.n_image_features, len(np.unique(y))
    ((600, 1025), 512, 12)
    >>> X_img = X[:, :512]
    >>> bool(np.allclose(np.linalg.norm(X_img, axis=1), 1.0))
    True
    """
    rng = check_random_state(random_state)
    X_world, y, info = make_temporal_crossmodal(
        n_samples, return_info=True, random_state=rng, **{**CLIP_LIKE_DEFAULTS, **world})
    d = info.n_image_features
    image_features, text_features, time = X_world[:, :d], X_world[:, d:-1], info.time
    X_image, image_projection, image_offset = _to_clip_geometry(
        rng, image_features, n_image_features, offset, embedding_noise)
    X_text, text_projection, text_offset = _to_clip_geometry(
        rng, text_features, n_text_features, offset, embedding_noise)
    X = stack_modalities(X_image, X_text, time)
    if not return_info:
        return X, y
    info.update(
        image_features=image_features, text_features=text_features,
        image_projection=image_projection, text_projection=text_projection,
        image_offset=image_offset, text_offset=text_offset,
        n_image_features=n_image_features, n_text_features=n_text_features,
        offset=offset, embedding_noise=embedding_noise,
    )
    return X, y, info
