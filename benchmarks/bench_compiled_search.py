"""A 100-fit grid search with the compiled training step: does any fit fall back to eager?

Issue 48, family 5: every ``CompiledStep`` once compiled one module-level function, so the
graphs of every fit in a process piled up on one code object until dynamo's recompile limit
(8); from about the fifth fit of a search on, each fit warned "torch.compile could not
compile the training step (FailOnRecompileLimitHit ...)" and ran eagerly.  Steps now share
compiled graphs only where their signature (module, parameter shapes, batch shapes, the
modules' numbers) agrees (``temporal_xmodal/training/_compiled.py``).

What it measures, on the CPU with ``compile_step={"backend": "aot_eager"}`` (dynamo and
AOTAutograd, eager kernels: the same graphs inductor would compile, without a C++ compiler):

1. **A cold compile**: the first compiled fit of the process minus the same fit eager
   (dynamo's own start, tracing, AOTAutograd), and a warm one (a second width).
2. **The search**: ``GridSearchCV`` over ``--candidates`` hidden widths × ``--folds`` folds
   (100 fits by default, at dynamo's default recompile limit), with the number of fits that
   warned "could not compile" (the target is 0), the graphs dynamo compiled (one per
   candidate when the folds agree in shape) and the wall time.

Usage::

    python benchmarks/bench_compiled_search.py            # 100 fits, ~2 min on 2 cores
    python benchmarks/bench_compiled_search.py --quick    # 12 fits

Writes ``benchmarks/results/bench_compiled_search.json``.
"""

import sys
import time
import warnings

import numpy as np

from _common import make_parser, write_results

NAME = "bench_compiled_search"


def _data(n, d=16, seed=0):
    rng = np.random.default_rng(seed)
    X = np.hstack([rng.normal(size=(n, d)), rng.normal(size=(n, d)),
                   np.linspace(1990.0, 2000.0, n)[:, None]])
    return X, rng.integers(0, 5, n), d


def _model(d, **params):
    from temporal_xmodal import SAMEmbedder

    return SAMEmbedder(n_image_features=d, embedding_dim=4, max_epochs=1, batch_size=32,
                       validation_fraction=0, random_state=0, device="cpu",
                       **{"hidden_dim": 8, **params})


def _timed_fit(model, X, y):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    return time.perf_counter() - start


def main(argv=None):
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=20,
                        help="hidden widths searched (default 20)")
    parser.add_argument("--folds", type=int, default=5, help="folds per width (default 5)")
    args = parser.parse_args(argv)
    candidates, folds = (4, 3) if args.quick else (args.candidates, args.folds)

    import torch
    from sklearn.model_selection import GridSearchCV, KFold
    from torch._dynamo.utils import counters

    X, y, d = _data(160)  # 128 training rows a fold at 5 folds: four batches of 32
    options = {"backend": "aot_eager"}
    eager = _timed_fit(_model(d, compile_step=False), X, y)
    cold = _timed_fit(_model(d, compile_step=options), X, y)
    warm = _timed_fit(_model(d, hidden_dim=9, compile_step=options), X, y)
    again = _timed_fit(_model(d, hidden_dim=9, compile_step=options), X, y)
    print(f"one SAM fit (160 rows, 1 epoch): eager {eager:.2f} s; compiled (aot_eager) cold "
          f"{cold:.2f} s, a new width {warm:.2f} s, the same width again {again:.2f} s")

    torch._dynamo.reset()
    counters.clear()
    widths = list(range(10, 10 + candidates))
    search = GridSearchCV(_model(d, compile_step=options), {"hidden_dim": widths},
                          cv=KFold(folds), refit=False, error_score="raise")
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        search.fit(X, y)
    wall = time.perf_counter() - start
    fallbacks = [str(w.message) for w in record if "could not compile" in str(w.message)]
    n_fits = candidates * folds
    graphs = int(counters["stats"]["unique_graphs"])
    print(f"GridSearchCV: {n_fits} compiled fits ({candidates} widths x {folds} folds) in "
          f"{wall:.0f} s; {len(fallbacks)} fell back to eager; dynamo compiled {graphs} "
          f"graphs (recompile limit {torch._dynamo.config.recompile_limit})")
    for message in fallbacks[:3]:
        print("  fallback:", message[:200])
    payload = {
        "quick": bool(args.quick), "estimator": "SAMEmbedder", "backend": "aot_eager",
        "rows": int(len(X)), "one_fit_s": {"eager": eager, "compiled_cold": cold,
                                           "compiled_new_width": warm,
                                           "compiled_same_width": again},
        "cold_compile_s": cold - eager, "warm_compile_s": warm - again,
        "search": {"fits": n_fits, "candidates": candidates, "folds": folds,
                   "wall_s": wall, "fell_back": len(fallbacks), "graphs": graphs,
                   "recompile_limit": int(torch._dynamo.config.recompile_limit),
                   "fallback_messages": fallbacks[:5],
                   "scores_finite": bool(np.isfinite(
                       search.cv_results_["mean_test_score"]).all())},
    }
    write_results(NAME, payload, args.output_dir)
    return 0 if not fallbacks else 1


if __name__ == "__main__":
    sys.exit(main())
