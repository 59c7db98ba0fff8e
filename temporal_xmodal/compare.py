"""Side-by-side comparison of the estimators: the library's main job.

``python -m temporal_xmodal compare`` fits every available estimator on the
same split of a data set and prints one table, then writes ``results.json``
and ``comparison.png`` into an output folder.  Three data sets:

``synthetic`` (default)
    :func:`~temporal_xmodal.datasets.make_temporal_crossmodal`, a random 70/30
    split.  Table: fit time, image→text and text→image mAP, counterpart MRR,
    and the diachronic protocols of :mod:`temporal_xmodal.evaluation`
    (time-period inference t-mAP@50, local alignment mAP@10, temporally
    bounded mAP).  Plot panel: temporally bounded mAP per time bin.
``wiki``
    The Wikipedia benchmark (:func:`~temporal_xmodal.datasets.load_wiki`),
    its own train/test split.  The data set is static (time is 0 for every
    item), so the temporal protocols are shown as n/a (``null`` in the JSON)
    rather than figures that would only measure a constant.  Plot panel: mAP
    per category.
``ticrc``
    TICRC newspaper pictures (:func:`~temporal_xmodal.datasets.ticrc_features`:
    ``train`` + 80 % of ``train2`` to fit, the other 20 % of ``train2``
    held out; EfficientNet-Lite0 + TF-IDF features).  Each held-out picture
    ranks all held-out captions, every caption projected at the query
    picture's date (captions carry no date of their own,
    :mod:`temporal_xmodal.evaluation.undated`).  Table: fit time, I→T MRR
    (the TICRC metric), T→I MRR, and Δ date = MRR minus the MRR obtained with
    the query dates shuffled (what the right date is worth to the model; 0
    for models that ignore time at inference).  The label protocols need
    dated captions and are n/a.  References printed under the table: the
    random ranking and the honest date-only ranking.  Plot panel: MRR per
    decade of the query date.
"""

import json
import os
import time
import warnings
from collections import namedtuple
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from .time import TimeRangeWarning, time_use
from .metrics import average_precision_per_query, cross_modal_scores

#: The data sets of ``compare --dataset``.
DATASETS = ("synthetic", "wiki", "ticrc")

#: Columns of the comparison table for labelled data: (key, header, format).
COLUMNS = (
    ("fit_seconds", "fit [s]", "{:.1f}"),
    ("map_i2t", "I→T mAP", "{:.3f}"),
    ("map_t2i", "T→I mAP", "{:.3f}"),
    ("mrr", "MRR", "{:.3f}"),
    ("tmap50", "t-mAP@50", "{:.3f}"),
    ("local_map10", "local@10", "{:.3f}"),
    ("bounded_map", "bin mAP", "{:.3f}"),
)
#: The diachronic protocols among :data:`COLUMNS` (n/a when the data is undated).
TEMPORAL_KEYS = ("tmap50", "local_map10", "bounded_map")
#: Columns for the undated-caption protocol (TICRC).
UNDATED_COLUMNS = (
    ("fit_seconds", "fit [s]", "{:.1f}"),
    ("mrr", "I→T MRR", "{:.3f}"),
    ("mrr_t2i", "T→I MRR", "{:.3f}"),
    ("date_gain", "Δ date", "{:+.3f}"),
)

#: Training recipe per data set, set on every estimator having these parameters
#: (nested ones included).  TICRC has one caption per picture, so the labels are
#: the pairs themselves; with SGD at lr 5e-3 SAM and TempXNet then collapse (every
#: caption gets the same embedding), Adam at lr 1e-4 trains all of them
#: (``benchmarks/bench_ticrc_dcm.py``).
DATASET_TRAINING = {"ticrc": {"optimizer": "adam", "lr": 1e-4}}
#: Parameters of one estimator per data set, by display name.
DATASET_PARAMS = {
    "wiki": {"Binned+Procrustes": {"bins": 1}},  # undated: a single bin
    # SCML trains a classifier with SGD (its stages are not the two-tower recipe)
    "ticrc": {"SCML": {"lr": 0.01}},
}

#: Honest date-only baseline of the undated protocol (see ``date_prior_scores``).
DATE_PRIOR = {"n_neighbors": 25, "bandwidth": 2.0}

#: One compared estimator: how it uses time (``"ignored"``, ``"training"``,
#: ``"training+inference"``) and the unfitted estimator.
Entry = namedtuple("Entry", ["time_use", "estimator"])


def estimator_registry(n_image_features, random_state=0, time_window=1.0, dataset="synthetic"):
    """The compared estimators with how each uses time, by display name.

    Adding an estimator to ``compare`` and to the benchmarks is one line of
    the dictionary below; data-set specific settings come from
    :data:`DATASET_TRAINING` (recipe shared by the neural estimators) and
    :data:`DATASET_PARAMS` (per estimator).

    Parameters
    ----------
    n_image_features : int
        Leading image columns of X.
    random_state : int, default=0
        Seed for the stochastic estimators.
    time_window : float, default=1.0
        Time scale of the data: the Diachronic window (decay = 1 / window).
    dataset : str, default="synthetic"
        Key of the data-set specific settings.

    Returns
    -------
    registry : dict of str -> Entry
    """
    from .estimators import (
        BinnedProcrustesEmbedder,
        CCACrossModal,
        DiachronicEmbedder,
        SAMEmbedder,
        SequentialCrossModal,
        TempXNetEmbedder,
    )
    from .estimators._binned import default_base_estimator

    common = {"n_image_features": n_image_features}
    neural = {**common, "random_state": random_state}
    registry = {
        "CCA": Entry("ignored", CCACrossModal(**common)),
        "SAM": Entry("ignored", SAMEmbedder(**neural)),
        "TempXNet-Rec": Entry("training", TempXNetEmbedder(correlation="recency", **neural)),
        "Diachronic": Entry("training+inference", DiachronicEmbedder(
            window=time_window, decay=1.0 / time_window, **neural)),
        "Binned+Procrustes": Entry("training+inference", BinnedProcrustesEmbedder(
            default_base_estimator(), bins=10, min_bin_size=50, **neural)),
        # 25 of the paper's 150 epochs per stage keep the default job to a few minutes
        "SCML": Entry("ignored", SequentialCrossModal(max_epochs=25, **neural)),
    }
    for name, entry in registry.items():
        set_matching_params(entry.estimator, **DATASET_TRAINING.get(dataset, {}))
        entry.estimator.set_params(**DATASET_PARAMS.get(dataset, {}).get(name, {}))
    return registry


def default_estimators(n_image_features, random_state=0, time_window=1.0, dataset="synthetic"):
    """The estimators compared by default, by display name.

    Parameters
    ----------
    n_image_features : int
        Leading image columns of X.
    random_state : int, default=0
        Seed for the stochastic estimators.
    time_window : float, default=1.0
        Time scale of the data: the Diachronic window (decay = 1 / window).
    dataset : str, default="synthetic"
        Key of the data-set specific settings (see :func:`estimator_registry`).

    Returns
    -------
    estimators : dict of str -> estimator
    """
    registry = estimator_registry(n_image_features, random_state, time_window, dataset)
    return {name: entry.estimator for name, entry in registry.items()}


def set_matching_params(estimator, **params):
    """Set each parameter on every (nested) parameter of the estimator with that name.

    ``set_matching_params(binned, max_epochs=3)`` sets
    ``base_estimator__max_epochs``; names the estimator does not have are
    skipped.

    Parameters
    ----------
    estimator : estimator
    **params
        Parameter name (without ``__`` prefix) → value.

    Returns
    -------
    estimator : estimator
        The same object.
    """
    matching = {key: params[key.split("__")[-1]] for key in estimator.get_params()
                if key.split("__")[-1] in params}
    return estimator.set_params(**matching)


# ---------------------------------------------------------------- evaluations
def _per_category_map(Z_image, Z_text, y):
    """mAP (mean of I→T and T→I) of the queries of each class."""
    scores = Z_image @ Z_text.T
    relevance = y[:, None] == y[None, :]
    ap = 0.5 * (average_precision_per_query(scores, relevance)
                + average_precision_per_query(scores.T, relevance))
    categories, which = np.unique(y, return_inverse=True)
    counts = np.bincount(which)
    return {"category": categories.tolist(),
            "map_mean": (np.bincount(which, weights=ap) / counts).tolist(),
            "count": counts.tolist()}


def evaluate(estimator, X, y, *, time_window, n_bins=10, random_state=0):
    """Retrieval figures and diachronic protocols of a fitted estimator on ``(X, y)``.

    Parameters
    ----------
    estimator : fitted cross-modal estimator
    X : ndarray of shape (n, n_features)
    y : ndarray of labels
    time_window : float or None
        Window of the time-period inference (t-mAP@50: same label and
        ``|Δt| <= time_window``).  ``None``: the data is undated; the
        diachronic protocols are NaN (n/a) and the breakdown is per category.
    n_bins : int, default=10
        Time bins of the local-alignment and temporally-bounded protocols.
    random_state : int, default=0
        Query sampling of the local-alignment protocol.

    Returns
    -------
    figures : dict
        ``map_i2t``, ``map_t2i``, ``map`` (coarse alignment), ``mrr``
        (counterpart, mean of both directions), ``tmap50`` (time-period
        inference), ``local_map10`` (local alignment), ``bounded_map``
        (temporally bounded mAP, micro) and ``per_bin`` (its per-bin table);
        undated: NaN protocols and ``per_category`` (``category``,
        ``map_mean``, ``count``) instead of ``per_bin``.
    """
    from .evaluation import (
        coarse_alignment,
        local_alignment,
        temporally_bounded_retrieval,
        time_period_inference,
    )

    coarse = coarse_alignment(estimator, X, y)
    Z = estimator.transform(X)
    d = Z.shape[1] // 2
    figures = {
        "map_i2t": coarse["i2t"],
        "map_t2i": coarse["t2i"],
        "map": coarse["mean"],
        "mrr": cross_modal_scores(Z[:, :d], Z[:, d:], None, metrics=("mrr",))["mrr"],
    }
    if time_window is None:
        figures.update(dict.fromkeys(TEMPORAL_KEYS, float("nan")))
        figures["per_category"] = _per_category_map(Z[:, :d], Z[:, d:], np.asarray(y))
        return figures
    bounded, per_bin = temporally_bounded_retrieval(estimator, X, y, bins=n_bins)
    figures.update({
        "tmap50": time_period_inference(estimator, X, y, window=time_window)["mean"],
        "local_map10": local_alignment(estimator, X, y, bins=n_bins,
                                       random_state=random_state)["mean"],
        "bounded_map": bounded["mean"],
        "per_bin": {key: np.asarray(per_bin[key]).tolist()
                    for key in ("center", "map_i2t", "map_t2i", "map_mean")},
    })
    return figures


def _split_blocks(X, n_image_features):
    X = np.asarray(X, dtype=np.float64)
    return X[:, :n_image_features], X[:, n_image_features:-1], X[:, -1]


def evaluate_undated(estimator, X, *, n_image_features, period=10.0, random_state=0):
    """Counterpart retrieval against undated captions (the TICRC protocol).

    Row ``i`` of ``X`` is a dated picture and its gold caption.  Every picture
    ranks all captions, each projected at the picture's date
    (:func:`~temporal_xmodal.evaluation.undated.query_time_scores`).

    Parameters
    ----------
    estimator : fitted cross-modal estimator
    X : ndarray of shape (n, n_features)
        ``[image | text | time]``; the time is the picture's date.
    n_image_features : int
    period : float, default=10.0
        Width of the date periods of the breakdown (decades for years).
    random_state : int, default=0
        Permutation of the dates for ``date_gain``.

    Returns
    -------
    figures : dict
        ``mrr`` (picture → caption MRR, the TICRC metric), ``mrr_t2i``
        (caption → picture), ``map_i2t`` / ``map_t2i`` (equal to them: with
        one relevant item AP = RR), ``map`` and the mean of both,
        ``date_gain`` (``mrr`` minus the MRR with the query dates randomly
        permuted among the queries; exactly 0 for a model whose projection
        ignores time) and ``per_period`` (``start``, ``mrr``, ``count`` per
        period of the query date).
    """
    from .evaluation.undated import counterpart_reciprocal_ranks, query_time_scores

    X_image, X_text, t = _split_blocks(X, n_image_features)
    rr_i2t, rr_t2i = counterpart_reciprocal_ranks(query_time_scores(estimator, X_image, X_text, t))
    if time_use(estimator) == "inference":
        shuffled = np.random.default_rng(random_state).permutation(t)
        wrong = counterpart_reciprocal_ranks(
            query_time_scores(estimator, X_image, X_text, shuffled))[0]
        date_gain = float(rr_i2t.mean() - wrong.mean())
    else:
        date_gain = 0.0
    starts, which = np.unique(np.floor(t / period) * period, return_inverse=True)
    counts = np.bincount(which)
    return {
        "mrr": float(rr_i2t.mean()), "mrr_t2i": float(rr_t2i.mean()),
        "map_i2t": float(rr_i2t.mean()), "map_t2i": float(rr_t2i.mean()),
        "map": float(0.5 * (rr_i2t.mean() + rr_t2i.mean())),
        "date_gain": date_gain,
        "per_period": {"start": starts.tolist(),
                       "mrr": (np.bincount(which, weights=rr_i2t) / counts).tolist(),
                       "count": counts.tolist()},
    }


def undated_references(X_train, X_test, *, n_image_features):
    """Reference MRRs of the undated protocol: random and honest date-only rankings.

    Parameters
    ----------
    X_train, X_test : ndarray
        ``[image | text | time]``; the training pairs give the caption date
        prior, the test rows are the queries and candidates.
    n_image_features : int

    Returns
    -------
    references : dict
        ``random`` (E[MRR] of a random ranking) and ``date_prior`` (picture →
        caption MRR of :func:`~temporal_xmodal.evaluation.undated.date_prior_scores`
        with :data:`DATE_PRIOR`).
    """
    from .evaluation.undated import counterpart_reciprocal_ranks, date_prior_scores, random_mrr

    _, text_train, t_train = _split_blocks(X_train, n_image_features)
    _, text_test, t_test = _split_blocks(X_test, n_image_features)
    scores = date_prior_scores(text_train, t_train, text_test, t_test, **DATE_PRIOR)
    return {"random": random_mrr(len(X_test)),
            "date_prior": float(counterpart_reciprocal_ranks(scores)[0].mean())}


def compare(estimators, X_train, y_train, X_test, y_test, *, time_window, protocol="labels",
            n_image_features=None, log=print):
    """Fit each estimator on the training split and evaluate it on the test split.

    Parameters
    ----------
    estimators : dict of str -> estimator
    X_train, y_train, X_test, y_test : arrays
        Data in the ``[image | text | time]`` layout.
    time_window : float or None
        See :func:`evaluate` (``None``: undated data).
    protocol : {"labels", "undated"}, default="labels"
        :func:`evaluate` (labelled relevance) or :func:`evaluate_undated`
        (one gold caption per picture, captions undated; ``y_test`` unused).
    n_image_features : int, optional
        Needed by the undated protocol.
    log : callable, default=print
        Progress messages.

    Returns
    -------
    rows : list of dict
        One row per estimator: ``name``, ``fit_seconds`` and the figures of
        the protocol.
    """
    if protocol not in ("labels", "undated"):
        raise ValueError(f"protocol must be 'labels' or 'undated'; got {protocol!r}.")
    rows = []
    for i, (name, est) in enumerate(estimators.items(), 1):
        log(f"[{i}/{len(estimators)}] fitting {name} ...")
        start = time.perf_counter()
        est.fit(X_train, y_train)
        row = {"name": name, "fit_seconds": time.perf_counter() - start}
        with warnings.catch_warnings():
            # test times a little outside the training range are expected here
            warnings.simplefilter("ignore", TimeRangeWarning)
            if protocol == "labels":
                row.update(evaluate(est, X_test, y_test, time_window=time_window))
            else:
                row.update(evaluate_undated(est, X_test, n_image_features=n_image_features))
        rows.append(row)
    return rows


def _cell(value, fmt):
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "n/a"
    return fmt.format(value)


def format_table(rows, columns=COLUMNS):
    """Render comparison rows as a fixed-width text table (NaN / None as ``n/a``).

    Parameters
    ----------
    rows : list of dict
        Output of :func:`compare`.
    columns : sequence of (key, header, format), default=COLUMNS
        :data:`COLUMNS` or :data:`UNDATED_COLUMNS`.

    Returns
    -------
    table : str
    """
    width = max([len("estimator")] + [len(r["name"]) for r in rows])
    header = f"{'estimator':<{width}}  " + "  ".join(f"{h:>9}" for _, h, _ in columns)
    lines = [header, "-" * len(header)]
    for r in rows:
        cells = "  ".join(f"{_cell(r.get(key), fmt):>9}" for key, _, fmt in columns)
        lines.append(f"{r['name']:<{width}}  {cells}")
    return "\n".join(lines)


def _breakdown(rows, category_names=None):
    """(x labels or values, per-row y, x label, y label, title, categorical) of the middle panel."""
    first = rows[0]
    if "per_bin" in first:
        return ([r["per_bin"]["center"] for r in rows], [r["per_bin"]["map_mean"] for r in rows],
                "time (bin centre)", "same-bin mAP (mean of I→T, T→I)",
                "Temporally bounded retrieval per bin", False)
    if "per_category" in first:
        cat = first["per_category"]
        names = ([category_names[int(c) - 1] for c in cat["category"]] if category_names
                 else cat["category"])
        labels = [f"{c}\n(n={n})" for c, n in zip(names, cat["count"])]
        return (labels, [r["per_category"]["map_mean"] for r in rows], "category (test items)",
                "mAP (mean of I→T, T→I)", "Retrieval per category", True)
    per = first["per_period"]
    labels = [f"{s:g}s\n(n={n})" for s, n in zip(per["start"], per["count"])]
    return (labels, [r["per_period"]["mrr"] for r in rows], "decade of the query date (queries)",
            "I→T MRR", "Caption retrieval per period", True)


def plot_results(rows, path, *, columns=COLUMNS, references=None, category_names=None):
    """Bar charts of the retrieval figures, a per-bin / per-category / per-period panel, fit times.

    Columns that are n/a for every estimator are left out of the bars.

    Parameters
    ----------
    rows : list of dict
        Output of :func:`compare`.
    path : str or Path
        PNG file to write.
    columns : sequence of (key, header, format), default=COLUMNS
    references : dict of str -> float, optional
        Horizontal reference lines (e.g. random MRR) on the first two panels.
    category_names : sequence of str, optional
        Names of the categories of a per-category panel (1-based labels).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r["name"] for r in rows]
    metrics = [(k, h) for k, h, _ in columns if k != "fit_seconds"
               and any(_cell(r.get(k), "{}") != "n/a" for r in rows)]
    fig, (ax, ax_mid, ax_t) = plt.subplots(1, 3, figsize=(18, 4.8), width_ratios=[3, 2.4, 1.2])
    width = 0.8 / len(metrics)
    x = np.arange(len(names))
    values = np.array([[r[k] for k, _ in metrics] for r in rows], dtype=float)
    for j, (key, header) in enumerate(metrics):
        ax.bar(x + (j - (len(metrics) - 1) / 2) * width, values[:, j], width, label=header)
    top = np.nanmax(values)
    ax.set_xticks(x, names, fontsize=8)
    ax.set_ylabel("score (test split)")
    ax.set_ylim(min(0.0, np.nanmin(values) * 1.2), 1.15 if top > 0.5 else top * 1.35)
    ax.axhline(0, color="black", lw=0.6)
    for (label, level), style in zip((references or {}).items(), ("--", ":", "-.")):
        ax.axhline(level, color="grey", ls=style, lw=1, label=f"{label} {level:.3f}")
    ax.legend(ncol=min(len(metrics) + len(references or {}), 4), fontsize=7, loc="upper center")
    ax.set_title("Cross-modal retrieval")
    xs, ys, xlabel, ylabel, title, categorical = _breakdown(rows, category_names)
    if categorical:  # grouped bars: one group per category / period
        bar = 0.8 / len(rows)
        pos = np.arange(len(xs))
        for i, r in enumerate(rows):
            ax_mid.bar(pos + (i - (len(rows) - 1) / 2) * bar, ys[i], bar, label=r["name"])
        ax_mid.set_xticks(pos, xs, fontsize=7, rotation=45 if len(xs) > 8 else 0)
        ax_mid.set_ylim(0, np.nanmax(np.asarray(ys, dtype=float)) * 1.4)  # room for the legend
        if "per_category" in rows[0]:  # a random ranking's AP is the class share
            share = np.asarray(rows[0]["per_category"]["count"], dtype=float)
            ax_mid.hlines(share / share.sum(), pos - 0.45, pos + 0.45, colors="black",
                          linestyles="--", lw=1, label="random (class share)")
    else:
        for i, r in enumerate(rows):
            ax_mid.plot(xs[i], ys[i], marker="o", label=r["name"])
    if references and "random" in references and "per_period" in rows[0]:
        ax_mid.axhline(references["random"], color="black", ls="--", lw=1, label="random")
    ax_mid.set_xlabel(xlabel)
    ax_mid.set_ylabel(ylabel)
    ax_mid.set_title(title)
    ax_mid.legend(**({"fontsize": 7, "ncol": 2, "loc": "upper left"} if categorical
                     else {"fontsize": 8}))
    ax_t.barh(x, [r["fit_seconds"] for r in rows], color="grey")
    ax_t.set_yticks(x, names, fontsize=8)
    ax_t.invert_yaxis()
    ax_t.set_xlabel("seconds")
    ax_t.set_title("Fit time")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ---------------------------------------------------------------- data sets
def default_data_dir():
    """Folder of the real data sets: ``$TEMPORAL_XMODAL_DATA`` or ``../shared/data``.

    The relative default is resolved against the current directory (the
    layout of a checkout next to the shared data).

    Returns
    -------
    path : Path
    """
    return Path(os.environ.get("TEMPORAL_XMODAL_DATA", Path.cwd() / ".." / "shared" / "data"))


def synthetic_split(n_samples=3000, test_fraction=0.3, random_state=0):
    """The embedded default data set, split at random into train and test.

    Parameters
    ----------
    n_samples : int, default=3000
    test_fraction : float, default=0.3
    random_state : int, default=0

    Returns
    -------
    X_train, y_train, X_test, y_test : arrays
    n_image_features : int
    time_window : float
        5 % of the time span, the window of t-mAP@50.
    """
    from .datasets import make_temporal_crossmodal

    X, y, info = make_temporal_crossmodal(n_samples, return_info=True,
                                          random_state=random_state)
    rng = np.random.default_rng(random_state)
    test = rng.random(n_samples) < test_fraction
    span = float(np.ptp(X[:, -1]))
    return X[~test], y[~test], X[test], y[test], info.n_image_features, 0.05 * span


def _data_folder(data_dir, name):
    folder = Path(default_data_dir() if data_dir is None else data_dir) / name
    if not folder.is_dir():
        raise FileNotFoundError(
            f"data folder not found: {folder.resolve()} (the {name!r} data set). Pass "
            f"--data-dir (the folder holding {name}/) or set TEMPORAL_XMODAL_DATA.")
    return folder


def _subset(n_total, n_train, n_samples, rng):
    """Train / test row masks of a random ``n_samples`` subset keeping the split's proportions."""
    if n_samples is None or n_samples >= n_total:
        return slice(None), slice(None)
    n_tr = max(2, int(round(n_samples * n_train / n_total)))
    n_te = max(2, n_samples - n_tr)
    return (np.sort(rng.choice(n_train, n_tr, replace=False)),
            np.sort(rng.choice(n_total - n_train, n_te, replace=False)))


def load_comparison_data(dataset="synthetic", *, data_dir=None, n_samples=None, random_state=0,
                         cache_dir=None, progress=True):
    """Training and test data of ``compare --dataset``, ready for the estimators.

    Parameters
    ----------
    dataset : {"synthetic", "wiki", "ticrc"}, default="synthetic"
    data_dir : str, Path or None, default=None
        Folder holding ``wiki/`` and ``ticrc/`` (``None``:
        :func:`default_data_dir`).
    n_samples : int or None, default=None
        Items used in all, train + test: the size of the synthetic data set
        (``None``: 3000); for ``wiki`` and ``ticrc`` a random subset keeping
        the train/test proportions (``None``: everything).
    random_state : int, default=0
        Synthetic generator and wiki subset seed (the TICRC held-out split and
        subset are fixed: seed 0).
    cache_dir : str, Path or None, default=None
        TICRC image feature cache (``None``: ``$TEMPORAL_XMODAL_CACHE`` or
        ``~/.cache/temporal_xmodal``).
    progress : bool, default=True
        Progress bar of the image featuriser.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X_train``, ``y_train``, ``X_test``, ``y_test``,
        ``n_image_features``, ``time_window`` (the estimators' time scale),
        ``eval_window`` (t-mAP@50 window; ``None`` when undated),
        ``protocol`` (``"labels"`` or ``"undated"``), ``description`` and
        ``extra`` (JSON-ready details); ticrc also ``test_picture_paths``.

    Raises
    ------
    FileNotFoundError
        The data folder of ``wiki`` / ``ticrc`` is absent (the message says
        how to point to it).
    ValueError
        Unknown ``dataset``.
    """
    if dataset not in DATASETS:
        raise ValueError(f"Unknown dataset {dataset!r}; available: {', '.join(DATASETS)}.")
    if dataset == "synthetic":
        X_tr, y_tr, X_te, y_te, n_img, window = synthetic_split(
            3000 if n_samples is None else n_samples, random_state=random_state)
        return Bunch(X_train=X_tr, y_train=y_tr, X_test=X_te, y_test=y_te,
                     n_image_features=n_img, time_window=window, eval_window=window,
                     protocol="labels", extra={},
                     description=f"synthetic, {len(X_tr)} train / {len(X_te)} test items, "
                                 f"{n_img} image + {X_tr.shape[1] - 1 - n_img} text features; "
                                 f"t-mAP@50 window = {window:.2f}")
    rng = np.random.default_rng(random_state)
    if dataset == "wiki":
        from .datasets import load_wiki

        wiki = load_wiki(_data_folder(data_dir, "wiki"))
        n_tr = len(wiki.X_train)
        tr, te = _subset(n_tr + len(wiki.X_test), n_tr, n_samples, rng)
        X_tr, y_tr, X_te, y_te = wiki.X_train[tr], wiki.y_train[tr], wiki.X_test[te], wiki.y_test[te]
        n_img = wiki.n_image_features
        return Bunch(X_train=X_tr, y_train=y_tr, X_test=X_te, y_test=y_te, n_image_features=n_img,
                     time_window=1.0, eval_window=None, protocol="labels",
                     extra={"categories": list(wiki.categories)},
                     description=f"wiki, {len(X_tr)} train / {len(X_te)} test items, {n_img} image "
                                 f"(SIFT BoW) + {X_tr.shape[1] - 1 - n_img} text (LDA) features, "
                                 f"{len(wiki.categories)} categories; undated (time = 0): the "
                                 "temporal protocols are n/a")
    from ._layout import stack_modalities
    from .datasets._ticrc import ticrc_features

    feats = ticrc_features(_data_folder(data_dir, "ticrc"), n_samples=n_samples,
                           cache_dir=cache_dir, progress=progress)
    X_tr = stack_modalities(feats.image_fit, feats.text_fit, feats.time_fit)
    X_te = stack_modalities(feats.image_heldout, feats.text_heldout, feats.time_heldout)
    n_img = feats.image_fit.shape[1]
    stats = feats.image_stats
    computed = (f", {stats['n_computed']} computed at {stats['images_per_second']:.1f} images/s"
                if stats["n_computed"] else "")
    return Bunch(X_train=X_tr, y_train=np.arange(len(X_tr)), X_test=X_te,
                 y_test=np.arange(len(X_te)), n_image_features=n_img, time_window=2.0,
                 eval_window=None, protocol="undated",
                 test_picture_paths=[feats.picture_paths[i] for i in feats.heldout_rows],
                 extra={"cache_dir": feats.cache_dir, "n_cached": stats["n_cached"],
                        "n_computed": stats["n_computed"],
                        "text_features": feats.text_fit.shape[1]},
                 description=f"ticrc, {len(X_tr)} training pairs (train + 80 % of train2) / "
                             f"{len(X_te)} held-out train2 pictures × {len(X_te)} captions; "
                             f"EfficientNet-Lite0 ({n_img}) + TF-IDF ({X_tr.shape[1] - 1 - n_img}"
                             f" terms) features, image cache {feats.cache_dir} "
                             f"({stats['n_cached']} cached{computed}); time in years, "
                             "Diachronic window 2 years; labels = the pairs; captions "
                             "projected at the query picture's date")


def _json_ready(value):
    """NaN → None (valid JSON ``null``), recursively."""
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return None if np.isnan(value) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


def run_compare(dataset="synthetic", output="compare_output", n_samples=None, random_state=0,
                plots=True, max_epochs=None, data_dir=None, cache_dir=None, log=print):
    """Run the comparison end to end: data, fits, table, JSON and plots.

    Parameters
    ----------
    dataset : {"synthetic", "wiki", "ticrc"}, default="synthetic"
    output : str or Path, default="compare_output"
        Folder for ``results.json`` and ``comparison.png``.
    n_samples : int or None, default=None
        See :func:`load_comparison_data` (synthetic: 3000).
    random_state : int, default=0
    plots : bool, default=True
        Write the PNG (skipped with a message when matplotlib is missing).
    max_epochs : int or None, default=None
        Override the neural estimators' epochs (``None``: their paper defaults).
    data_dir, cache_dir : str, Path or None, default=None
        See :func:`load_comparison_data`.
    log : callable, default=print

    Returns
    -------
    rows : list of dict
        NaN where a figure is n/a (``null`` in ``results.json``).
    """
    data = load_comparison_data(dataset, data_dir=data_dir, n_samples=n_samples,
                                random_state=random_state, cache_dir=cache_dir)
    log(f"data: {data.description}")
    estimators = default_estimators(data.n_image_features, random_state, data.time_window,
                                    dataset=dataset)
    if max_epochs is not None:
        for est in estimators.values():
            set_matching_params(est, max_epochs=max_epochs)
    rows = compare(estimators, data.X_train, data.y_train, data.X_test, data.y_test,
                   time_window=data.eval_window, protocol=data.protocol,
                   n_image_features=data.n_image_features, log=log)
    undated = data.protocol == "undated"
    columns = UNDATED_COLUMNS if undated else COLUMNS
    references = (undated_references(data.X_train, data.X_test,
                                     n_image_features=data.n_image_features) if undated else {})
    log("")
    log(format_table(rows, columns))
    if undated:
        log(f"references: random ranking {references['random']:.3f}; date-only ranking "
            f"{references['date_prior']:.3f} (each caption's date inferred from the training "
            "captions sharing its words; no held-out date)")
        log("I→T MRR is TICRC's metric (one gold caption per picture: AP = RR). Δ date = MRR − "
            "MRR with the query dates shuffled. The label protocols (t-mAP, local, bin mAP) "
            "need dated captions: n/a.")
    elif data.eval_window is None:
        log("undated data set: the temporal protocols (t-mAP@50, local@10, bin mAP) are n/a")
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    meta = {"dataset": dataset, "n_train": int(len(data.X_train)),
            "n_test": int(len(data.X_test)), "time_window": data.eval_window,
            "estimator_time_window": data.time_window, "protocol": data.protocol,
            "random_state": random_state, "columns": [key for key, _, _ in columns],
            "references": references, **data.extra}
    document = _json_ready({"meta": meta, "rows": rows})
    (out / "results.json").write_text(json.dumps(document, indent=2, allow_nan=False))
    log(f"\nwrote {out / 'results.json'}")
    if plots:
        try:
            plot_results(rows, out / "comparison.png", columns=columns,
                         references={"random": references["random"],
                                     "date-only": references["date_prior"]} if undated else None,
                         category_names=data.extra.get("categories"))
            log(f"wrote {out / 'comparison.png'}")
        except ImportError:
            log("matplotlib is not installed: no plots (pip install 'temporal-xmodal[plots]')")
    return rows
