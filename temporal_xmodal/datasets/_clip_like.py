"""A synthetic world in the geometry of CLIP embeddings (:func:`make_clip_like`).

Read more in docs/datasets.md ("make_clip_like: a CLIP-like world").
"""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import validate_params

from .._constraints import Interval
from .._stacking import stack_modalities
from ._synthetic import make_temporal_crossmodal

__all__ = ["make_clip_like"]

#: The world :func:`make_clip_like` draws by default (keyword arguments of
#: :func:`make_temporal_crossmodal`, overridden by the caller's ``**world``).
CLIP_LIKE_DEFAULTS = {"n_categories": 12, "drift": 0.0, "meaning_shift": 0.5}


def _to_clip_geometry(rng, features, n_features, offset, noise):
    """One modality's features in CLIP geometry, with the map and the offset.

    A random Gaussian map scaled to unit RMS row norm, a shared offset of norm ``offset``,
    isotropic noise of expected norm ``noise``, then unit rows.
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

    Draws a world of :func:`make_temporal_crossmodal` (by default 12 categories over 3 eras, half
    of which pass their caption wordings round at each era boundary; stable pictures) and maps each
    modality's features :math:`f_i` into CLIP geometry, independently per modality:

    .. math::

        x_i = \frac{s_i + o + \sigma_E \varepsilon_i}
                   {\lVert s_i + o + \sigma_E \varepsilon_i \rVert},
        \qquad s_i = P^\top f_i / r,
        \quad \varepsilon_i \sim \mathcal{N}(0, I_D / D),

    with :math:`P` a random Gaussian map to :math:`D` columns, :math:`r` the RMS norm of
    :math:`P^\top f_i` (unit signal), :math:`o` the modality's shared offset (norm ``offset``, a
    random direction per modality: the modality gap) and :math:`\sigma_E` = ``embedding_noise``.
    Two items of one modality have a mean cosine of about
    :math:`\lVert o \rVert^2 / (\lVert o \rVert^2 + 1 + \sigma_E^2)`, an image and a caption about
    zero. Read more in docs/datasets.md.

    Parameters
    ----------
    n_samples : int, default=10000
        Number of items (at least the number of categories).
    n_image_features : int, default=512
        Width :math:`D` of the image embeddings.
    n_text_features : int, default=512
        Width of the text embeddings.
    offset : float, default=3.0
        Norm of each modality's shared offset, relative to the unit signal (``0``: none).
    embedding_noise : float, default=2.0
        Expected norm :math:`\sigma_E \ge 0` of the isotropic noise, relative to the unit signal.
    return_info : bool, default=False
        Also return the ground truth.
    random_state : int, RandomState instance or None, default=None
        Seed; an int gives reproducible output.  The world is drawn first, from the same stream.
    **world
        Keyword arguments of :func:`make_temporal_crossmodal` (but ``n_image_features``,
        ``n_text_features``, ``return_info`` and ``random_state``), over the default world
        ``n_categories=12, drift=0.0, meaning_shift=0.5``; validated by the generator.

    Returns
    -------
    X : ndarray of shape (n_samples, n_image_features + n_text_features + 1)
        ``[image embeddings | text embeddings | time]``, every embedding of unit norm.
    y : ndarray of shape (n_samples,) or (n_samples, n_categories)
        The generator's labels (label noise included).
    info : sklearn.utils.Bunch
        With ``return_info``: the generator's ground truth (``n_image_features`` and
        ``n_text_features`` the embedding widths) plus ``image_features`` and ``text_features``
        (:math:`f_i`), ``image_projection`` and ``text_projection`` (:math:`P / r`),
        ``image_offset`` and ``text_offset`` (:math:`o`), ``offset`` and ``embedding_noise``.

    Raises
    ------
    ValueError
        If a parameter is out of its range (the world's included).
    TypeError
        If a parameter has the wrong type, or ``world`` names an unknown parameter.

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
