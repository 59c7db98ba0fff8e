"""Synthetic image + text + time data with a known generative model.

:func:`make_temporal_crossmodal` draws a cross-modal collection whose
categories live on different temporal profiles (one-off spikes, recurrent
bursts, steady background), whose items from the same burst share an event
offset, whose image features are stable over time and whose caption wording
changes meaning from one era to the next (and drifts smoothly).  It is the
embedded default data set of the demo and of the tests.
"""

import numpy as np
from scipy.special import ndtr, ndtri
from sklearn.utils import Bunch, check_random_state

from temporal_xmodal._layout import stack_modalities

from ._synthetic_params import validate_params as _validate

__all__ = ["make_temporal_crossmodal"]

# Scale of the event offsets relative to the (unit-variance) prototypes when
# ``event_strength=1`` and weight of the secondary prototype of a two-label
# item.  Fixed constants of the generative model, documented in the Notes.
_EVENT_SCALE = 0.5
_SECOND_WEIGHT = 0.5


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

    **The story.**  The collection is a newspaper picture archive spanning
    ``n_eras`` eras (equal slices of ``time_range``, e.g. decades).  A
    photograph of a given kind of scene looks the same in every era: image
    features are stable.  Caption writers draw on a stock of phrases whose
    meaning is not fixed: when an era ends, phrases move on to another
    kind of scene (*broadcast* went from sowing a field to radio, *the
    front* from a seaside promenade to a battle line, *a liner* from a
    ruled line to an ocean steamer).  Here every category has, in each era,
    the wording that category :math:`w_e(c)` had in the first era; at each
    era boundary a random ``meaning_shift`` fraction of the categories pass
    their wordings round among themselves in one cycle (none keeps its own),
    the others keep theirs.  The stock of category wordings never changes,
    only who uses it, so nothing in a routine caption tells which meaning it
    has but its date: a text-to-category reader or an image-to-text map must
    depend on the era.  Items of one burst share event-specific words (the
    event offset, also seen in their pictures), which let a reader who saw
    the event recognise its captions whatever their wording; routine
    captions (steady categories) have no such clue.  The rotation of the
    writing style (``drift``) comes on top and partly dates a caption by its
    style, as does the per-category topic drift (``topic_drift``).
    ``drift=0, meaning_shift=0`` (with the default ``topic_drift=0``) is a
    static world in which time says nothing about how pictures and captions
    relate (the categories' time profiles and burst offsets remain).  The
    full generative model is given in the Notes.

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
        at ``t0``, with ``drift=0`` the data are static.
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
        ``(0, 0.5]``.  The value in time units is ``info.burst_std``.
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
        ``time_range`` (era :math:`e` covers
        :math:`[t_0 + eT/E,\, t_0 + (e+1)T/E)`, in the time units of
        ``time_range``).  ``1`` removes the meaning shifts.
    meaning_shift : float, default=1.0
        Fraction :math:`\mu \in [0, 1]` of the categories whose caption
        wording moves at each era boundary: :math:`m =
        \max(2, \mathrm{round}(\mu C))` categories (``0`` moves none) pass
        their wordings round in one cycle.  ``1`` (default): every
        category's wording moves at every boundary; ``0`` keeps every
        wording in every era.
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
        Only if ``return_info=True``.  Fields:

        - ``time`` (n_samples,): timestamps (the last column of ``X``).
        - ``category`` (n_samples,): true primary category, before label
          noise.
        - ``secondary`` (n_samples,): second true category, ``-1`` if none
          (always ``-1`` unless ``multilabel=True``).
        - ``event`` (n_samples,): global id of the burst (occurrence) the
          item comes from, ``-1`` for steady categories.
        - ``label_noise_mask`` (n_samples,): True where the label was
          corrupted.
        - ``latent`` (n_samples, n_latent): the latent vectors :math:`z_i`.
        - ``theta`` (n_samples,): wording rotation angle :math:`\theta(t_i)`.
        - ``era`` (n_samples,): era :math:`e_i` of each item, ``0 .. n_eras - 1``.
        - ``era_edges`` (n_eras + 1,): era boundaries, from ``t0`` to ``t1``.
        - ``wording`` (n_eras, n_categories): :math:`w_e(c)`, the category
          whose first-era wording category ``c`` uses in era ``e`` (row 0 is
          ``0 .. C - 1``).
        - ``meaning_moved`` (n_eras, n_categories): True where category
          ``c``'s wording changed at the start of era ``e`` (row 0 all
          False).
        - ``text_category`` (n_samples,): :math:`w_{e_i}(c_i)`, the category
          the caption's words denote in the first era.
        - ``profiles``: list of the profile name of each category.
        - ``prototypes`` (n_categories, n_latent): :math:`\mu_c`.
        - ``event_category``, ``event_center`` (n_events,): category and
          centre time of each burst; ``event_offset`` (n_events, n_latent).
        - ``burst_std``: burst standard deviation in time units.
        - ``image_map`` (n_latent, n_image_features): :math:`A`;
          ``text_maps`` (2, n_latent, n_text_features): :math:`B_0, B_1`.
        - ``n_image_features``, ``n_text_features``, ``time_range``.

    See Also
    --------
    temporal_xmodal.stack_modalities : The column layout of ``X``.

    Notes
    -----
    Let :math:`T = t_1 - t_0`, :math:`L` = ``n_latent``, :math:`C` =
    ``n_categories``.  Structure (drawn once):

    .. math::

        \mu_c \sim \mathcal N(0, I_L), \qquad
        A, B_0, B_1 \text{ with i.i.d. } \mathcal N(0, 1/L) \text{ entries},
        \qquad u_c \sim \mathcal N(0, I_L).

    **Bursts.**  A spike category has one burst centred at
    :math:`m \sim U(t_0 + 0.1T,\, t_1 - 0.1T)`; a recurrent category has
    :math:`R` = ``n_recurrences`` bursts centred at
    :math:`m_r = t_0 + (r + \tfrac12 + \phi_c) T / R`, :math:`r = 0..R-1`,
    with a per-category phase :math:`\phi_c \sim U(-\tfrac14, \tfrac14)`.
    Every burst :math:`k` (an *event*) has an offset
    :math:`e_k \sim \mathcal N(0, (\eta/2)^2 I_L)`.  Steady categories have
    no bursts and no event offset (their only temporal variation is the
    text drift below).

    **Items.**  Category counts are balanced and the order is shuffled.  An
    item :math:`i` of a spike or recurrent category :math:`c` picks one of
    the category's bursts :math:`k_i` uniformly and
    :math:`t_i \sim \mathcal N(m_{k_i}, s^2)` truncated to
    :math:`[t_0, t_1]`, :math:`s` = ``burst_width`` :math:`\cdot T`; an item
    of a steady category has :math:`t_i \sim U(t_0, t_1)` and
    :math:`e_{k_i} := 0`.  Its latent vector is

    .. math::

        z_i = \mu_{c_i} + e_{k_i} + \tfrac12 \mu_{c'_i} + \tau \xi_i,
        \qquad \xi_i \sim \mathcal N(0, I_L),

    where the :math:`\tfrac12 \mu_{c'_i}` term is present only for
    multilabel items with a second category :math:`c'_i`.

    **Image features** (stable over time):
    :math:`x^V_i = A^\top z_i / s_V + \sigma \varepsilon_i`.

    **Eras and wordings.**  Item :math:`i` lies in era
    :math:`e_i = \min(\lfloor E (t_i - t_0) / T \rfloor, E - 1)`.
    :math:`w_0(c) = c`; at each boundary :math:`e \ge 1`, a uniformly drawn
    set :math:`\{c_1, \dots, c_m\}` of categories (in random order) takes
    :math:`w_e(c_j) = w_{e-1}(c_{j-1})` (indices mod :math:`m`, a single
    cycle), every other category keeps :math:`w_e(c) = w_{e-1}(c)`.  The
    caption's latent vector swaps the category prototypes for the era's
    wordings:

    .. math::

        z^T_i = z_i - \mu_{c_i} + \mu_{w_{e_i}(c_i)}
        - \tfrac12 \mu_{c'_i} + \tfrac12 \mu_{w_{e_i}(c'_i)}.

    **Text features** (wording drifts):

    .. math::

        \theta(t) = \delta \frac{\pi}{2} \frac{t - t_0}{T}, \qquad
        B(t) = \cos\theta(t)\, B_0 + \sin\theta(t)\, B_1,

        \tilde z_i = z^T_i + \kappa \left(2 \frac{t_i - t_0}{T} - 1\right)
        u_{c_i}, \qquad
        x^T_i = B(t_i)^\top \tilde z_i / s_T + \sigma \varepsilon'_i.

    :math:`B(t)` has the same entry distribution for every :math:`t`, so
    the text scale does not change with time, but a linear image-to-text
    map fitted at :math:`t` degrades as :math:`|\theta(t') - \theta(t)|`
    grows.  A moved wording defeats any static map outright: the same
    caption direction :math:`B^\top \mu_j` denotes category :math:`c` with
    :math:`w_e(c) = j`, a different one in each era where :math:`j` moved,
    so a text-to-category probe fitted per era is right where a single one
    must be wrong on all but one of those eras.  :math:`s_V, s_T` are the root-mean-square values of the
    noiseless features over the sample, so both modalities have unit
    signal scale; :math:`\varepsilon, \varepsilon'` are standard normal.

    **Labels.**  :math:`y_i = c_i` (or the indicator of
    :math:`\{c_i, c'_i\}`), then exactly :math:`\mathrm{round}(\rho n)`
    random items have their primary label replaced by a uniformly random
    category outside their true label set (if no such category exists --
    only possible with two categories and two labels -- the primary label
    is dropped, leaving the second one).

    Consequences: same-category items of one burst are close in time and
    in feature space, which gives the time-window relevance
    (same category and :math:`|\Delta t| \le w`) learnable structure; the
    per-category time densities are narrow (spike), multi-modal
    (recurrent) or flat (steady), which exercises recency and per-category
    KDE correlations.

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
    p = _validate(locals())
    rng = check_random_state(random_state)
    n, C, L = p["n_samples"], p["n_categories"], p["n_latent"]
    t0, t1 = p["time_range"]
    span = t1 - t0
    profile_list = p["profiles"]
    n_image_features, n_text_features = p["n_image_features"], p["n_text_features"]
    drift, event_strength, noise = p["drift"], p["event_strength"], p["noise"]
    latent_noise, topic_drift = p["latent_noise"], p["topic_drift"]
    burst_width, label_noise = p["burst_width"], p["label_noise"]
    n_eras = p["n_eras"]

    # Structure shared by all items.
    prototypes = rng.standard_normal((C, L))
    image_map = rng.standard_normal((L, n_image_features)) / np.sqrt(L)
    text_maps = rng.standard_normal((2, L, n_text_features)) / np.sqrt(L)
    topic_dirs = rng.standard_normal((C, L))
    event_category, event_center = _draw_bursts(
        rng, profile_list, t0, span, p["n_recurrences"]
    )
    event_offset = (
        _EVENT_SCALE * event_strength * rng.standard_normal((len(event_category), L))
    )
    burst_std = burst_width * span

    # Items: category, burst, time.
    category = rng.permutation(_balanced_counts(rng, n, C))
    event = _assign_events(rng, category, event_category)
    time = _draw_times(rng, event, event_center, burst_std, t0, t1)

    secondary = np.full(n, -1)
    if multilabel:
        has_second = rng.random(n) < second_label_rate
        other = (category + rng.randint(1, C, size=n)) % C
        secondary[has_second] = other[has_second]

    # Eras and the wording each category uses in each era (drawn only when
    # some wording moves, so static settings keep the random stream).
    n_moving = 0 if p["meaning_shift"] == 0 else max(2, round(p["meaning_shift"] * C))
    wording, meaning_moved = _draw_wordings(rng, C, n_eras, n_moving)
    era_edges = t0 + span * np.arange(n_eras + 1) / n_eras
    era = np.minimum(((time - t0) * n_eras / span).astype(int), n_eras - 1)
    text_category = wording[era, category]

    # Latent vectors; the appended zero row makes event == -1 a zero offset.
    offsets = np.vstack([event_offset, np.zeros((1, L))])
    latent = prototypes[category] + offsets[event]
    latent += latent_noise * rng.standard_normal((n, L))
    has_second = secondary >= 0
    latent[has_second] += _SECOND_WEIGHT * prototypes[secondary[has_second]]

    # Image: fixed map.  Text: the era's wordings, rotating map, topic drift.
    X_image = _add_noise(rng, latent @ image_map, noise)
    text_latent = latent + prototypes[text_category] - prototypes[category]
    second_words = wording[era[has_second], secondary[has_second]]
    text_latent[has_second] += _SECOND_WEIGHT * (
        prototypes[second_words] - prototypes[secondary[has_second]])
    progress = (time - t0) / span
    theta = drift * (np.pi / 2) * progress
    text_latent += topic_drift * (2 * progress - 1)[:, None] * topic_dirs[category]
    text_signal = np.cos(theta)[:, None] * (text_latent @ text_maps[0])
    text_signal += np.sin(theta)[:, None] * (text_latent @ text_maps[1])
    X_text = _add_noise(rng, text_signal, noise)

    y, noisy = _make_labels(rng, category, secondary, C, label_noise, multilabel)
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
        profiles=list(profile_list),
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


# --------------------------------------------------------------------------
# Generative steps
# --------------------------------------------------------------------------


def _draw_bursts(rng, profile_list, t0, span, n_recurrences):
    """Category and centre time of every burst (event), in category order."""
    categories, centers = [], []
    for c, profile in enumerate(profile_list):
        if profile == "spike":
            c_centers = [rng.uniform(t0 + 0.1 * span, t0 + 0.9 * span)]
        elif profile == "recurrent":
            phase = rng.uniform(-0.25, 0.25)
            slots = np.arange(n_recurrences) + 0.5 + phase
            c_centers = t0 + slots * span / n_recurrences
        else:  # steady: no bursts
            continue
        categories.extend([c] * len(c_centers))
        centers.extend(c_centers)
    return np.asarray(categories, dtype=int), np.asarray(centers, dtype=float)


def _draw_wordings(rng, n_categories, n_eras, n_moving):
    """Wording w_e(c) of every category in every era, and where it moved.

    At each era boundary ``n_moving`` distinct categories, in random order,
    take the previous wording of their predecessor in that order (one cycle,
    so none keeps its own); ``n_moving < 2`` moves nothing.
    """
    wording = np.tile(np.arange(n_categories), (n_eras, 1))
    moved = np.zeros((n_eras, n_categories), dtype=bool)
    for e in range(1, n_eras):
        wording[e] = wording[e - 1]
        if n_moving >= 2:
            cycle = rng.choice(n_categories, n_moving, replace=False)
            wording[e, cycle] = wording[e - 1, np.roll(cycle, 1)]
            moved[e, cycle] = True
    return wording, moved


def _balanced_counts(rng, n, n_categories):
    """Category of each item (sorted), counts differing by at most one."""
    counts = np.full(n_categories, n // n_categories)
    counts[rng.choice(n_categories, n % n_categories, replace=False)] += 1
    return np.repeat(np.arange(n_categories), counts)


def _assign_events(rng, category, event_category):
    """Pick one burst of the item's category uniformly; -1 for steady ones."""
    event = np.full(category.shape[0], -1)
    for c in np.unique(event_category):
        ids = np.flatnonzero(event_category == c)
        items = np.flatnonzero(category == c)
        event[items] = ids[rng.randint(len(ids), size=len(items))]
    return event


def _draw_times(rng, event, event_center, burst_std, t0, t1):
    """Truncated-normal times around the burst centre, uniform for steady."""
    time = rng.uniform(t0, t1, size=event.shape[0])
    in_burst = event >= 0
    mean = event_center[event[in_burst]]
    time[in_burst] = _truncated_normal(rng, mean, burst_std, t0, t1)
    return time


def _truncated_normal(rng, mean, std, low, high):
    """Vectorised inverse-CDF sampling of N(mean, std^2) restricted to [low, high]."""
    lo = ndtr((low - mean) / std)
    hi = ndtr((high - mean) / std)
    u = lo + (hi - lo) * rng.random(np.shape(mean))
    return np.clip(mean + std * ndtri(u), low, high)


def _add_noise(rng, signal, noise):
    """Scale the signal to unit RMS and add N(0, noise^2) feature noise."""
    rms = np.sqrt(np.mean(signal**2))
    if rms > 0:
        signal = signal / rms
    return signal + noise * rng.standard_normal(signal.shape)


def _make_labels(rng, category, secondary, n_categories, label_noise, multilabel):
    """Observed labels after replacing exactly round(rho * n) primary labels."""
    n = category.shape[0]
    noisy_idx = rng.choice(n, int(round(label_noise * n)), replace=False)
    noisy = np.zeros(n, dtype=bool)
    noisy[noisy_idx] = True
    if not multilabel:
        y = category.copy()
        shift = rng.randint(1, n_categories, size=noisy_idx.shape[0])
        y[noisy_idx] = (category[noisy_idx] + shift) % n_categories
        return y, noisy

    Y = np.zeros((n, n_categories), dtype=int)
    Y[np.arange(n), category] = 1
    has_second = secondary >= 0
    Y[np.flatnonzero(has_second), secondary[has_second]] = 1
    # Uniform choice among the categories outside the true label set.
    allowed = Y[noisy_idx] == 0
    scores = np.where(allowed, rng.random(allowed.shape), -1.0)
    replacement = scores.argmax(axis=1)
    Y[noisy_idx, category[noisy_idx]] = 0
    ok = allowed.any(axis=1)
    Y[noisy_idx[ok], replacement[ok]] = 1
    return Y, noisy
