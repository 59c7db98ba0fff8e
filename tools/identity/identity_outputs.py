#!/usr/bin/env python
"""Public outputs of temporal_xmodal's metrics and search, for bit-identity checks of a refactor.

Usage (two checkouts, e.g. the base of a change in a git worktree)::

    git worktree add /tmp/base <base commit>
    python tools/identity/identity_outputs.py /tmp/base base.pkl
    python tools/identity/identity_outputs.py . new.pkl
    python tools/identity/identity_compare.py base.pkl new.pkl   # exit 1 on any difference

About a minute on one core; about 10,000 outputs.  Long (a table of cases over every
public metric and search function, label kind, time window, NaN policy, similarity,
score kind and block size), and kept in one file so that one run covers the surface.

Puts REPO_PATH first on ``sys.path`` (so ``import temporal_xmodal`` imports that
tree, checked), computes a large deterministic set of outputs of PUBLIC functions
only (temporal_xmodal.metrics.*, temporal_xmodal.search.search_embeddings) and
pickles ``{case_name: ndarray | float | tuple of ndarrays}``.

Every case name starts with the public function and lists the arguments used
(``ds=`` names the data set: embedding kind, label kind, time variant, sizes,
seed).  A call that raises stores ``np.array("ERROR <ExceptionType>")`` instead,
so that a changed exception behaviour also shows as a mismatch; the count of such
cases is printed (the intended set has none, except where noted below).

Set SCAN_CHECK_SKLEARN_WM=1 to add calls under sklearn.config_context(working_memory=...)
(expected to differ between 79dda47 and d215c8d; see sklearn_working_memory).
Set PROFILE=1 to print where the time goes.

BLAS/OpenMP/torch threads are pinned to 1 (determinism, and the machine is
shared); the n_jobs=2 cases still run two Python threads inside the library.
"""

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import pickle  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

if len(sys.argv) != 3:
    sys.exit(__doc__)
sys.dont_write_bytecode = True  # write no __pycache__ into the repositories under test
REPO = os.path.realpath(sys.argv[1])
OUT = sys.argv[2]
sys.path.insert(0, REPO)

import numpy as np  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)

import temporal_xmodal  # noqa: E402
from temporal_xmodal import metrics as M  # noqa: E402
from temporal_xmodal.search import search_embeddings  # noqa: E402

for _mod in (temporal_xmodal, M, sys.modules["temporal_xmodal.search"]):
    assert os.path.realpath(_mod.__file__).startswith(REPO + os.sep), (
        f"{_mod.__name__} imported from {_mod.__file__}, not from {REPO}")

T0 = time.perf_counter()
RESULTS = {}
ERRORS = []
TIMES = []  # (seconds, case) of every call, for PROFILE=1


# --------------------------------------------------------------------------
# Recording
# --------------------------------------------------------------------------


def _store(name, value):
    if name in RESULTS:
        raise KeyError(f"duplicate case name {name}")
    RESULTS[name] = value


def emit(name, value):
    """Record ``value`` (dicts and mixed tuples are split into ``name|key`` entries)."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    if isinstance(value, dict):
        for key, v in value.items():
            emit(f"{name}|{key}", v)
    elif isinstance(value, (tuple, list)):
        if value and all(isinstance(v, (np.ndarray, torch.Tensor)) for v in value):
            _store(name, tuple(np.array(v.detach().cpu().numpy() if isinstance(v, torch.Tensor)
                                        else v, copy=True) for v in value))
        else:
            for i, v in enumerate(value):
                emit(f"{name}|{i}", v)
    elif isinstance(value, np.ndarray):
        _store(name, value.copy())
    elif isinstance(value, (float, np.floating, int, np.integer)) and not isinstance(value, bool):
        _store(name, value)
    else:
        raise TypeError(f"{name}: unexpected output type {type(value)}")


def call(name, func, *args, count_warnings=False, **kwargs):
    """Run ``func(*args, **kwargs)``, record its output(s) (or its exception type)."""
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = func(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the exception type is the output
            ERRORS.append(f"{name}: {type(exc).__name__}: {exc}")
            _store(name, np.array(f"ERROR {type(exc).__name__}"))
            return
        finally:
            TIMES.append((time.perf_counter() - start, name))
    emit(name, value)
    if count_warnings:
        _store(f"{name}|n_warnings", float(len(caught)))


def fmt(v):
    if isinstance(v, float):
        return repr(v)
    return str(v)


def args_str(**kw):
    return ",".join(f"{k}={fmt(v)}" for k, v in kw.items())


# --------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------

EMB_KINDS = ("gauss", "rounded", "integer", "dupgal", "zerogal", "neartie")
LABEL_KINDS = ("none", "int1d", "str1d", "onehot", "multi")
VARIANTS = ("plain", "window", "window0", "nan")
WORDS = np.array(["alpha", "beta", "gamma", "delta", "epsilon"])


def embeddings(kind, n_q, n_g, dim, rng, square):
    """Query and gallery float64 embeddings of one kind (square: G[i] near Q[i])."""
    if kind in ("gauss", "rounded", "dupgal", "zerogal"):
        Q = rng.standard_normal((n_q, dim))
        G = (Q + 0.9 * rng.standard_normal((n_g, dim)) if square
             else rng.standard_normal((n_g, dim)))
        if kind == "rounded":  # multiples of 0.5: many exactly tied scores
            Q, G = np.round(Q * 2) / 2, np.round(G * 2) / 2
        elif kind == "dupgal":  # half the gallery rows copies of others, some query copies
            dst = rng.choice(n_g, n_g // 2, replace=False)
            G[dst] = G[rng.integers(0, n_g, len(dst))]
            qdst = rng.choice(n_q, n_q // 4, replace=False)
            Q[qdst] = Q[rng.integers(0, n_q, len(qdst))]
        elif kind == "zerogal":
            G = np.zeros((n_g, dim))
    elif kind == "integer":
        Q = rng.integers(-2, 3, (n_q, dim)).astype(np.float64)
        G = (Q + rng.integers(-1, 2, (n_g, dim)) if square
             else rng.integers(-2, 3, (n_g, dim))).astype(np.float64)
    elif kind == "neartie":  # ties in float32 that float64 separates (1e-9 apart)
        Q = rng.integers(-1, 2, (n_q, dim)).astype(np.float64)
        base = (Q if square else rng.integers(-1, 2, (n_g, dim))).astype(np.float64)
        G = base + 1e-9 * rng.standard_normal((n_g, dim))
    else:
        raise ValueError(kind)
    return Q, G


def labels(kind, n, rng, nan):
    """Labels of one kind for ``n`` items; ``nan``: some missing (NaN / None)."""
    if kind == "none":
        return None
    ints = rng.integers(0, 5, n)
    missing = rng.random(n) < 0.08
    if kind == "int1d":
        out = ints
        if nan:
            out = ints.astype(np.float64)
            out[missing] = np.nan
    elif kind == "str1d":
        out = WORDS[ints]
        if nan:
            out = out.astype(object)
            out[missing] = None
    elif kind == "onehot":
        out = np.eye(5, dtype=np.int64)[ints]
        if nan:
            out = out.astype(np.float64)
            out[missing, 0] = np.nan
    elif kind == "multi":  # 0/1 indicators, some rows empty; graded gains for nDCG
        out = (rng.random((n, 6)) < 0.25).astype(np.int64)
        if nan:
            out = out.astype(np.float64)
            out[missing, 2] = np.nan
    else:
        raise ValueError(kind)
    return out


def times(variant, n, rng):
    """``(times, window)`` of a variant."""
    if variant == "plain":
        return None, None
    if variant == "window0":  # integer years, exact equality
        return rng.integers(0, 6, n).astype(np.float64), 0.0
    t = rng.uniform(0, 20, n)
    if variant == "nan":
        t[rng.random(n) < 0.06] = np.nan
    return t, 3.0


SQUARE_SIZES = ((64, 64), (140, 140), (200, 200))
RECT_SIZES = ((60, 90), (140, 190), (201, 163))
DIMS = (4, 8, 16)


def make_scenarios():
    scenarios = []
    i = 0
    for emb in EMB_KINDS:
        for lab in LABEL_KINDS:
            for variant in VARIANTS:
                seed = 1000 + i
                rng = np.random.default_rng(seed)
                square = lab == "none" or i % 3 == 0
                n_q, n_g = (SQUARE_SIZES if square else RECT_SIZES)[i % 3]
                dim = DIMS[(i // 3) % 3]
                Q, G = embeddings(emb, n_q, n_g, dim, rng, square)
                nan = variant == "nan"
                ql, gl = labels(lab, n_q, rng, nan), labels(lab, n_g, rng, nan)
                qt, wq = times(variant, n_q, rng)
                gt, _ = times(variant, n_g, rng)
                if nan and lab == "none":
                    # counterpart relevance needs every gallery item: NaN query times only
                    # (a NaN gallery time removes the item, which raises; see expected_errors)
                    gt[np.isnan(gt)] = 1.0
                if variant == "window0":
                    gt = rng.integers(0, 6, n_g).astype(np.float64)
                name = f"{emb}/{lab}/{variant}/{n_q}x{n_g}x{dim}/s{seed}"
                scenarios.append(dict(name=name, i=i, emb=emb, lab=lab, variant=variant,
                                      Q=Q, G=G, ql=ql, gl=gl, qt=qt, gt=gt, window=wq,
                                      square=n_q == n_g, nan=nan))
                i += 1
    # a larger gallery (several top-k chunks at the default working memory)
    for j, (emb, lab) in enumerate((("gauss", "int1d"), ("rounded", "multi"),
                                    ("dupgal", "none"))):
        seed = 5000 + j
        rng = np.random.default_rng(seed)
        n_q, n_g = (100, 700) if lab != "none" else (300, 300)
        Q, G = embeddings(emb, n_q, n_g, 8, rng, lab == "none")
        scenarios.append(dict(name=f"{emb}/{lab}/plain/{n_q}x{n_g}x8/s{seed}", i=i, emb=emb,
                              lab=lab, variant="plain", Q=Q, G=G,
                              ql=labels(lab, n_q, rng, False), gl=labels(lab, n_g, rng, False),
                              qt=None, gt=None, window=None, square=n_q == n_g, nan=False,
                              big=True))
        i += 1
    return scenarios


SCENARIOS = make_scenarios()
SIMS = ("dot", "cosine", "hamming")
FULL_CONFIGS = ((None, None), (0.01, 1), (0.05, 2), (0.5, 1), (None, 2), (0.01, 2),
                (0.5, 2), (0.05, 1))
TOPK_WMS = (None, 0.01, 0.05, 0.5)
FORMS = ("np64", "np32", "torch64", "torch32")
RANK_OPTS = tuple((norm, gain, disc) for norm in ("relevant_in_topk", "min_k_total")
                  for gain in ("linear", "exponential") for disc in ("jarvelin", "standard"))


def common_kwargs(sc, sim, wm, nan_policy=True):
    kw = dict(query_time=sc["qt"], gallery_time=sc["gt"], time_window=sc["window"],
              similarity=sim, working_memory=wm)
    if nan_policy:
        kw["nan_policy"] = "omit" if sc["nan"] else "raise"
    return kw


def opt_str(sc, sim, wm, **extra):
    return args_str(ds=sc["name"], sim=sim, wm=wm, tw=sc["window"],
                    nan_policy="omit" if sc["nan"] else "raise", **extra)


def form(A, kind):
    if kind == "np64":
        return A
    if kind == "np32":
        return A.astype(np.float32)
    return torch.from_numpy(A.astype(np.float64 if kind == "torch64" else np.float32))


def torch_labels(L):
    """Labels as tensors where torch can hold them (strings and objects stay NumPy)."""
    if L is None or L.dtype.kind in "UO":
        return L
    return torch.from_numpy(L)


# --------------------------------------------------------------------------
# 1. Full-ranking metrics, iter_score_blocks, cross_modal_scores, @k metrics
# --------------------------------------------------------------------------


def full_ranking(sc, sim, wm, nj):
    Q, G, ql, gl = sc["Q"], sc["G"], sc["ql"], sc["gl"]
    kw = {**common_kwargs(sc, sim, wm), "n_jobs": nj}
    o = opt_str(sc, sim, wm, n_jobs=nj)
    cw = sc["nan"]
    call(f"mean_average_precision|{o},k=None,return_per_query=True",
         M.mean_average_precision, Q, G, ql, gl, k=None, return_per_query=True,
         count_warnings=cw, **kw)
    for k in (1, 50):
        for norm in ("relevant_in_topk", "min_k_total"):
            call(f"mean_average_precision|{o},k={k},ap_at_k_normaliser={norm},"
                 "return_per_query=True", M.mean_average_precision, Q, G, ql, gl, k=k,
                 ap_at_k_normaliser=norm, return_per_query=True, **kw)
    call(f"mean_reciprocal_rank|{o}", M.mean_reciprocal_rank, Q, G, ql, gl, **kw)
    for k in (1, 10):
        call(f"recall_at_k|{o},k={k}", M.recall_at_k, Q, G, ql, gl, k=k, **kw)
    for j, (gain, disc) in enumerate((("linear", "jarvelin"), ("linear", "standard"),
                                      ("exponential", "jarvelin"),
                                      ("exponential", "standard"))):
        k = (None, 10)[(sc["i"] + j) % 2]
        call(f"ndcg_at_k|{o},k={k},gain={gain},discount={disc}", M.ndcg_at_k,
             Q, G, ql, gl, k=k, gain=gain, discount=disc, **kw)


def score_blocks(sc, sim, wm, nj):
    name = f"iter_score_blocks|{opt_str(sc, sim, wm, n_jobs=nj)}|concat"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            blocks = list(M.iter_score_blocks(sc["Q"], sc["G"], sc["ql"], sc["gl"], n_jobs=nj,
                                              **common_kwargs(sc, sim, wm)))
        scores = np.concatenate([b[1] for b in blocks])
        relevance = np.concatenate([b[2] for b in blocks])
        rows = np.concatenate([np.arange(b[0].start, b[0].stop) for b in blocks])
    except Exception as exc:  # noqa: BLE001
        ERRORS.append(f"{name}: {type(exc).__name__}: {exc}")
        _store(name, np.array(f"ERROR {type(exc).__name__}"))
        return
    # the rows are a partition of the queries, in order (not the block sizes)
    _store(name + "|rows", rows)
    _store(name + "|scores", scores)
    _store(name + "|relevance", relevance)


def cross_modal(sc, sim, wm, nj):
    Q, G, ql = sc["Q"], sc["G"], sc["ql"]
    metrics = ("map", "mrr", "ndcg", "recall")
    base = dict(metrics=metrics, similarity=sim, working_memory=wm, n_jobs=nj,
                nan_policy="omit" if sc["nan"] else "raise")
    o = args_str(ds=sc["name"], labels="ql", sim=sim, wm=wm, n_jobs=nj,
                 nan_policy=base["nan_policy"])
    call(f"cross_modal_scores|{o},time=qt,time_window={sc['window']},k=None",
         M.cross_modal_scores, Q, G, ql, time=sc["qt"], time_window=sc["window"], **base)
    if sc["i"] % 2:
        call(f"cross_modal_scores|{o},time=qt,time_window={sc['window']},k=7,"
             "norm=min_k_total,gain=exponential,discount=standard", M.cross_modal_scores,
             Q, G, ql, k=7, ap_at_k_normaliser="min_k_total", gain="exponential",
             discount="standard", time=sc["qt"], time_window=sc["window"], **base)
    elif sc["window"] is not None:
        call(f"cross_modal_scores|{o},time=qt,time_window=None,k=5,metrics=map(str)",
             M.cross_modal_scores, Q, G, ql, time=sc["qt"], k=5, **{**base, "metrics": "map"})


def at_k(sc, sim, wm, k, fm, norm, gain, disc):
    if sc["lab"] == "str1d" and sc["nan"] and k != 5:
        # retrieval_metrics_at_k raises a TypeError on string labels with None at 79dda47
        # (np.unique of None and str); one case per data set keeps that behaviour checked
        return
    Q, G, ql, gl = sc["Q"], sc["G"], sc["ql"], sc["gl"]
    if fm.startswith("torch"):
        ql, gl = torch_labels(ql), torch_labels(gl)
        extra = {"device": "cpu"}
    else:
        extra = {}
    o = opt_str(sc, sim, wm, k=k, form=fm, norm=norm, gain=gain, discount=disc, **extra)
    call(f"retrieval_metrics_at_k|{o},return_per_query=True", M.retrieval_metrics_at_k,
         form(Q, fm), form(G, fm), ql, gl, k=k, ap_at_k_normaliser=norm, gain=gain,
         discount=disc, return_per_query=True, count_warnings=sc["nan"],
         **common_kwargs(sc, sim, wm), **extra)


def scenario_runs():
    for sc in SCENARIOS:
        i = sc["i"]
        n_g = len(sc["G"])
        sim = SIMS[i % 3]
        wm, nj = FULL_CONFIGS[i % len(FULL_CONFIGS)]
        full_ranking(sc, sim, wm, nj)
        score_blocks(sc, sim, wm, nj)
        if sc["square"]:
            cross_modal(sc, SIMS[(i + 2) % 3], wm, nj)
        # k >= n_gallery (the whole gallery in the top list): n_g or n_g + 3, alternately
        ks = (1, 5, 37) if sc.get("big") else (1, 5, 37, n_g + 3 * (i % 2))
        for j, k in enumerate(ks):
            norm, gain, disc = RANK_OPTS[(i + j) % len(RANK_OPTS)]
            at_k(sc, SIMS[(i + j) % 3], TOPK_WMS[(i + j) % 4], k, FORMS[(i + j) % 4],
                 norm, gain, disc)


def sweeps():
    """Every similarity x working memory x n_jobs (full ranking) / input form (@k)."""
    picks = [sc for sc in SCENARIOS if (sc["emb"], sc["lab"], sc["variant"]) in {
        ("gauss", "multi", "window"), ("rounded", "int1d", "plain"),
        ("integer", "none", "plain"), ("dupgal", "int1d", "nan"),
        ("neartie", "onehot", "window0")}]
    assert len(picks) == 5
    for p, sc in enumerate(picks):
        for s, sim in enumerate(SIMS):
            for w, wm in enumerate((None, 0.01, 0.05, 0.5)):
                for nj in (1, 2):
                    kw = {**common_kwargs(sc, sim, wm), "n_jobs": nj}
                    o = "SWEEP," + opt_str(sc, sim, wm, n_jobs=nj)
                    for k in (None, 10):
                        call(f"mean_average_precision|{o},k={k},return_per_query=True",
                             M.mean_average_precision, sc["Q"], sc["G"], sc["ql"], sc["gl"],
                             k=k, return_per_query=True, **kw)
                    call(f"ndcg_at_k|{o},k=20", M.ndcg_at_k, sc["Q"], sc["G"], sc["ql"],
                         sc["gl"], k=20, **kw)
                for fm in (FORMS[(p + s + w) % 4], FORMS[(p + s + w + 2) % 4]):
                    o = "SWEEP," + opt_str(sc, sim, wm, k=10, form=fm)
                    Q, G, ql, gl = form(sc["Q"], fm), form(sc["G"], fm), sc["ql"], sc["gl"]
                    extra = {}
                    if fm.startswith("torch"):
                        ql, gl, extra = torch_labels(ql), torch_labels(gl), {"device": "cpu"}
                    call(f"retrieval_metrics_at_k|{o},return_per_query=True",
                         M.retrieval_metrics_at_k, Q, G, ql, gl, k=10, return_per_query=True,
                         **common_kwargs(sc, sim, wm), **extra)


# --------------------------------------------------------------------------
# 2. mean_average_precision_torch
# --------------------------------------------------------------------------


def torch_map():
    rng = np.random.default_rng(7)
    n_q, n_g, dim = 130, 170, 8
    i = 0
    for emb in ("gauss", "rounded", "integer", "dupgal", "zerogal", "neartie"):
        Q, G = embeddings(emb, n_q, n_g, dim, rng, False)
        cls_q, cls_g = rng.integers(0, 5, n_q), rng.integers(0, 5, n_g)
        ind_q = rng.random((n_q, 6)) < 0.25
        ind_g = rng.random((n_g, 6)) < 0.25
        label_sets = {
            "bool_indicators": (torch.from_numpy(ind_q), torch.from_numpy(ind_g)),
            "float_indicators": (torch.from_numpy(ind_q * 1.0), torch.from_numpy(ind_g * 2.0)),
            "int_indicators": (torch.from_numpy(ind_q.astype(np.int64) * 3),
                               torch.from_numpy(ind_g.astype(np.int64))),
            "class_1d": (torch.from_numpy(cls_q), torch.from_numpy(cls_g)),
        }
        for lname, (lq, lg) in label_sets.items():
            for dt in (torch.float32, torch.float64):
                for wm in (None, 0.01, 0.5):
                    if (i + (wm is None)) % 2 and lname == "float_indicators":
                        i += 1
                        continue
                    o = args_str(emb=emb, n=f"{n_q}x{n_g}x{dim}", seed=7, labels=lname,
                                 dtype=str(dt), wm=wm)
                    call(f"mean_average_precision_torch|{o},return_per_query=True",
                         M.mean_average_precision_torch, torch.from_numpy(Q).to(dt),
                         torch.from_numpy(G).to(dt), lq, lg, working_memory=wm,
                         return_per_query=True)
                    i += 1


# --------------------------------------------------------------------------
# 3. Score-matrix functions
# --------------------------------------------------------------------------


def score_matrices(rng, n_q, n_g):
    S = rng.standard_normal((n_q, n_g))
    mats = {
        "gauss64": S,
        "gauss32": S.astype(np.float32),
        "round1": np.round(S, 1),
        "int0to3": rng.integers(0, 4, (n_q, n_g)).astype(np.float64),
        "neartie": np.round(S, 1) + rng.integers(0, 3, (n_q, n_g)) * 1e-12,
        "neginf": np.where(rng.random((n_q, n_g)) < 0.2, -np.inf, np.round(S, 1)),
        "constant": np.full((n_q, n_g), 0.25),
    }
    return mats


def per_query_functions():
    rng = np.random.default_rng(11)
    for (n_q, n_g) in ((40, 60), (97, 301)):
        mats = score_matrices(rng, n_q, n_g)
        rel = rng.random((n_q, n_g)) < 0.1
        rel[: n_q // 10] = False  # queries without a relevant item
        gains = rng.integers(0, 4, (n_q, n_g)) * (rng.random((n_q, n_g)) < 0.3)
        gains[: n_q // 10] = 0
        for mname, S in mats.items():
            o = args_str(scores=mname, n=f"{n_q}x{n_g}", seed=11)
            call(f"average_precision_per_query|{o},k=None", M.average_precision_per_query,
                 S, rel)
            for k in (1, 3, 10, 50, n_g + 5):
                for norm in ("relevant_in_topk", "min_k_total"):
                    call(f"average_precision_per_query|{o},k={k},norm={norm}",
                         M.average_precision_per_query, S, rel, k=k, ap_at_k_normaliser=norm)
            call(f"reciprocal_rank_per_query|{o}", M.reciprocal_rank_per_query, S, rel)
            for k in (1, 5, 20):
                call(f"recall_per_query|{o},k={k}", M.recall_per_query, S, rel, k=k)
            for k in (None, 1, 5, 20):
                for gain in ("linear", "exponential"):
                    for disc in ("jarvelin", "standard"):
                        call(f"ndcg_per_query|{o},k={k},gain={gain},discount={disc}",
                             M.ndcg_per_query, S, gains, k=k, gain=gain, discount=disc)
            if mname != "gauss64":  # bool relevance as ints / graded gains as floats
                call(f"average_precision_per_query|{o},k=None,relevance=int",
                     M.average_precision_per_query, S, rel.astype(np.int64))
                call(f"ndcg_per_query|{o},k=10,gains=float", M.ndcg_per_query, S,
                     gains.astype(np.float64), k=10)


def counterpart_and_random():
    rng = np.random.default_rng(13)
    mats = {}
    for n in (1, 2, 50, 200):
        mats[f"gauss_n{n}"] = rng.standard_normal((n, n))
    mats["int_n100"] = rng.integers(0, 3, (100, 100)).astype(np.float64)
    mats["round_n120"] = np.round(rng.standard_normal((120, 120)), 1)
    mats["constant_n30"] = np.ones((30, 30))
    mats["int32_n40"] = rng.integers(-3, 3, (40, 40)).astype(np.int32)
    mats["float32_n80"] = rng.standard_normal((80, 80)).astype(np.float32)
    S = np.round(rng.standard_normal((90, 90)), 1)
    S[rng.random(S.shape) < 0.3] = -np.inf
    mats["neginf30pct_n90"] = S
    S = rng.standard_normal((60, 60))
    S[np.arange(0, 60, 4), np.arange(0, 60, 4)] = -np.inf  # gold items at -inf
    S[5] = -np.inf  # a whole row
    S[:, 7] = -np.inf  # a whole column
    mats["neginf_diag_row_col_n60"] = S
    S = rng.standard_normal((70, 70))
    S[rng.random(S.shape) < 0.1] = np.inf
    mats["posinf10pct_n70"] = S
    for name, S in mats.items():
        call(f"counterpart_reciprocal_ranks|scores={name},seed=13",
             M.counterpart_reciprocal_ranks, S)
    call("counterpart_reciprocal_ranks|scores=list_2x2",
         M.counterpart_reciprocal_ranks, [[1.0, 0.0], [2.0, 0.5]])
    for n in list(range(1, 61)) + [100, 1000, 12345, 10**6]:
        call(f"random_mrr|n_candidates={n}", M.random_mrr, n)


# --------------------------------------------------------------------------
# 4. search_embeddings
# --------------------------------------------------------------------------


def search():
    rng = np.random.default_rng(17)
    n_q, n_g, dim = 120, 300, 8
    for emb in ("gauss", "rounded", "integer", "dupgal", "zerogal", "neartie"):
        Q, G = embeddings(emb, n_q, n_g, dim, rng, False)
        for dt in (np.float32, np.float64):
            for k in (1, 10, 37, n_g + 5):
                for wm in (None, 0.003, 0.5):
                    for sim in ("dot", "cosine"):
                        o = args_str(emb=emb, n=f"{n_q}x{n_g}x{dim}", seed=17,
                                     dtype=np.dtype(dt).name, k=k, wm=wm, sim=sim,
                                     backend="torch")
                        call(f"search_embeddings|{o}", search_embeddings, Q.astype(dt),
                             G.astype(dt), k, similarity=sim, backend="torch",
                             working_memory=wm)
        # tensors in, and mixed precision (query float64, gallery float32)
        for k in (10, 37):
            o = args_str(emb=emb, n=f"{n_q}x{n_g}x{dim}", seed=17, k=k, input="torch32")
            call(f"search_embeddings|{o}", search_embeddings,
                 torch.from_numpy(Q.astype(np.float32)), torch.from_numpy(G.astype(np.float32)),
                 k, working_memory=0.01)
            o = args_str(emb=emb, n=f"{n_q}x{n_g}x{dim}", seed=17, k=k, input="q64_g32")
            call(f"search_embeddings|{o}", search_embeddings, Q, G.astype(np.float32), k)
    # a gallery of several default-sized chunks (4,096 rows each)
    for emb in ("gauss", "rounded", "integer"):
        Q, G = embeddings(emb, 64, 9000, 4, rng, False)
        for dt in (np.float32, np.float64):
            for k in (10, 37):
                for wm in (None, 0.5):
                    o = args_str(emb=emb, n="64x9000x4", seed=17, dtype=np.dtype(dt).name,
                                 k=k, wm=wm, sim="dot", backend="torch")
                    call(f"search_embeddings|{o}", search_embeddings, Q.astype(dt),
                         G.astype(dt), k, working_memory=wm)


# --------------------------------------------------------------------------
# 5. Under scikit-learn's working_memory config (the new engine reads it)
# --------------------------------------------------------------------------


def sklearn_working_memory():
    """A few calls inside ``sklearn.config_context(working_memory=...)`` (MiB).

    Opt-in (``SCAN_CHECK_SKLEARN_WM=1``), because the outputs are NOT expected to
    be identical: 79dda47 ignores the config; d215c8d bounds its CPU scans by it
    where it is below 64 MiB, and 79dda47's own full-ranking scores depend on the
    block shape in their last bits (a 1-row block's product differs from a
    150-row block's by up to ~4e-15), which on a gallery with duplicated rows
    changes tie groups and hence AP (dupgal/int1d/nan: 6 queries, up to 6e-4).
    With the config set, d215c8d equals 79dda47 run with the smaller
    working_memory (diag/sk_wm.py).
    """
    import sklearn

    picks = [sc for sc in SCENARIOS if (sc["emb"], sc["lab"], sc["variant"]) in {
        ("rounded", "multi", "window"), ("integer", "none", "plain"),
        ("dupgal", "int1d", "nan")}]
    rng = np.random.default_rng(19)
    Qs, Gs = embeddings("rounded", 90, 400, 8, rng, False)
    lq, lg = (torch.from_numpy(rng.integers(0, 4, n)) for n in (90, 400))
    for cfg in (0.002, 0.02, 1.0):
        with sklearn.config_context(working_memory=cfg):
            for sc in picks:
                for wm in (None, 0.5):
                    o = f"sklearn_working_memory={cfg}," + opt_str(sc, "dot", wm, n_jobs=None)
                    kw = common_kwargs(sc, "dot", wm)
                    call(f"mean_average_precision|{o},k=None,return_per_query=True",
                         M.mean_average_precision, sc["Q"], sc["G"], sc["ql"], sc["gl"],
                         return_per_query=True, **kw)
                    call(f"ndcg_at_k|{o},k=10", M.ndcg_at_k, sc["Q"], sc["G"], sc["ql"],
                         sc["gl"], k=10, **kw)
                    call(f"retrieval_metrics_at_k|{o},k=10,return_per_query=True",
                         M.retrieval_metrics_at_k, sc["Q"], sc["G"], sc["ql"], sc["gl"], k=10,
                         return_per_query=True, **kw)
            for wm in (None, 0.5):
                for k in (5, 37):
                    o = args_str(sklearn_working_memory=cfg, emb="rounded", n="90x400x8",
                                 seed=19, k=k, wm=wm)
                    call(f"search_embeddings|{o}", search_embeddings, Qs, Gs, k,
                         working_memory=wm)
                o = args_str(sklearn_working_memory=cfg, emb="rounded", n="90x400x8", seed=19,
                             labels="class_1d", wm=wm)
                call(f"mean_average_precision_torch|{o},return_per_query=True",
                     M.mean_average_precision_torch, torch.from_numpy(Qs),
                     torch.from_numpy(Gs), lq, lg, working_memory=wm, return_per_query=True)


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def main():
    sections = (("scenarios", scenario_runs), ("sweeps", sweeps), ("torch_map", torch_map),
                ("per_query", per_query_functions), ("counterpart", counterpart_and_random),
                ("search", search))
    if os.environ.get("SCAN_CHECK_SKLEARN_WM"):  # opt-in: expected to differ, see its doc
        sections += (("sklearn_wm", sklearn_working_memory),)
    for label, func in sections:
        start, before = time.perf_counter(), len(RESULTS)
        func()
        print(f"  {label:12s} {len(RESULTS) - before:6d} keys  "
              f"{time.perf_counter() - start:6.1f} s", file=sys.stderr)
    n_outputs = sum(len(v) if isinstance(v, tuple) else 1 for v in RESULTS.values())
    with open(OUT, "wb") as f:
        pickle.dump(RESULTS, f, protocol=pickle.HIGHEST_PROTOCOL)
    print(f"{REPO}: {len(RESULTS)} keys, {n_outputs} outputs, {len(ERRORS)} error cases, "
          f"{time.perf_counter() - T0:.1f} s -> {OUT}")
    if os.environ.get("PROFILE"):
        by_func = {}
        for seconds, name in TIMES:
            by_func[name.split("|")[0]] = by_func.get(name.split("|")[0], 0.0) + seconds
        for func, seconds in sorted(by_func.items(), key=lambda p: -p[1]):
            print(f"  {func:32s} {seconds:7.2f} s")
        by_wm = {}
        for seconds, name in TIMES:
            wm = [p for p in name.split(",") if p.startswith("wm=")]
            key = (name.split("|")[0], wm[0] if wm else "")
            by_wm[key] = by_wm.get(key, 0.0) + seconds
        for key, seconds in sorted(by_wm.items(), key=lambda p: -p[1])[:12]:
            print(f"  {key[0]:32s} {key[1]:10s} {seconds:7.2f} s")
        for seconds, name in sorted(TIMES, reverse=True)[:10]:
            print(f"  {seconds:7.3f} s  {name[:200]}")
    for line in ERRORS:
        print("  ERROR CASE:", line[:300])


if __name__ == "__main__":
    main()
