"""Fitting the bins and the per-bin models of BinnedProcrustesEmbedder, as plain functions.

The bins are one :class:`~temporal_xmodal.time.TimeBins`.  The per-bin models are fitted in
order, in parallel, and stopped as a whole by Ctrl-C; with ``init="global"``, from one model
fitted on all rows.

The bins are fitted through :class:`joblib.Parallel` (``return_as="generator"``), so the
results arrive in bin order and the loop can stop at the first interrupted bin:

* a neural bin model records a Ctrl-C during its own training (skorch swallows it; the
  model says so in ``training_interrupted_``) and returns a usable but partial model;
* any other bin model lets the ``KeyboardInterrupt`` through;
* with joblib's threading, loky or Dask backends Ctrl-C reaches the main thread, which
  is waiting for the next result here.

In every case the loop keeps the bins received so far (a prefix of the bins, in time
order) and closes the generator, which makes joblib stop dispatching further bins.
"""

import copy
import threading
import warnings

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.utils import check_random_state

from ..._stacking import stack_rows
from ..._device import limit_worker_threads
from ...time import TimeBins, TimeBinWarning
from ...training import TrainingInterruptedWarning
from ..._warnings import warn


def fit_time_bins(bins, min_bin_size, time_unit, time, owner):
    """The fitted TimeBins of the training times; fewer rows than min_bin_size give one bin.

    At least 2 items per bin are enforced (a model needs 2 rows).  Bins merged for their
    size are said once, in the owner's words: the ``bins`` and ``min_bin_size`` given, the
    bins fitted, and how to keep more (a grid over ``bins`` that ``min_bin_size`` collapses
    to one count must not pass quietly).
    """
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


def fit_bin_models(base, rows, X_image, X_text, time, labels, *, init, n_jobs, random_state,
                   n_image_features, owner, bins=None, fine_tune_epochs=None):
    """Fit a clone of ``base`` on each bin's rows, in bin order.

    Parameters
    ----------
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
    random_state : int, RandomState or None
        Draws one seed per bin (and one for the shared start).
    n_image_features : int
        The resolved image block width, given to bases that have the parameter.
    owner : str
        The binned estimator's name, for messages.
    bins : TimeBins or None, default=None
        The fitted bins: with a base whose ``verbose`` is > 0, a line naming the bin
        (``owner bin 3/10 [1900, 1910) years: 412 items``) is printed before its model's
        epoch table.

    Returns
    -------
    fitted : list of estimators or None
        The fitted models of the first ``len(fitted)`` bins; None when Ctrl-C
        stopped the shared start of ``init="global"`` (no bin fitted).
    interrupted : bool
        Whether Ctrl-C stopped the fit.
    start : estimator or None
        The model fitted on all rows that every bin continued (``init="global"``), whose
        ``fit_report_`` belongs in the binned model's; None without one.
    """
    params = base.get_params(deep=False)
    seeds = check_random_state(random_state).randint(np.iinfo(np.int32).max,
                                                     size=len(rows) + 1)
    update = {}
    if "n_image_features" in params:
        update["n_image_features"] = n_image_features
    shared = shares_a_start(init, base, owner)
    titled = bins is not None and bool(params.get("verbose"))
    if shared:
        # one model on all rows (the last seed: the bins' seeds do not depend on init)
        title = (f"{owner} start: all {len(time)} items (init='global'; every bin "
                 "continues from it)") if titled else None
        start = fit_start(base, update, seeds[-1], stack_rows(X_image, X_text, time),
                          labels, title=title)
        if start is None:
            return None, True, None
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
    return (*fit_in_order(jobs, n_jobs), start if shared else None)


def _fit_bin(estimator, X, y, title=None):
    """Fit one bin's model (module level so that joblib can ship it to workers).

    Inside a worker the fit's torch/BLAS threads are limited to the worker's share
    (:func:`~temporal_xmodal._device.limit_worker_threads`).  A bin model's own
    :class:`TrainingInterruptedWarning` is silenced: the binned estimator warns once
    for the whole fit (in a worker process here; in the caller's threads by
    :func:`fit_in_order`, since warning filters are not thread-safe).  ``title``, when
    given, is printed first (the line over a verbose model's epoch table).
    """
    if title:
        print(title, flush=True)
    with limit_worker_threads():
        if threading.current_thread() is not threading.main_thread():
            return estimator.fit(X, y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TrainingInterruptedWarning)
            return estimator.fit(X, y)


def fit_in_order(jobs, n_jobs):
    """Fit ``(estimator, X, y)`` jobs in order, stopping at the first interrupted one.

    Parameters
    ----------
    jobs : iterable of (estimator, X, y) or (estimator, X, y, title)
        Consumed lazily (joblib pre-dispatches a few), so the bins' X are not all
        built at once.
    n_jobs : int or None
        As :class:`joblib.Parallel`.

    Returns
    -------
    fitted : list of estimators
        The fitted models of the first ``len(fitted)`` jobs; when interrupted, the
        last one may be partial (a neural model interrupted during its training).
    interrupted : bool
        Whether Ctrl-C stopped the fit (the remaining jobs were not fitted, or
        their results were discarded).
    """
    fitted = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingInterruptedWarning)
        # threads unless the caller's parallel_config names a backend: one Binned fit
        # would otherwise pay loky's start (each worker imports torch) for its few bins
        results = Parallel(n_jobs=n_jobs, return_as="generator", prefer="threads")(
            delayed(_fit_bin)(*job) for job in jobs)
        try:
            for estimator in results:
                fitted.append(estimator)
                if getattr(estimator, "training_interrupted_", False):
                    return fitted, True
        except KeyboardInterrupt:
            return fitted, True
        finally:
            # stop dispatching; joblib's "tasks not used / cancelled" note is
            # what the interrupt warning says
            warnings.simplefilter("ignore", UserWarning)
            results.close()
    return fitted, False


def shares_a_start(init, base, owner):
    """Whether every bin continues from one model fitted on all rows (``init``).

    ``"auto"`` shares a start exactly when the base can continue a fit (it has a
    ``warm_start`` parameter); ``"global"`` with a base that cannot raises.
    """
    can = "warm_start" in base.get_params(deep=False)
    if init == "global" and not can:
        raise ValueError(
            f"{owner}(init='global') continues each bin's model from a model fitted on all "
            f"rows, which needs a base estimator with a warm_start parameter; "
            f"{type(base).__name__} has none. Use init='independent' (or 'auto').")
    return can if init == "auto" else init == "global"


def fit_start(base, update, seed, X, y, title=None):
    """The model every bin starts from: the base fitted on all rows (None if interrupted).

    ``title``: the line printed before its fit (see :func:`_fit_bin`)."""
    estimator = clone(base).set_params(**update)
    if "random_state" in base.get_params(deep=False):
        estimator.set_params(random_state=int(seed))
    fitted, interrupted = fit_in_order([(estimator, X, y, title)], None)
    return None if interrupted else fitted[0]
