"""Synthetic image + text + time data with a known generative model.

:func:`make_temporal_crossmodal` draws a cross-modal collection whose
categories live on different temporal profiles (one-off spikes, recurrent
bursts, steady background), whose items from the same burst share an event
offset, whose image features are stable over time and whose caption wording
changes meaning from one era to the next (and drifts smoothly); optionally
the content of each category drifts too (``content_drift``).  It is the
embedded default data set of the demo and of the tests.  The generative steps
are in :mod:`temporal_xmodal.datasets._synthetic_steps`.
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
    r"""Generate a temporal cross-modal (image + text + time) data set.

    Each item is an image/text pair with a timestamp and a category.  The
    categories follow different temporal profiles, items of the same burst
    share an event-specific offset (so same-category items close in time are
    more alike than far-apart ones), image features are a fixed linear view
    of the item's latent vector and text features are a linear view of the
    latent vector *as worded in the item's era*: caption wording moves
    between categories from one era to the next, so the same caption denotes
    a different category in different eras (no static map undoes this), and
    the text mixing matrix also rotates smoothly with time (wording drift).
    ``content_drift`` makes each category's content itself drift, in both
    modalities.  ``drift=0, meaning_shift=0`` is a static world in which time
    says nothing about how pictures and captions relate; ``TEMPORAL_WORLDS``
    names these settings.

    Read more in the user guide: docs/datasets.md (the story behind the data
    and the full generative model).

    Parameters
    ----------
    n_samples : int, default=2000
        Number of items.  Must be at least ``n_categories``; categories get
        balanced counts (they differ by at most one).
    n_categories : int, default=8
        Number of categories, at least 2.
    n_image_features : int, default=64
        Number of image feature columns.
    n_text_features : int, default=48
        Number of text feature columns.
    n_latent : int, default=16
        Dimension :math:`L` of the shared latent space.
    time_range : tuple of two floats, default=(0.0, 10.0)
        ``(t0, t1)`` with ``t0 < t1``: timestamps are continuous floats in
        this interval, on the user's scale (e.g. fractional years).
    profiles : {"mixed", "spike", "recurrent", "steady"} or list of str, default="mixed"
        Temporal profile of each category.  ``"mixed"`` cycles
        spike, recurrent, steady over the categories (category 0 is a spike,
        1 recurrent, 2 steady, 3 a spike, ...); one profile name gives every
        category that profile; a list gives one name per category.

        - ``"spike"``: one narrow Gaussian burst at a random instant (a
          one-off event).
        - ``"recurrent"``: ``n_recurrences`` evenly spaced bursts (a yearly
          festival); each burst is a separate event.
        - ``"steady"``: uniform over ``time_range`` with no event structure.
    drift : float, default=1.0
        Amount of text wording drift, :math:`\delta \ge 0`.  The text
        mixing matrix rotates by the angle
        :math:`\theta(t) = \delta \frac{\pi}{2} \frac{t - t_0}{t_1 - t_0}`;
        with ``drift=1`` the wording at ``t1`` is unrelated to the wording
        at ``t0``, with ``drift=0`` the text map is static.
    event_strength : float, default=1.0
        Scale :math:`\eta \ge 0` of the event offsets shared by the items
        of one burst (standard deviation :math:`\eta / 2` per latent
        dimension, against 1 for the prototypes).  ``0`` removes the
        within-category temporal structure.
    noise : float, default=0.5
        Standard deviation :math:`\sigma \ge 0` of the i.i.d. Gaussian
        feature noise, relative to the signal: each modality's noiseless
        features are scaled to unit root-mean-square before the noise is
        added.
    label_noise : float, default=0.05
        Fraction :math:`\rho \in [0, 1)` of items whose label is replaced by
        a uniformly random *other* category; exactly
        ``round(label_noise * n_samples)`` items are corrupted.  Their
        features and timestamp still come from their true category
        (``info.category``).
    multilabel : bool, default=False
        If True, ``y`` is an ``(n_samples, n_categories)`` 0/1 indicator
        matrix: every item has its primary category and, with probability
        ``second_label_rate``, a second uniformly drawn other category that
        also contributes to its latent vector.
    n_recurrences : int, default=5
        Number of bursts of a recurrent category within ``time_range``
        (at least 2).
    burst_width : float, default=0.02
        Standard deviation of a burst as a fraction of ``t1 - t0``, in
        ``(0, 0.5]``.  The value in the units of ``time_range`` is
        ``info.burst_std``.
    latent_noise : float, default=0.3
        Standard deviation :math:`\tau \ge 0` of the per-item latent
        scatter around the category prototype (plus event offset).
    topic_drift : float, default=0.0
        Strength :math:`\kappa \ge 0` of a per-category linear drift of the
        text topic (a latent offset seen by the text only).  ``0`` (default)
        keeps all drift in the global wording rotation.
    second_label_rate : float, default=0.3
        Probability that an item gets a second category when
        ``multilabel=True``; ignored otherwise.
    n_eras : int, default=3
        Number :math:`E \ge 1` of eras: equal, contiguous slices of
        ``time_range``.  ``1`` removes the meaning shifts.
    meaning_shift : float, default=1.0
        Fraction :math:`\mu \in [0, 1]` of the categories whose caption
        wording moves at each era boundary: :math:`m =
        \max(2, \mathrm{round}(\mu C))` categories (``0`` moves none) pass
        their wordings round in one cycle.  ``1`` (default): every
        category's wording moves at every boundary.
    content_drift : float, default=0.0
        Amount :math:`\gamma \ge 0` of content drift, seen by both
        modalities, in quarter turns over ``time_range``: category c's
        prototype :math:`\mu_c` turns towards a random partner
        :math:`\nu_c` (orthogonal to it, same norm) by the angle
        :math:`\varphi(t) = \gamma \frac{\pi}{2} \frac{t - t_0}{t_1 - t_0}`,
        :math:`\mu_c(t) = \cos\varphi(t)\, \mu_c + \sin\varphi(t)\, \nu_c`,
        and every item (its picture and its caption) shows
        :math:`\mu_c(t)`.  With ``content_drift=1`` a category's content
        at ``t1`` is orthogonal to its content at ``t0``; ``0`` (default)
        keeps it fixed and draws nothing, so the output is the same as
        without the parameter.  The partners are drawn after every other
        draw: one seed gives the same times, events, noise and labels for
        any ``content_drift``.  Needs ``n_latent >= 2`` when positive.
    return_info : bool, default=False
        If True, also return the ground truth as a :class:`~sklearn.utils.Bunch`.
    random_state : int, RandomState instance or None, default=None
        Seed of the generator; an int gives reproducible output.

    Returns
    -------
    X : ndarray of shape (n_samples, n_image_features + n_text_features + 1)
        ``[image features | text features | time]``, built with
        :func:`temporal_xmodal.stack_modalities`.  Pass
        ``n_image_features=info.n_image_features`` to the estimators.
    y : ndarray of shape (n_samples,) or (n_samples, n_categories)
        Observed integer labels in ``0 .. n_categories - 1`` (after label
        noise), or the 0/1 indicator matrix if ``multilabel=True``; every
        row of the matrix has at least one label.
    info : :class:`~sklearn.utils.Bunch`
        Only if ``return_info=True``: the ground truth (``time``,
        ``category``, ``secondary``, ``event``, ``label_noise_mask``,
        ``latent``, ``theta``, ``era``, ``era_edges``, ``wording``,
        ``meaning_moved``, ``text_category``, ``content_angle``,
        ``content_directions``, ``profiles``, ``prototypes``,
        ``event_category``, ``event_center``, ``event_offset``,
        ``burst_std``, ``image_map``, ``text_maps``, ``n_image_features``,
        ``n_text_features``, ``time_range``), each described in
        docs/datasets.md.

    Raises
    ------
    ValueError
        If a parameter is out of its range, ``n_samples < n_categories``,
        ``time_range`` is not increasing, ``profiles`` names an unknown
        profile or has the wrong length, or ``content_drift > 0`` with
        ``n_latent=1``.
    TypeError
        If a parameter has the wrong type, or ``time_range`` is not a pair.

    See Also
    --------
    temporal_xmodal.stack_modalities : The column layout of ``X``.
    temporal_xmodal.datasets.TEMPORAL_WORLDS : Named worlds (keyword arguments
        of this function), each with its own kind of change over time.

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
