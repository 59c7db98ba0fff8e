"""A 100-fit grid search with the compiled training step: does any fit fall back to eager?

On the CPU with ``compile_step={"backend": "aot_eager"}``: one SAM fit eager, compiled cold,
at a new width and at the same width again (the compile's cost), then ``GridSearchCV`` over
``--candidates`` hidden widths x ``--folds`` folds, counting the fits that warned "could not
compile" (target 0) and the graphs dynamo compiled.  Read more in docs/training.md.
Full run: about 7 min on 2 cores (``--quick``: 12 fits).
"""

import time
import warnings

import numpy as np

from _common import timed_fit



def arguments(parser):
    parser.add_argument("--candidates", type=int, default=20, help="hidden widths (20)")
    parser.add_argument("--folds", type=int, default=5, help="folds per width (5)")


def _model(d, **params):
    from temporal_xmodal import SAMEmbedder

    return SAMEmbedder(n_image_features=d, embedding_dim=4, max_epochs=1, batch_size=32,
                       validation_fraction=0, random_state=0, device="cpu",
                       **{"hidden_dim": 8, **params})


def measure(args):
    import torch
    from sklearn.model_selection import GridSearchCV, KFold
    from torch._dynamo.utils import counters

    candidates, folds = (4, 3) if args.quick else (args.candidates, args.folds)
    rng, d = np.random.default_rng(0), 16
    X = np.hstack([rng.normal(size=(160, d)), rng.normal(size=(160, d)),
                   np.linspace(1990.0, 2000.0, 160)[:, None]])  # 128 rows a fold at 5 folds
    y = rng.integers(0, 5, 160)
    options = {"backend": "aot_eager"}
    eager = timed_fit(_model(d, compile_step=False), X, y)
    cold = timed_fit(_model(d, compile_step=options), X, y)
    warm = timed_fit(_model(d, hidden_dim=9, compile_step=options), X, y)
    again = timed_fit(_model(d, hidden_dim=9, compile_step=options), X, y)
    torch._dynamo.reset()
    counters.clear()
    search = GridSearchCV(_model(d, compile_step=options),
                          {"hidden_dim": list(range(10, 10 + candidates))},
                          cv=KFold(folds), refit=False, error_score="raise")
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        search.fit(X, y)
    wall = time.perf_counter() - start
    fallbacks = [str(w.message) for w in record if "could not compile" in str(w.message)]
    limit = int(torch._dynamo.config.recompile_limit)
    print(f"{candidates * folds} compiled fits in {wall:.0f} s, {len(fallbacks)} fell back; "
          f"{int(counters['stats']['unique_graphs'])} graphs (recompile limit {limit})")
    return {"estimator": "SAMEmbedder", "backend": "aot_eager", "rows": len(X),
            "one_fit_s": {"eager": eager, "compiled_cold": cold, "compiled_new_width": warm,
                          "compiled_same_width": again},
            "cold_compile_s": cold - eager, "warm_compile_s": warm - again,
            "search": {"fits": candidates * folds, "candidates": candidates, "folds": folds,
                       "wall_s": wall, "fell_back": len(fallbacks),
                       "graphs": int(counters["stats"]["unique_graphs"]),
                       "recompile_limit": limit, "fallback_messages": fallbacks[:5],
                       "scores_finite": bool(np.isfinite(
                           search.cv_results_["mean_test_score"]).all())}}
