"""The main job on a user's own data in one call: :func:`compare_estimators` → the table as a DataFrame.

``compare_estimators(df, image="img_", text="txt_", time="date", label="label")``
is ``python -m temporal_xmodal compare --data FILE --image img_ --text txt_
--time date --label label``: every estimator of the registry at its defaults
(with the constant-time controls), the table, ``results.json`` and the figure
in ``output``, Ctrl-C and ``resume`` as the command line has them.
"""

import json
import os
from numbers import Integral
from pathlib import Path

import numpy as np

from .._device import thread_limits
from .driver import run_compare
from .estimate import SYNTHETIC_TRAIN_SHARE, estimate_lines
from .job import RESULTS, check_names, unique_names
from .table import COLUMNS, UNDATED_COLUMNS
from .user_data import UserDataError, load_user_data, read_table

__all__ = ["compare_estimators", "results_frame"]


def results_frame(rows, columns, answer=()):
    """The comparison table as a DataFrame: one row per estimator, the table's columns.

    Parameters
    ----------
    rows : list of dict
        Rows of :func:`~temporal_xmodal.comparison.compare`.
    columns : sequence of (key, header, format)
        The table's columns (:data:`~temporal_xmodal.comparison.COLUMNS` or
        :data:`~temporal_xmodal.comparison.UNDATED_COLUMNS`).
    answer : sequence of str, default=()
        The answer lines, kept in ``frame.attrs["answer"]``.

    Returns
    -------
    frame : pandas.DataFrame
        Indexed by ``estimator``; headers as in ``table.txt`` (``"I→T mAP"``
        ...), ``time use`` first; NaN where a figure is n/a.
    """
    import pandas as pd

    records = [{"time use": r.get("time_role"),
                **{header: (np.nan if r.get(key) is None else r.get(key))
                   for key, header, _ in columns}} for r in rows]
    frame = pd.DataFrame(records, index=pd.Index([r["name"] for r in rows], name="estimator"))
    frame.attrs["answer"] = list(answer)
    return frame


def compare_estimators(X, y=None, *, image=None, text=None, time=None, label=None,
                       n_image_features=None, label_sep=None, time_unit="years",
                       split="random", window="5%", output="compare_output", estimators=None,
                       max_epochs=None, n_samples=None, random_state=0, plots=True, n_jobs=1,
                       n_threads=1, seeds=1, resume=False, force=False, verbose=False,
                       log=print):
    """Compare every estimator on your own data, in one call; the table as a DataFrame.

    What ``python -m temporal_xmodal compare --data FILE`` does, from Python:
    the data are read and checked once here, every estimator of the registry
    is fitted at its defaults on the training split (with the constant-time
    control of each time-aware one) and evaluated on the test split, and
    ``output`` receives ``table.txt``, ``results.json`` and ``comparison.png``.

    Read more in the user guide: docs/index.md ("Your own data").

    Parameters
    ----------
    X : DataFrame, str, Path or ndarray
        The rows: a DataFrame (or a Parquet, CSV, Feather or ``.npz`` file)
        holding the image columns, the text columns, a time column and
        optionally a label column; or an array ``[image | text | time]`` with
        ``n_image_features`` (time: numbers in ``time_unit``).
    y : array-like of shape (n_samples,) or None, default=None
        Labels, instead of a ``label`` column.  Neither: each row is an
        image–text pair, ranked by MRR.
    image, text : str or list of str
        Each block's columns, a name prefix (``"img_"``) or a list (ignored for
        an array X).
    time : str or None, default=None
        The time column (numbers in ``time_unit``, or dates); ``None``: undated.
    label : str or None, default=None
        The label column (class labels, or a multilabel column: lists, or
        strings split at ``label_sep``).
    n_image_features : int or None, default=None
        Leading image columns of an array X.
    label_sep : str or None, default=None
        Separator of a multilabel string column.
    time_unit : str, default="years"
        Unit of numeric times and of the time axis dates are mapped to.
    split : {"random", "time"}, default="random"
        Hold out 30 % of the rows at random, or the latest 30 %.
    window : str or float, default="5%"
        t-mAP@50 window: a share of the time span, a duration or a number.
    output : str or Path, default="compare_output"
        Folder of the results (another run's results there are refused
        unless ``force``).
    estimators : sequence of str or None, default=None
        A subset of the registry's display names (``None``: all).
    max_epochs : int or None, default=None
        Epochs of the neural estimators (``None``: their own).
    n_samples : int or None, default=None
        A random subset of the rows (``None``: all).
    random_state : int, default=0
        Seed of the split and of the estimators.
    plots : bool, default=True
        Draw ``comparison.png`` (needs matplotlib).
    n_jobs : int, default=1
        Fits in parallel.
    n_threads : int, default=1
        torch threads per fit, as the command line's ``--n-threads`` (restored after).
    seeds : int, default=1
        Runs of the job over seeds ``random_state``, ``random_state + 1``, …; the table is
        then the mean, and the answer lines give each figure's spread (the split of your
        rows is the same in every run: the seeds draw the estimators).
    resume, force, verbose, log
        As :func:`~temporal_xmodal.comparison.run_compare`.  ``log`` receives first the
        time estimate that the command line prints (``log=lambda line: None``: silent).

    Returns
    -------
    table : pandas.DataFrame
        One row per estimator (see :func:`results_frame`); the answer lines
        in ``table.attrs["answer"]``.

    Raises
    ------
    temporal_xmodal.comparison.user_data.UserDataError
        A missing column, a non-numeric block, too few rows, unreadable dates
        (a ``ValueError``, one line).
    CompareInterrupted
        On Ctrl-C, once the finished fits are written (``resume=True`` goes on).

    Examples
    --------
    >>> from temporal_xmodal.comparison import compare_estimators
    >>> table = compare_estimators(df, image="img_", text="txt_", time="date",
    ...                            label="label")  # doctest: +SKIP
    """
    import pandas as pd
    import torch
    from joblib import parallel_config


    if not isinstance(n_threads, Integral) or n_threads < 1:
        raise ValueError(f"n_threads must be a positive integer; got {n_threads!r}")
    if estimators is not None:
        check_names(estimators)  # before the data are read and the estimate printed
    if not isinstance(X, (pd.DataFrame, str, os.PathLike)):
        X = np.asarray(X)
        if X.ndim != 2 or not isinstance(n_image_features, Integral) or not (
                0 < n_image_features < X.shape[1] - 1):
            raise UserDataError("an array X is [image | text | time]: give n_image_features, "
                                "the count of its leading image columns (at least 1, leaving "
                                f"a text column and the time); got {n_image_features!r} for "
                                f"shape {X.shape}")
        n_text = X.shape[1] - 1 - n_image_features
        names = ([f"img_{i}" for i in range(n_image_features)]
                 + [f"txt_{i}" for i in range(n_text)] + ["time"])
        X, image, text, time = pd.DataFrame(X, columns=names), "img_", "txt_", "time"
    if y is not None:
        if label is not None:
            raise UserDataError("give the labels as y or as the label column, not both")
        if isinstance(X, (str, os.PathLike)):
            X = read_table(X)
        if len(y) != len(X):
            raise UserDataError(f"y has {len(y)} labels for {len(X)} rows")
        label = "label" if "label" not in X.columns else "__label__"
        y = np.asarray(y)
        if y.ndim == 2:  # a multilabel indicator: each row's labels (column numbers)
            y = pd.Series([[int(j) for j in np.flatnonzero(row)] for row in y], index=X.index)
        X = X.assign(**{label: y if isinstance(y, pd.Series) else y.tolist()})
    if image is None or text is None:
        raise UserDataError("name the image and text columns: image='img_' and text='txt_' "
                            "(name prefixes) or lists of column names")
    data = load_user_data(X, image=image, text=text, time=time, label=label,
                          label_sep=label_sep, time_unit=time_unit, split=split,
                          window=window, random_state=random_state, n_samples=n_samples)
    # the estimate the command line prints first, through the same lines (issue 56, 5)
    for line in estimate_lines(len(data.X_train) / SYNTHETIC_TRAIN_SHARE, max_epochs,
                               None if estimators is None else unique_names(estimators)[0],
                               data.X_train.shape[1] - 1, seeds=seeds, n_threads=n_threads,
                               pairs=data.pairs):
        log(line)
    threads = torch.get_num_threads()
    torch.set_num_threads(n_threads)
    try:  # BLAS and OpenMP too, as the command line's --n-threads
        with thread_limits(n_threads), parallel_config(backend="loky",
                                                       inner_max_num_threads=n_threads):
            rows = run_compare(output=output, random_state=random_state, plots=plots,
                               max_epochs=max_epochs, estimators=estimators, n_jobs=n_jobs,
                               verbose=verbose, log=log, resume=resume, force=force, data=data,
                               seeds=seeds)
    finally:
        torch.set_num_threads(threads)
    columns = UNDATED_COLUMNS if data.protocol == "undated" else COLUMNS
    # the answer the job wrote (over several seeds, with their spread)
    answer = json.loads((Path(output) / RESULTS).read_text(encoding="utf-8"))["answer"]
    return results_frame(rows, columns, answer)
