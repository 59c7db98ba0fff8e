"""Fitting the bins and the per-bin models of BinnedProcrustesEmbedder: in order, in
parallel (:class:`joblib.Parallel`, results in bin order), from one shared start with
``init="global"``; Ctrl-C stops the loop at the first bin it stopped, and the bins
received so far are kept."""

import copy
import warnings

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone

from ..._stacking import stack_rows
from ..._device import limit_worker_threads
from ...time import TimeBins, TimeBinWarning
from ...training import fit_child
from ..._warnings import warn


def fit_time_bins(bins, min_bin_size, time_unit, time, owner):
    """The fitted TimeBins of the training times (at least 2 items per bin; fewer rows than
    ``min_bin_size``: one bin); merged bins are warned once, in the ``owner``'s words."""
    n, min_size = len(time), max(int(min_bin_size), 2)
    if n >= min_size:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", TimeBinWarning)
            fitted = TimeBins(bins, min_bin_size=min_size, time_unit=time_unit).fit(time)
        for w in caught:
            if not issubclass(w.category, TimeBinWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        if any(issubclass(w.category, TimeBinWarning) for w in caught):
            merged = next(str(w.message) for w in caught
                          if issubclass(w.category, TimeBinWarning))
            merged = merged.split(": ", 1)[1] if merged.startswith(owner) else merged
            warn(f"{owner}(bins={bins!r}, min_bin_size={min_bin_size}) fits "
                 f"{fitted.n_bins_} time bin(s) (n_bins_): {merged} Lower min_bin_size to "
                 "keep more bins.", TimeBinWarning)
        return fitted
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TimeBinWarning)
        fitted = TimeBins(bins, min_bin_size=n, time_unit=time_unit).fit(time)
    warn(
        f"{owner}: X has {n} rows, fewer than min_bin_size={min_size}; all rows form a "
        f"single time bin ({fitted.n_bins_} bin(s)).", TimeBinWarning)
    return fitted


def fit_bin_models(run, base, rows, X_image, X_text, time, labels, *, init, n_jobs,
                   n_image_features, owner, bins=None, fine_tune_epochs=None):
    """Fit a clone of ``base`` on each bin's rows, in bin order.

    Parameters
    ----------
    run : TrainingRun
        The binned fit: its generator draws one seed per bin (and one for the shared
        start); a Ctrl-C sets ``run.stopped``.
    base : CrossModalEmbedder
        The unfitted per-bin model.
    rows : list of ndarray of int
        The training rows of each bin, in time order.
    X_image, X_text, time, labels
        The training data (labels may be None).
    init : {"auto", "global", "independent"}
    fine_tune_epochs : int or None, default=None
        Epochs of each bin's continuation of a shared start, at most the base's
        ``max_epochs`` (``None``: the base's).
    n_jobs : int or None
    n_image_features : int
        The resolved image block width, given to bases that have the parameter.
    owner : str
        The binned estimator's name, for messages.
    bins : TimeBins or None, default=None
        With a verbose base, a line naming each bin is printed over its epoch table.

    Returns
    -------
    fitted : list of estimators or None
        The fitted models of the first ``len(fitted)`` bins; None when Ctrl-C stopped the
        shared start.
    start : estimator or None
        The shared start (``init="global"``); None without one.
    """
    params = base.get_params(deep=False)
    seeds = run.rng.randint(np.iinfo(np.int32).max, size=len(rows) + 1)
    update = {}
    if "n_image_features" in params:
        update["n_image_features"] = n_image_features
    shared = shares_a_start(init, base, owner)
    titled = bins is not None and bool(params.get("verbose"))
    if shared:
        # one model on all rows (the last seed: the bins' seeds do not depend on init)
        title = (f"{owner} start: all {len(time)} items (init='global'; every bin "
                 "continues from it)") if titled else None
        start = fit_start(run, base, update, seeds[-1], stack_rows(X_image, X_text, time),
                          labels, title=title)
        if start is None:
            return None, None
        update["warm_start"] = True
        if fine_tune_epochs is not None:  # at most the start's own epochs
            update["max_epochs"] = min(fine_tune_epochs, params.get("max_epochs") or
                                       fine_tune_epochs)

    def bin_model(b):
        est = copy.deepcopy(start) if shared else clone(base)
        if "random_state" in params:
            update["random_state"] = int(seeds[b])
        return est.set_params(**update)

    def title(b):
        if not titled:
            return None
        lo, hi = bins.edges_[b], bins.edges_[b + 1]
        return (f"{owner} bin {b + 1}/{len(rows)} [{lo:.6g}, {hi:.6g}) {bins.time_unit}: "
                f"{len(rows[b])} items")

    jobs = ((bin_model(b), stack_rows(X_image, X_text, time, r),
             None if labels is None else labels[r], title(b)) for b, r in enumerate(rows))
    return fit_in_order(run, jobs, n_jobs), start if shared else None


def _fit_bin(estimator, X, y, title=None):
    """Fit one bin's model on the worker's share of the threads, as a part of the binned fit
    (``title``, when given, printed first)."""
    if title:
        print(title, flush=True)
    with limit_worker_threads():
        return fit_child(estimator, X, y)


def fit_in_order(run, jobs, n_jobs):
    """Fit ``(estimator, X, y[, title])`` jobs in order (consumed lazily); stop at the first
    Ctrl-C.  Returns the fitted models of the first ``len(fitted)`` jobs (the last may be
    partial)."""
    fitted = []
    # threads unless the caller's parallel_config names a backend: one Binned fit
    # would otherwise pay loky's start (each worker imports torch) for its few bins
    results = Parallel(n_jobs=n_jobs, return_as="generator", prefer="threads")(
        delayed(_fit_bin)(*job) for job in jobs)
    try:
        with run.stoppable():
            for estimator in results:
                fitted.append(estimator)
                if run.check_part(estimator):
                    break
    finally:
        with warnings.catch_warnings():
            # joblib's "tasks not used / cancelled" note is what the run's warning says
            warnings.simplefilter("ignore", UserWarning)
            results.close()
    return fitted


def shares_a_start(init, base, owner):
    """Whether every bin continues from one model fitted on all rows: ``"auto"`` when the base
    has ``warm_start``; ``"global"`` with a base without it raises."""
    can = "warm_start" in base.get_params(deep=False)
    if init == "global" and not can:
        raise ValueError(
            f"{owner}(init='global') continues each bin's model from a model fitted on all "
            f"rows, which needs a base estimator with a warm_start parameter; "
            f"{type(base).__name__} has none. Use init='independent' (or 'auto').")
    return can if init == "auto" else init == "global"


def fit_start(run, base, update, seed, X, y, title=None):
    """The model every bin starts from: the base fitted on all rows (None when Ctrl-C stopped
    it)."""
    estimator = clone(base).set_params(**update)
    if "random_state" in base.get_params(deep=False):
        estimator.set_params(random_state=int(seed))
    fitted = fit_in_order(run, [(estimator, X, y, title)], None)
    return None if run.stopped else fitted[0]
