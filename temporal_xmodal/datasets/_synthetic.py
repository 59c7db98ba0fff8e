"""Synthetic image + text + time data with a known generative model.

:func:`make_temporal_crossmodal`; its steps are in :mod:`._synthetic_steps`.  Read more in
docs/datasets.md.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import Bunch, check_random_state
from sklearn.utils._param_validation import (
    StrOptions,
    validate_parameter_constraints,
    validate_params,
)

from .._constraints import Interval
from .._stacking import stack_modalities
from ._synthetic_steps import (
    PROFILES,
    add_noise,
    assign_events,
    balanced_counts,
    draw_bursts,
    draw_content_directions,
    draw_times,
    draw_wordings,
    make_labels,
    profile_list,
    prototypes_at,
)

__all__ = ["make_temporal_crossmodal"]

# Scale of the event offsets relative to the (unit-variance) prototypes when
# ``event_strength=1`` and weight of the secondary prototype of a two-label
# item: fixed constants of the generative model (docs/datasets.md).
_EVENT_SCALE = 0.5
_SECOND_WEIGHT = 0.5

_NON_NEGATIVE = [Interval(Real, 0, None, closed="left")]
_FRACTION = [Interval(Real, 0, 1, closed="both")]
_FINITE = [Interval(Real, None, None, closed="neither")]


def _time_range(time_range):
    """``(t0, t1)`` as floats: a pair of finite numbers with ``t0 < t1``."""
    if len(time_range) != 2:
        raise TypeError(f"time_range must be a pair (t0, t1) of numbers; got {time_range!r}.")
    t0, t1 = time_range
    validate_parameter_constraints({"time_range[0]": _FINITE, "time_range[1]": _FINITE},
                                   {"time_range[0]": t0, "time_range[1]": t1},
                                   caller_name="make_temporal_crossmodal")
    if not t0 < t1:
        raise ValueError(f"time_range must be increasing (t0 < t1); got ({t0}, {t1}).")
    return float(t0), float(t1)


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "n_categories": [Interval(Integral, 2, None, closed="left")],
        "n_image_features": [Interval(Integral, 1, None, closed="left")],
        "n_text_features": [Interval(Integral, 1, None, closed="left")],
        "n_latent": [Interval(Integral, 1, None, closed="left")],
        "time_range": ["array-like"],
        "profiles": [StrOptions({"mixed", *PROFILES}), "array-like"],
        "drift": _NON_NEGATIVE,
        "event_strength": _NON_NEGATIVE,
        "noise": _NON_NEGATIVE,
        "label_noise": [Interval(Real, 0, 1, closed="left")],
        "multilabel": ["boolean"],
        "n_recurrences": [Interval(Integral, 2, None, closed="left")],
        "burst_width": [Interval(Real, 0, 0.5, closed="right")],
        "latent_noise": _NON_NEGATIVE,
        "topic_drift": _NON_NEGATIVE,
        "second_label_rate": _FRACTION,
        "n_eras": [Interval(Integral, 1, None, closed="left")],
        "meaning_shift": _FRACTION,
        "content_drift": _NON_NEGATIVE,
        "return_info": ["boolean"],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_temporal_crossmodal(
    n_samples=2000,
    *,
    n_categories=8,
    n_image_features=64,
    n_text_features=48,
    n_latent=16,
    time_range=(0.0, 10.0),
    profiles="mixed",
    drift=1.0,
    event_strength=1.0,
    noise=0.5,
    label_noise=0.05,
    multilabel=False,
    n_recurrences=5,
    burst_width=0.02,
    latent_noise=0.3,
    topic_drift=0.0,
    second_label_rate=0.3,
    n_eras=3,
    meaning_shift=1.0,
    content_drift=0.0,
    return_info=False,
    random_state=None,
):
    r"""Generate a temporal cross-modal (image + text + time) data set with a known ground truth.

    Each item is an image/text pair with a time and a category.  Categories follow temporal
    profiles; the items of one burst share an event offset; image features are a fixed linear view
    of the item's latent vector; text features view it *as worded in the item's era* (wordings pass
    between categories at era boundaries, so a caption's category needs its date) through a map
    that rotates with time (wording drift); ``content_drift`` turns each category's content in both
    modalities. ``drift=0, meaning_shift=0`` is a static world. The generative model and every
    ``info`` field are in docs/datasets.md.

    Parameters
    ----------
    n_samples : int, default=2000
        Number of items, at least ``n_categories``; category counts differ by at most one.
    n_categories : int, default=8
        Number of categories :math:`C \ge 2`.
    n_image_features : int, default=64
        Image feature columns.
    n_text_features : int, default=48
        Text feature columns.
    n_latent : int, default=16
        Dimension :math:`L` of the shared latent space.
    time_range : tuple of two floats, default=(0.0, 10.0)
        ``(t0, t1)``, ``t0 < t1``: times are floats in this interval, on the user's scale.
    profiles : {"mixed", "spike", "recurrent", "steady"} or list of str, default="mixed"
        One for every category or one per category; ``"mixed"`` cycles ``"spike"`` (one burst at a
        random instant), ``"recurrent"`` (``n_recurrences`` evenly spaced bursts) and ``"steady"``
        (uniform times, no events).
    drift : float, default=1.0
        Wording drift :math:`\delta \ge 0`: the text map turns by :math:`\delta \pi / 2` over
        ``time_range``.
    event_strength : float, default=1.0
        Scale :math:`\eta \ge 0` of the burst offsets (std :math:`\eta / 2` per latent dimension).
    noise : float, default=0.5
        Std :math:`\sigma \ge 0` of the feature noise, relative to the unit-RMS signal.
    label_noise : float, default=0.05
        Fraction :math:`\rho \in [0, 1)`: exactly ``round(label_noise * n_samples)`` labels
        replaced by another category (features and time stay ``info.category``'s).
    multilabel : bool, default=False
        ``y`` as a 0/1 indicator; an item has a second category (in its latent vector too) with
        probability ``second_label_rate``.
    n_recurrences : int, default=5
        Bursts of a recurrent category (at least 2).
    burst_width : float, default=0.02
        Burst std as a fraction of ``t1 - t0``, in (0, 0.5] (``info.burst_std``: in time units).
    latent_noise : float, default=0.3
        Std :math:`\tau \ge 0` of the per-item latent scatter.
    topic_drift : float, default=0.0
        Strength :math:`\kappa \ge 0` of a per-category linear drift of the text topic (text only).
    second_label_rate : float, default=0.3
        Probability of a second category with ``multilabel=True``.
    n_eras : int, default=3
        Number :math:`E \ge 1` of equal eras of ``time_range`` (``1``: no meaning shift).
    meaning_shift : float, default=1.0
        Fraction :math:`\mu \in [0, 1]` of the categories passing their wordings round (one cycle)
        at each era boundary: :math:`\max(2, \mathrm{round}(\mu C))`, or none for ``0``.
    content_drift : float, default=0.0
        Content drift :math:`\gamma \ge 0`: each category's prototype turns by
        :math:`\gamma \pi / 2` over ``time_range`` towards a random orthogonal partner of equal
        norm, in both modalities. Drawn last (a seed gives the same times, events, noise and labels
        for any value; ``0`` draws nothing). Needs ``n_latent >= 2``.
    return_info : bool, default=False
        Also return the ground truth.
    random_state : int, RandomState instance or None, default=None
        Seed; an int gives reproducible output.

    Returns
    -------
    X : ndarray of shape (n_samples, n_image_features + n_text_features + 1)
        ``[image | text | time]`` (:func:`temporal_xmodal.stack_modalities`); pass
        ``n_image_features=info.n_image_features`` to the estimators.
    y : ndarray of shape (n_samples,) or (n_samples, n_categories)
        Labels after label noise, or the indicator matrix (every row with at least one label).
    info : sklearn.utils.Bunch
        With ``return_info``: ``time``, ``category``, ``secondary``, ``event``,
        ``label_noise_mask``, ``latent``, ``theta``, ``era``, ``era_edges``, ``wording``,
        ``meaning_moved``, ``text_category``, ``content_angle``, ``content_directions``,
        ``profiles``, ``prototypes``, ``event_category``, ``event_center``, ``event_offset``,
        ``burst_std``, ``image_map``, ``text_maps``, ``n_image_features``, ``n_text_features``,
        ``time_range``.

    Raises
    ------
    ValueError
        On a parameter out of range, ``n_samples < n_categories``, a ``time_range`` not increasing,
        an unknown or miscounted ``profiles``, or ``content_drift > 0`` with ``n_latent=1``.
    TypeError
        On a parameter of the wrong type, or a ``time_range`` that is not a pair.

    See Also
    --------
    temporal_xmodal.datasets.TEMPORAL_WORLDS : Named worlds (keyword arguments of this function).

    Examples
    --------
    >>> from temporal_xmodal.datasets import make_temporal_crossmodal
    >>> X, y, info = make_temporal_crossmodal(
    ...     n_samples=300, n_categories=6, return_info=True, random_state=0)
    >>> X.shape, y.shape
    ((300, 113), (300,))
    >>> info.n_image_features
    64
    >>> info.profiles[:3]
    ['spike', 'recurrent', 'steady']
    >>> bool((X[:, -1] == info.time).all())
    True
    >>> int((y != info.category).sum())  # exactly round(0.05 * 300) noisy labels
    15
    """
    if n_samples < n_categories:
        raise ValueError(
            f"n_samples must be >= n_categories so that every category has an item; got "
            f"n_samples={n_samples} < n_categories={n_categories}.")
    t0, t1 = _time_range(time_range)
    profiles = profile_list(profiles, n_categories)
    if content_drift > 0 and n_latent < 2:
        raise ValueError("content_drift > 0 turns each prototype in a plane and needs "
                         f"n_latent >= 2; got n_latent={n_latent}.")
    rng = check_random_state(random_state)
    n, C, L = n_samples, n_categories, n_latent
    span = t1 - t0

    # Structure shared by all items.
    prototypes = rng.standard_normal((C, L))
    image_map = rng.standard_normal((L, n_image_features)) / np.sqrt(L)
    text_maps = rng.standard_normal((2, L, n_text_features)) / np.sqrt(L)
    topic_dirs = rng.standard_normal((C, L))
    event_category, event_center = draw_bursts(
        rng, profiles, t0, span, n_recurrences
    )
    event_offset = (
        _EVENT_SCALE * event_strength * rng.standard_normal((len(event_category), L))
    )
    burst_std = burst_width * span

    # Items: category, burst, time.
    category = rng.permutation(balanced_counts(rng, n, C))
    event = assign_events(rng, category, event_category)
    time = draw_times(rng, event, event_center, burst_std, t0, t1)

    secondary = np.full(n, -1)
    if multilabel:
        has_second = rng.random(n) < second_label_rate
        other = (category + rng.randint(1, C, size=n)) % C
        secondary[has_second] = other[has_second]

    # Eras and the wording each category uses in each era (drawn only when
    # some wording moves, so static settings keep the random stream).
    n_moving = 0 if meaning_shift == 0 else max(2, round(meaning_shift * C))
    wording, meaning_moved = draw_wordings(rng, C, n_eras, n_moving)
    era_edges = t0 + span * np.arange(n_eras + 1) / n_eras
    era = np.minimum(((time - t0) * n_eras / span).astype(int), n_eras - 1)
    text_category = wording[era, category]

    # The other draws, in stream order: latent scatter, image and text noise,
    # labels, then (only if content drifts) the content directions, so that
    # content_drift changes nothing else a seed draws.
    scatter = rng.standard_normal((n, L))
    image_noise = rng.standard_normal((n, n_image_features))
    text_noise = rng.standard_normal((n, n_text_features))
    y, noisy = make_labels(rng, category, secondary, C, label_noise, multilabel)
    content_dirs = draw_content_directions(rng, prototypes) if content_drift > 0 else None
    progress = (time - t0) / span
    content_angle = content_drift * (np.pi / 2) * progress

    def content(categories, rows):
        """mu_c(t_i) of the given categories at the times of the given rows."""
        return prototypes_at(prototypes, content_dirs, categories, content_angle[rows])

    # Latent vectors; the appended zero row makes event == -1 a zero offset.
    every = slice(None)
    has_second = secondary >= 0
    offsets = np.vstack([event_offset, np.zeros((1, L))])
    latent = content(category, every) + offsets[event]
    latent += latent_noise * scatter
    latent[has_second] += _SECOND_WEIGHT * content(secondary[has_second], has_second)

    # Image: fixed map.  Text: the era's wordings, rotating map, topic drift.
    X_image = add_noise(latent @ image_map, noise, image_noise)
    text_latent = latent + content(text_category, every) - content(category, every)
    second_words = wording[era[has_second], secondary[has_second]]
    text_latent[has_second] += _SECOND_WEIGHT * (
        content(second_words, has_second) - content(secondary[has_second], has_second))
    theta = drift * (np.pi / 2) * progress
    text_latent += topic_drift * (2 * progress - 1)[:, None] * topic_dirs[category]
    text_signal = np.cos(theta)[:, None] * (text_latent @ text_maps[0])
    text_signal += np.sin(theta)[:, None] * (text_latent @ text_maps[1])
    X_text = add_noise(text_signal, noise, text_noise)

    X = stack_modalities(X_image, X_text, time)
    if not return_info:
        return X, y
    info = Bunch(
        time=time,
        category=category,
        secondary=secondary,
        event=event,
        label_noise_mask=noisy,
        latent=latent,
        theta=theta,
        era=era,
        era_edges=era_edges,
        wording=wording,
        meaning_moved=meaning_moved,
        text_category=text_category,
        content_angle=content_angle,
        content_directions=content_dirs,
        profiles=list(profiles),
        prototypes=prototypes,
        event_category=event_category,
        event_center=event_center,
        event_offset=event_offset,
        burst_std=burst_std,
        image_map=image_map,
        text_maps=text_maps,
        n_image_features=n_image_features,
        n_text_features=n_text_features,
        time_range=(t0, t1),
    )
    return X, y, info
