#!/usr/bin/env python
"""Fixed-seed CPU outputs of every estimator, for bit-identity checks of a refactor.

Usage (two checkouts, e.g. the base of a change in a git worktree)::

    python tools/identity/identity_estimators.py /tmp/base base_est.pkl
    python tools/identity/identity_estimators.py . new_est.pkl
    python tools/identity/identity_compare.py base_est.pkl new_est.pkl   # exit 1 on any difference

The companion of ``identity_outputs.py`` (metrics and search): each case fits one estimator
configuration (the registry's six at small settings, and the variants a refactor of the
neural core could change: the constant-time control, validation on and off, each checkpoint
figure, L_intra on, each TempXNet correlation, SAM's schedules, a warm start, a slim pickle
continued) on one synthetic world, then records its embeddings of held-out rows, a
projection at another instant, ``score``, the kept epoch and the per-epoch losses.  About
a minute on one thread.
"""

import os
import sys

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import pickle  # noqa: E402
import warnings  # noqa: E402

if len(sys.argv) != 3:
    sys.exit(__doc__)
sys.dont_write_bytecode = True
REPO = os.path.realpath(sys.argv[1])
sys.path.insert(0, REPO)

import numpy as np  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)

import temporal_xmodal as tx  # noqa: E402
from temporal_xmodal.datasets import make_temporal_crossmodal  # noqa: E402

assert os.path.realpath(tx.__file__).startswith(REPO + os.sep), tx.__file__

X, y, info = make_temporal_crossmodal(240, return_info=True, random_state=0)
D = info.n_image_features
NET = dict(hidden_dim=16, embedding_dim=8, max_epochs=3, batch_size=32, random_state=0,
           device="cpu", n_image_features=D)
X_train, y_train, X_test, y_test = X[:180], y[:180], X[180:], y[180:]
MID = float(np.median(X[:, -1]))

CASES = {
    "CCA": lambda: tx.CCACrossModal(embedding_dim=4, n_image_features=D),
    "SAM": lambda: tx.SAMEmbedder(**NET),
    "SAM|fixed": lambda: tx.SAMEmbedder(margin_schedule="fixed", **NET),
    "SAM|always,batch": lambda: tx.SAMEmbedder(margin_schedule="always",
                                               semantic_normalisation="batch", **NET),
    "SAM|sgd,lr_decay": lambda: tx.SAMEmbedder(optimizer="sgd", lr=0.05, lr_decay=0.01,
                                               **NET),
    "TempXNet": lambda: tx.TempXNetEmbedder(**NET),
    "TempXNet|control": lambda: tx.TempXNetEmbedder(use_time=False, **NET),
    "TempXNet|category": lambda: tx.TempXNetEmbedder(correlation="category",
                                                     bandwidth="6M", **NET),
    "TempXNet|topic": lambda: tx.TempXNetEmbedder(correlation="topic", temporal_weight=1.0,
                                                  **NET),
    "TempXNet|valid_tmap,patience": lambda: tx.TempXNetEmbedder(
        selection_metric="valid_tmap", patience=1, **NET),
    "Diachronic": lambda: tx.DiachronicEmbedder(time_dim=8, **NET),
    "Diachronic|control": lambda: tx.DiachronicEmbedder(time_dim=8, use_time=False, **NET),
    "Diachronic|intra": lambda: tx.DiachronicEmbedder(time_dim=8, decay="5%", window="10%",
                                                      intra_balance=1.0, **NET),
    "Diachronic|paper-ish": lambda: tx.DiachronicEmbedder(
        time_dim=8, decay="0.1/M", window="4M", conditioning="concat", time_dropout=0.0,
        time_encoding="minmax", time_lr_scale=1.0, intra_margin=None, **NET),
    "Diachronic|no-valid,anchors": lambda: tx.DiachronicEmbedder(
        time_dim=8, validation_fraction=0, same_time_anchors=8, dropout=0.2, **NET),
    "Diachronic|valid_loss": lambda: tx.DiachronicEmbedder(
        time_dim=8, selection_metric="valid_loss", **NET),
    "Diachronic|valid_tmap": lambda: tx.DiachronicEmbedder(
        time_dim=8, selection_metric="valid_tmap", **NET),
    "Binned": lambda: tx.BinnedProcrustesEmbedder(bins=3, random_state=0, n_image_features=D),
    "SCML": lambda: tx.SequentialCrossModal(**{**NET, "max_epochs": 2}, common_dim=8,
                                            n_memory=10, n_meta_train=10),
}

RESULTS = {}


def record(name, est):
    RESULTS[f"{name}|transform"] = np.asarray(est.transform(X_test))
    if tx.time.time_role(est) == "inference":
        RESULTS[f"{name}|image@mid"] = np.asarray(est.transform_image(X_test[:, :D], time=MID))
    RESULTS[f"{name}|score"] = float(est.score(X_test, y_test))
    for attr in ("best_epoch_", "temporal_weight_", "embedding_dim_"):
        if hasattr(est, attr):
            RESULTS[f"{name}|{attr}"] = float(getattr(est, attr))
    net = getattr(est, "net_", None)
    if net is not None and hasattr(net, "history"):
        for key in ("train_loss", "valid_loss", "valid_map", "valid_tmap"):
            values = [row[key] for row in net.history if key in row]
            if values:
                RESULTS[f"{name}|history|{key}"] = np.asarray(values, dtype=float)


with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for name, make in CASES.items():
        record(name, make().fit(X_train, y_train))
    # a warm start: two more epochs from the fitted weights
    est = tx.DiachronicEmbedder(time_dim=8, warm_start=True, **NET).fit(X_train, y_train)
    record("Diachronic|warm", est.set_params(max_epochs=2).fit(X_train, y_train))
    # a slim pickle continued
    est = tx.TempXNetEmbedder(warm_start=True, **NET).fit(X_train, y_train)
    est = pickle.loads(pickle.dumps(est))
    record("TempXNet|slim-continued", est.set_params(max_epochs=2).fit(X_train, y_train))

with open(sys.argv[2], "wb") as f:
    pickle.dump(RESULTS, f)
print(f"{len(RESULTS)} outputs of {len(CASES) + 2} fits written to {sys.argv[2]}")
