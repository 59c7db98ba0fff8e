"""Drop-in baselines: one loop fits and evaluates every estimator of the library.

All estimators take the same ``X = [image | text | time]`` and ``y`` and return the
same ``[image embedding | text embedding]``, so comparing a temporal model with
its baselines needs no per-model code: the loop below never names a method, and
trying another model is one more line in the ``candidates`` dict (or replacing
one, e.g. ``SAMEmbedder(...)`` by ``DiachronicEmbedder(...)``).

For each estimator it prints

* ``I→T`` / ``T→I``: full-ranking mAP (coarse alignment: every item at its own time,
  relevant = same category);
* ``t-mAP@50``: time-period inference, mAP@50 where relevant = same category AND
  ``|Δt| <= window``: does the space also keep temporal neighbours together?
* ``bin mAP``: temporally bounded retrieval, mAP within the query's own time bin;
* ``time cos``: mean cosine between the same captions projected at the start and
  at the end of the time range.  1.0000 means the model ignores time at inference
  (CCA, SAM, TempXNet); time-conditioned models (Diachronic, Binned) move them.

The static controls of the temporal models are in the list too: SAM with a fixed
margin, TempXNet without its temporal term, Diachronic without its intra-category
term L_intra (``decay=0``, its default: the ``window`` that entry passes does nothing).

Run from the repository root::

    python examples/compare_baselines.py
    python examples/compare_baselines.py --fast     # tiny sizes
"""

import argparse
import time
import warnings

import numpy as np
import torch
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from temporal_xmodal import (
    BinnedProcrustesEmbedder,
    CCACrossModal,
    DiachronicEmbedder,
    SAMEmbedder,
    SequentialCrossModal,
    TempXNetEmbedder,
    TimeRangeWarning,
)
from temporal_xmodal.datasets import make_temporal_crossmodal
from temporal_xmodal.evaluation import (
    coarse_alignment,
    temporally_bounded_retrieval,
    time_period_inference,
)

#: Time-period inference window: 5 % of the synthetic time span (0..10).
WINDOW = 0.5
#: Decimals of the table's columns (default 3).
PRECISION = {"fit [s]": 1, "time cos": 4}


def candidates(n_image_features, fast):
    """The estimators to compare, by display name: swap or add one per line."""
    neural = dict(hidden_dim=64 if fast else 256, embedding_dim=64,
                  max_epochs=2 if fast else 20, random_state=0,
                  n_image_features=n_image_features)
    # the per-bin model of the binned estimator (cloned per time bin; the binned
    # estimator sets its n_image_features and a per-bin random_state)
    per_bin = TempXNetEmbedder(temporal_weight=0.0, **neural)
    return {
        "CCA": CCACrossModal(embedding_dim=32, n_image_features=n_image_features),
        "SAM": SAMEmbedder(**neural),
        "SAM, fixed margin": SAMEmbedder(margin_schedule="fixed", **neural),
        "TempXNet-Rec": TempXNetEmbedder(correlation="recency", bandwidth=0.3, **neural),
        "TempXNet, λ=0": TempXNetEmbedder(temporal_weight=0.0, **neural),
        "Diachronic": DiachronicEmbedder(window=WINDOW, decay=1 / WINDOW, time_dim=32, **neural),
        "Diachronic, no L_intra": DiachronicEmbedder(time_dim=32, **neural),  # decay=0
        "Binned+Procrustes": BinnedProcrustesEmbedder(per_bin, bins=3 if fast else 5,
                                                      min_bin_size=30, random_state=0,
                                                      n_image_features=n_image_features),
        # learns text first, images later; only labels, no pairing (64-bit codes)
        "SCML": SequentialCrossModal(**neural),
        "SCML-M (SGD, no meta-learner)": SequentialCrossModal(update_rule="sgd", **neural),
    }


def evaluate(model, X, y, n_image_features):
    """The figures of one fitted model on the test rows (any estimator of the library)."""
    coarse = coarse_alignment(model, X, y)
    bounded, _ = temporally_bounded_retrieval(model, X, y, bins=10)
    t_start, t_end = X[:, -1].min(), X[:, -1].max()
    captions = X[:, n_image_features:-1]
    early = model.transform_text(captions, time=t_start)
    late = model.transform_text(captions, time=t_end)
    return {
        "I→T": coarse["i2t"],
        "T→I": coarse["t2i"],
        "t-mAP@50": time_period_inference(model, X, y, window=WINDOW)["mean"],
        # the same with each query's candidates restricted to its window: what a date
        # filter gives any model, so the figure a time-aware model must beat
        "+ filter": time_period_inference(model, X, y, window=WINDOW, time_filter=True)["mean"],
        "bin mAP": bounded["mean"],
        "time cos": float(np.mean(np.sum(early * late, axis=1))),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fast", action="store_true", help="tiny sizes, a few seconds")
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS and torch threads (default 1: small problems run "
                             "fastest single-threaded on a small shared CPU)")
    args = parser.parse_args()
    threadpool_limits(args.threads)
    torch.set_num_threads(args.threads)
    warnings.simplefilter("ignore", TimeRangeWarning)  # test times slightly out of range
    # The example trains a few epochs to run in seconds, so the models are still
    # improving when training ends; a real fit should heed this warning.
    warnings.simplefilter("ignore", ConvergenceWarning)

    X, y, info = make_temporal_crossmodal(600 if args.fast else 3000, return_info=True,
                                          random_state=0)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y,
                                                        random_state=0)
    n_img = info.n_image_features
    print(f"Synthetic data: {len(X_train)} train / {len(X_test)} test pairs, "
          f"{n_img} image + {info.n_text_features} text features, time in "
          f"{info.time_range}, {len(np.unique(y))} categories\n")

    # ---------------------------------------------------------- the loop
    rows = {}
    for name, estimator in candidates(n_img, args.fast).items():
        model = clone(estimator)  # the loop body is the same for every method
        start = time.perf_counter()
        model.fit(X_train, y_train)
        rows[name] = {"fit [s]": time.perf_counter() - start,
                      **evaluate(model, X_test, y_test, n_img)}
        print(f"  fitted {name:<24} in {rows[name]['fit [s]']:5.1f} s")

    # ---------------------------------------------------------- the table
    columns = list(next(iter(rows.values())))
    width = max(map(len, rows)) + 2
    header = f"{'estimator':<{width}}" + "".join(f"{c:>10}" for c in columns)
    print("\n" + header + "\n" + "-" * len(header))
    for name, row in rows.items():
        print(f"{name:<{width}}" + "".join(
            f"{row[c]:>10.{PRECISION.get(c, 3)}f}" for c in columns))
    print(f"\nI→T, T→I: full-ranking mAP; t-mAP@50: relevant = same category and |Δt| <= "
          f"{WINDOW:g}; + filter: the same over the candidates within the window;\nbin mAP: "
          f"within the query's time bin (10 bins); time cos: captions "
          f"projected at t={X_test[:, -1].min():.1f} vs t={X_test[:, -1].max():.1f} "
          "(1.0000 = time ignored at inference).")
    # category retrieval decides (what no date filter gives); the filtered figure beside it
    best = max(rows, key=lambda name: rows[name]["I→T"] + rows[name]["T→I"])
    print(f"best category mAP: {best} ({(rows[best]['I→T'] + rows[best]['T→I']) / 2:.3f}); "
          f"best + filter: {max(rows, key=lambda name: rows[name]['+ filter'])}")


if __name__ == "__main__":
    main()
