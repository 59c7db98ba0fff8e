"""The reference rankings of metrics/_counterpart.py: what a random ranking scores."""

import numpy as np
import pytest

from temporal_xmodal.metrics import average_precision_per_query, random_map, random_mrr


@pytest.mark.parametrize("multilabel", [False, True])
def test_random_map_is_the_mean_ap_of_random_rankings(multilabel):
    rng = np.random.default_rng(0)
    if multilabel:
        y = rng.integers(0, 2, (15, 3))
        y[y.sum(axis=1) == 0, 0] = 1
        relevance = (y @ y.T) > 0
    else:
        y = rng.integers(0, 3, 15)
        relevance = y[:, None] == y[None, :]
    simulated = np.mean([average_precision_per_query(rng.random((15, 15)), relevance).mean()
                         for _ in range(4000)])
    assert random_map(y) == pytest.approx(simulated, abs=0.005)
    assert random_map(y, block_size=4) == random_map(y)


def test_random_map_bounds():
    assert random_map(np.arange(6)) == pytest.approx(random_mrr(6))  # one relevant item
    assert random_map(np.zeros(6)) == pytest.approx(1.0)  # every item relevant
