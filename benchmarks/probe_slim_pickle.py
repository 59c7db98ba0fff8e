#!/usr/bin/env python
"""Why a fitted net's pickle is our slim copy, not skorch's ``trim_for_prediction`` (issue 47).

Fits a tiny CPU ``DiachronicEmbedder``, then compares the two ways of pickling only what
inference needs: ``CrossModalNet.inference_copy`` (what the estimator pickles by default) and
skorch's ``NeuralNet.trim_for_prediction`` (on a deep copy: it trims in place).  Records the
pickle sizes, whether the per-epoch history survives, whether the live net is left untouched,
and whether the unpickled model can continue training (a warm start).

Usage: ``python benchmarks/probe_slim_pickle.py``; writes
``benchmarks/results/probe_slim_pickle.json``.
"""

import copy
import os
import pickle
import sys
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402

from _common import make_parser, write_results  # noqa: E402
from temporal_xmodal import DiachronicEmbedder  # noqa: E402
from temporal_xmodal.datasets import make_temporal_crossmodal  # noqa: E402

torch.set_num_threads(1)


def main():
    args = make_parser(__doc__).parse_args()
    warnings.simplefilter("ignore")
    X, y, info = make_temporal_crossmodal(300, return_info=True, random_state=0)
    est = DiachronicEmbedder(n_image_features=info.n_image_features, max_epochs=2,
                             hidden_dim=16, embedding_dim=8, random_state=0).fit(X, y)
    net = est.net_
    ours = net.inference_copy()
    trimmed = copy.deepcopy(net)
    trimmed.trim_for_prediction()
    try:
        trimmed.partial_fit(None)
        trimmed_trains = "yes"
    except Exception as exc:  # skorch: SkorchTrainingImpossibleError
        trimmed_trains = f"no: {type(exc).__name__}"
    warm = pickle.loads(pickle.dumps(est)).set_params(warm_start=True, max_epochs=1).fit(X, y)
    figures = {
        "pickle_bytes": {"inference_copy": len(pickle.dumps(ours)),
                         "trim_for_prediction": len(pickle.dumps(trimmed)),
                         "full_net": len(pickle.dumps(net))},
        "history_epochs_kept": {"inference_copy": len(ours.history),
                                "trim_for_prediction": len(trimmed.history)},
        "live_net_untouched": {"inference_copy": net.optimizer_ is not None,
                               "trim_for_prediction": "trims in place (run on a deep copy)"},
        "continues_training": {"inference_copy": f"yes: a warm start from the pickle trained "
                                                 f"to epoch {len(warm.net_.history)}",
                               "trim_for_prediction": trimmed_trains},
    }
    for key, value in figures.items():
        print(f"{key}: {value}")
    write_results("probe_slim_pickle", {"quick": args.quick, **figures}, args.output_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
