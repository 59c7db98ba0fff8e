"""Side-by-side comparison of the estimators: the library's main job.

``python -m temporal_xmodal compare`` fits every available estimator on the
same split of a data set and prints one table (fit time, image→text and
text→image mAP, counterpart MRR, and the diachronic protocols of
:mod:`temporal_xmodal.evaluation`: time-period inference t-mAP@50, local
alignment mAP@10, temporally bounded mAP), then writes ``results.json`` and
``comparison.png`` (bars of the figures, per-bin temporally bounded mAP, fit
times) into an output folder.
"""

import json
import time
import warnings
from pathlib import Path

import numpy as np

from ._validation import TimeRangeWarning
from .metrics import cross_modal_scores

#: Columns of the comparison table: (key, header, format).
COLUMNS = (
    ("fit_seconds", "fit [s]", "{:.1f}"),
    ("map_i2t", "I→T mAP", "{:.3f}"),
    ("map_t2i", "T→I mAP", "{:.3f}"),
    ("mrr", "MRR", "{:.3f}"),
    ("tmap50", "t-mAP@50", "{:.3f}"),
    ("local_map10", "local@10", "{:.3f}"),
    ("bounded_map", "bin mAP", "{:.3f}"),
)


def default_estimators(n_image_features, random_state=0, time_window=1.0):
    """The estimators compared by default, by display name.

    Parameters
    ----------
    n_image_features : int
        Leading image columns of X.
    random_state : int, default=0
        Seed for the stochastic estimators.
    time_window : float, default=1.0
        Time scale of the data: the Diachronic window (decay = 1 / window).

    Returns
    -------
    estimators : dict of str -> estimator
    """
    from .estimators._binned import default_base_estimator
    from .estimators import (
        BinnedProcrustesEmbedder,
        CCACrossModal,
        DiachronicEmbedder,
        SAMEmbedder,
        TempXNetEmbedder,
    )

    common = {"n_image_features": n_image_features}
    neural = {**common, "random_state": random_state}
    return {
        "CCA": CCACrossModal(**common),
        "SAM": SAMEmbedder(**neural),
        "TempXNet-Rec": TempXNetEmbedder(correlation="recency", **neural),
        "Diachronic": DiachronicEmbedder(window=time_window, decay=1.0 / time_window, **neural),
        "Binned+Procrustes": BinnedProcrustesEmbedder(default_base_estimator(), bins=10,
                                                      min_bin_size=50, **neural),
    }


def evaluate(estimator, X, y, *, time_window, n_bins=10, random_state=0):
    """Retrieval figures and diachronic protocols of a fitted estimator on ``(X, y)``.

    Parameters
    ----------
    estimator : fitted cross-modal estimator
    X : ndarray of shape (n, n_features)
    y : ndarray of labels
    time_window : float
        Window of the time-period inference (t-mAP@50: same label and
        ``|Δt| <= time_window``).
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
        (temporally bounded mAP, micro) and ``per_bin`` (its per-bin table).
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
    bounded, per_bin = temporally_bounded_retrieval(estimator, X, y, bins=n_bins)
    return {
        "map_i2t": coarse["i2t"],
        "map_t2i": coarse["t2i"],
        "map": coarse["mean"],
        "mrr": cross_modal_scores(Z[:, :d], Z[:, d:], None, metrics=("mrr",))["mrr"],
        "tmap50": time_period_inference(estimator, X, y, window=time_window)["mean"],
        "local_map10": local_alignment(estimator, X, y, bins=n_bins,
                                       random_state=random_state)["mean"],
        "bounded_map": bounded["mean"],
        "per_bin": {key: np.asarray(per_bin[key]).tolist()
                    for key in ("center", "map_i2t", "map_t2i", "map_mean")},
    }


def compare(estimators, X_train, y_train, X_test, y_test, *, time_window, log=print):
    """Fit each estimator on the training split and evaluate it on the test split.

    Parameters
    ----------
    estimators : dict of str -> estimator
    X_train, y_train, X_test, y_test : arrays
        Data in the ``[image | text | time]`` layout.
    time_window : float
        See :func:`evaluate`.
    log : callable, default=print
        Progress messages.

    Returns
    -------
    rows : list of dict
        One row per estimator: ``name``, ``fit_seconds`` and the figures of
        :func:`evaluate`.
    """
    rows = []
    for i, (name, est) in enumerate(estimators.items(), 1):
        log(f"[{i}/{len(estimators)}] fitting {name} ...")
        start = time.perf_counter()
        est.fit(X_train, y_train)
        row = {"name": name, "fit_seconds": time.perf_counter() - start}
        with warnings.catch_warnings():
            # test times a little outside the training range are expected here
            warnings.simplefilter("ignore", TimeRangeWarning)
            row.update(evaluate(est, X_test, y_test, time_window=time_window))
        rows.append(row)
    return rows


def format_table(rows):
    """Render comparison rows as a fixed-width text table.

    Parameters
    ----------
    rows : list of dict
        Output of :func:`compare`.

    Returns
    -------
    table : str
    """
    width = max([len("estimator")] + [len(r["name"]) for r in rows])
    header = f"{'estimator':<{width}}  " + "  ".join(f"{h:>9}" for _, h, _ in COLUMNS)
    lines = [header, "-" * len(header)]
    for r in rows:
        cells = "  ".join(f"{fmt.format(r[key]):>9}" for key, _, fmt in COLUMNS)
        lines.append(f"{r['name']:<{width}}  {cells}")
    return "\n".join(lines)


def plot_results(rows, path):
    """Bar charts of the retrieval figures and fit times (needs matplotlib).

    Parameters
    ----------
    rows : list of dict
        Output of :func:`compare`.
    path : str or Path
        PNG file to write.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r["name"] for r in rows]
    metrics = [(k, h) for k, h, _ in COLUMNS if k != "fit_seconds"]
    fig, (ax, ax_time, ax_t) = plt.subplots(1, 3, figsize=(17, 4.5),
                                            width_ratios=[3, 2, 1.2])
    width = 0.8 / len(metrics)
    x = np.arange(len(names))
    for j, (key, header) in enumerate(metrics):
        ax.bar(x + (j - (len(metrics) - 1) / 2) * width, [r[key] for r in rows], width,
               label=header)
    ax.set_xticks(x, names)
    ax.set_ylabel("score (test split)")
    ax.set_ylim(0, 1.15)
    ax.legend(ncol=len(metrics), fontsize=7, loc="upper center")
    ax.set_title("Cross-modal retrieval")
    for r in rows:
        ax_time.plot(r["per_bin"]["center"], r["per_bin"]["map_mean"], marker="o",
                     label=r["name"])
    ax_time.set_xlabel("time (bin centre)")
    ax_time.set_ylabel("same-bin mAP (mean of I→T, T→I)")
    ax_time.set_title("Temporally bounded retrieval per bin")
    ax_time.legend(fontsize=8)
    ax_t.barh(x, [r["fit_seconds"] for r in rows], color="grey")
    ax_t.set_yticks(x, names)
    ax_t.invert_yaxis()
    ax_t.set_xlabel("seconds")
    ax_t.set_title("Fit time")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


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


def run_compare(dataset="synthetic", output="compare_output", n_samples=3000,
                random_state=0, plots=True, max_epochs=None, log=print):
    """Run the comparison end to end: data, fits, table, JSON and plots.

    Parameters
    ----------
    dataset : {"synthetic"}, default="synthetic"
    output : str or Path, default="compare_output"
        Folder for ``results.json`` and ``comparison.png``.
    n_samples : int, default=3000
        Size of the synthetic data set.
    random_state : int, default=0
    plots : bool, default=True
        Write the PNG (skipped with a message when matplotlib is missing).
    max_epochs : int or None, default=None
        Override the neural estimators' epochs (``None``: their paper defaults).
    log : callable, default=print

    Returns
    -------
    rows : list of dict
    """
    if dataset != "synthetic":
        raise ValueError(f"Unknown dataset {dataset!r}; available: 'synthetic'.")
    X_tr, y_tr, X_te, y_te, n_img, window = synthetic_split(n_samples,
                                                           random_state=random_state)
    log(f"data: synthetic, {len(X_tr)} train / {len(X_te)} test items, "
        f"{n_img} image + {X_tr.shape[1] - 1 - n_img} text features; "
        f"t-mAP@50 window = {window:.2f}")
    estimators = default_estimators(n_img, random_state, window)
    if max_epochs is not None:
        for est in estimators.values():
            est.set_params(**{key: max_epochs for key in est.get_params()
                              if key.split("__")[-1] == "max_epochs"})
    rows = compare(estimators, X_tr, y_tr, X_te, y_te, time_window=window, log=log)
    log("")
    log(format_table(rows))
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    meta = {"dataset": dataset, "n_train": int(len(X_tr)), "n_test": int(len(X_te)),
            "time_window": window, "random_state": random_state}
    (out / "results.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))
    log(f"\nwrote {out / 'results.json'}")
    if plots:
        try:
            plot_results(rows, out / "comparison.png")
            log(f"wrote {out / 'comparison.png'}")
        except ImportError:
            log("matplotlib is not installed: no plots (pip install 'temporal-xmodal[plots]')")
    return rows
