"""The generative steps of :func:`~temporal_xmodal.datasets.make_temporal_crossmodal`.

Each step draws one part of the model from the generator's random state, in the order the
public function calls them, trusting the parameters it validated (docs/datasets.md).
"""

import numpy as np
from scipy.special import ndtr, ndtri

#: Temporal profiles of a category, in the order ``profiles="mixed"`` cycles them.
PROFILES = ("spike", "recurrent", "steady")


def profile_list(profiles, n_categories):
    """The profile name of each category."""
    if isinstance(profiles, str):
        if profiles == "mixed":
            return [PROFILES[c % len(PROFILES)] for c in range(n_categories)]
        return [profiles] * n_categories
    names = list(profiles)
    if len(names) != n_categories:
        raise ValueError(
            f"profiles must have one entry per category ({n_categories}); got {len(names)}.")
    bad = [name for name in names if not isinstance(name, str) or name not in PROFILES]
    if bad:
        raise ValueError(f"Unknown profile name(s) {bad!r}; valid names are {list(PROFILES)} "
                         "(or 'mixed' for all categories).")
    return names


def draw_bursts(rng, profile_names, t0, span, n_recurrences):
    """Category and centre time of every burst (event), in category order."""
    categories, centers = [], []
    for c, profile in enumerate(profile_names):
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


def draw_wordings(rng, n_categories, n_eras, n_moving):
    """Wording w_e(c) of every category in every era, and where it moved.

    At each era boundary ``n_moving`` distinct categories, in random order, take their
    predecessor's previous wording (one cycle); ``n_moving < 2`` moves nothing.
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


def balanced_counts(rng, n, n_categories):
    """Category of each item (sorted), counts differing by at most one."""
    counts = np.full(n_categories, n // n_categories)
    counts[rng.choice(n_categories, n % n_categories, replace=False)] += 1
    return np.repeat(np.arange(n_categories), counts)


def assign_events(rng, category, event_category):
    """Pick one burst of the item's category uniformly; -1 for steady ones."""
    event = np.full(category.shape[0], -1)
    for c in np.unique(event_category):
        ids = np.flatnonzero(event_category == c)
        items = np.flatnonzero(category == c)
        event[items] = ids[rng.randint(len(ids), size=len(items))]
    return event


def draw_times(rng, event, event_center, burst_std, t0, t1):
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


def draw_content_directions(rng, prototypes):
    """Partner nu_c of every prototype mu_c: random, orthogonal to it, same norm (needs L >= 2)."""
    directions = rng.standard_normal(prototypes.shape)
    sq_norm = np.sum(prototypes**2, axis=1)
    directions -= (np.sum(directions * prototypes, axis=1) / sq_norm)[:, None] * prototypes
    directions *= np.sqrt(sq_norm / np.sum(directions**2, axis=1))[:, None]
    return directions


def prototypes_at(prototypes, directions, categories, angle):
    """Content mu_c(t) = cos(phi) mu_c + sin(phi) nu_c of each item's category, ``angle`` = phi(t).

    ``directions=None`` (no content drift) returns ``prototypes[categories]`` itself.
    """
    if directions is None:
        return prototypes[categories]
    return (np.cos(angle)[:, None] * prototypes[categories]
            + np.sin(angle)[:, None] * directions[categories])


def add_noise(signal, noise, draws):
    """Scale the signal to unit RMS and add ``noise`` times the N(0, 1) ``draws``."""
    rms = np.sqrt(np.mean(signal**2))
    if rms > 0:
        signal = signal / rms
    return signal + noise * draws


def make_labels(rng, category, secondary, n_categories, label_noise, multilabel):
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
