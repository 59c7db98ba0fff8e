"""The metrics name a wrong-length argument and both lengths.

``cross_modal_scores``, ``mean_average_precision``, ``recall_at_k`` and
``retrieval_metrics_at_k`` given time or label arrays of another length than the
embeddings: the message names the argument, its length and the rows it must match.
"""

import numpy as np
import pytest

from temporal_xmodal.metrics import (
    cross_modal_scores,
    mean_average_precision,
    recall_at_k,
    retrieval_metrics_at_k,
)


def test_cross_modal_scores_wrong_length_time_names_time_and_both_lengths():
    Q = np.random.default_rng(0).standard_normal((20, 4))
    lab = np.arange(20) % 3
    with pytest.raises(ValueError, match=r"time has 5 value\(s\).*20 rows"):
        cross_modal_scores(Q, Q, lab, time=np.ones(5), time_window=1.0)


@pytest.mark.parametrize("metric", [mean_average_precision, recall_at_k,
                                    retrieval_metrics_at_k])
@pytest.mark.parametrize("which", ["query_time", "gallery_time"])
def test_metric_wrong_length_time_names_the_argument_and_both_lengths(metric, which):
    rng = np.random.default_rng(0)
    Q, G = rng.standard_normal((10, 4)), rng.standard_normal((12, 4))
    times = {"query_time": np.zeros(10), "gallery_time": np.zeros(12)}
    times[which] = np.zeros(5)
    n = 10 if which == "query_time" else 12
    with pytest.raises(ValueError, match=rf"{which} has 5 value\(s\).*{n}"):
        metric(Q, G, np.arange(10) % 3, np.arange(12) % 3, time_window=1.0, **times)


def test_metric_wrong_length_labels_with_omit_names_them():
    rng = np.random.default_rng(0)
    Q, G = rng.standard_normal((10, 4)), rng.standard_normal((12, 4))
    gl = np.r_[np.nan, np.arange(4.0)]
    with pytest.raises(ValueError, match=r"gallery_labels has 5 row\(s\).*12"):
        mean_average_precision(Q, G, np.arange(10) % 3, gl, nan_policy="omit")
