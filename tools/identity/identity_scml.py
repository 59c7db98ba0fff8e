#!/usr/bin/env python
"""Fixed-seed outputs of SequentialCrossModal, for bit-identity checks of a change.

Usage (two checkouts, e.g. the base of a change in a git worktree)::

    git worktree add --detach /tmp/base <base commit>
    python tools/identity/identity_scml.py /tmp/base base.pkl
    python tools/identity/identity_scml.py . new.pkl
    python tools/identity/identity_scml.py --compare base.pkl new.pkl   # exit 1 on a difference

Puts REPO_PATH first on ``sys.path`` (checked), fits SCML at small settings on
:func:`temporal_xmodal.datasets.make_temporal_crossmodal` in every configuration whose code
paths differ (the learned optimiser single- and multilabel, disentangled or not, without
memory, T in steps, the meta-loss at θ, SGD and no Stage IV, joint Stage II, the parallel
paradigm, a third ``partial_fit``) and pickles ``{case: {"transform": ndarray,
"fused": ndarray, "stage3"/"stage4": per-batch losses}}``.  About half a minute on one
thread.
"""

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import pickle  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402

CASES = {
    "meta": {},
    "meta_disentangle": {"disentangle": True},
    "meta_no_memory": {"n_memory": 0},
    "meta_steps": {"meta_steps": 7, "meta_steps_unit": "steps"},
    "meta_current": {"meta_loss_at": "current", "l1_reduction": "mean"},
    "meta_image_first": {"modality_order": ("image", "text")},
    "sgd": {"update_rule": "sgd"},
    "none_joint": {"update_rule": "none", "stage2_scope": "joint"},
    "parallel": {"paradigm": "parallel"},
}
ML_CASES = {"multilabel_meta": {}, "multilabel_sgd": {"update_rule": "sgd"}}
HISTORY_KEYS = ("train_loss", "old_loss", "new_loss", "update_l1")


def _record(model, X):
    out = {"transform": model.transform(X), "fused": model.transform_fused(X)}
    for stage in ("stage3", "stage4"):
        if stage in model.nets_:
            rows = model.nets_[stage].history[:, "batches"]
            out[stage] = np.array([[row.get(k, np.nan) for k in HISTORY_KEYS]
                                   for epoch in rows for row in epoch])
    return out


def outputs():
    """``{case: outputs}`` of the fixed-seed fits."""
    import torch

    torch.set_num_threads(1)
    from temporal_xmodal import SequentialCrossModal
    from temporal_xmodal.datasets import make_temporal_crossmodal

    X, y, info = make_temporal_crossmodal(240, return_info=True, random_state=0)
    Xm, Ym, infom = make_temporal_crossmodal(240, multilabel=True, return_info=True,
                                             random_state=1)
    small = {"max_epochs": 3, "hidden_dim": 32, "embedding_dim": 16, "n_memory": 40,
             "n_meta_train": 50, "batch_size": 32, "random_state": 0}
    results = {}
    for cases, (data, labels, d) in ((CASES, (X, y, info.n_image_features)),
                                     (ML_CASES, (Xm, Ym, infom.n_image_features))):
        for name, params in cases.items():
            model = SequentialCrossModal(**{**small, **params}, n_image_features=d)
            model.fit(data, labels)
            results[name] = _record(model, data)
            if name == "meta":  # more items of the second modality: Stage IV again
                model.partial_fit(data[:100, :d], labels[:100], modality="image")
                results["meta_third_call"] = _record(model, data)
    return results


def compare(a, b):
    """Print every differing output; return the number of differences."""
    bad = 0
    for case in sorted(set(a) | set(b)):
        for key in sorted(set(a.get(case, {})) | set(b.get(case, {}))):
            x, y = a.get(case, {}).get(key), b.get(case, {}).get(key)
            same = (x is not None and y is not None and x.shape == y.shape
                    and np.array_equal(x, y, equal_nan=True))
            if not same:
                bad += 1
                diff = (np.nanmax(np.abs(x - y)) if x is not None and y is not None
                        and x.shape == y.shape else "shape/missing")
                print(f"DIFF {case}.{key}: max |diff| {diff}")
    print(f"{bad} differing outputs of {sum(len(v) for v in a.values())}")
    return bad


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--compare":
        with open(sys.argv[2], "rb") as fa, open(sys.argv[3], "rb") as fb:
            sys.exit(1 if compare(pickle.load(fa), pickle.load(fb)) else 0)
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.dont_write_bytecode = True
    repo = os.path.realpath(sys.argv[1])
    sys.path.insert(0, repo)
    import temporal_xmodal

    assert os.path.realpath(temporal_xmodal.__file__).startswith(repo), temporal_xmodal.__file__
    with open(sys.argv[2], "wb") as f:
        pickle.dump(outputs(), f)
    print(f"wrote {sys.argv[2]}")


if __name__ == "__main__":
    main()
