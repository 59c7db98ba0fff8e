"""scikit-learn compliance of every estimator (``parametrize_with_checks``).

Expected failures are listed per estimator with the reason.
"""

from sklearn.utils.estimator_checks import parametrize_with_checks

from temporal_xmodal import (
    BinnedProcrustesEmbedder,
    CCACrossModal,
    DiachronicEmbedder,
    SAMEmbedder,
    SequentialCrossModal,
    TempXNetEmbedder,
)

#: Small networks and few epochs keep the checks fast; behaviour is unchanged.
_TINY = dict(max_epochs=2, embedding_dim=4, hidden_dim=8, batch_size=16, random_state=0)

ESTIMATORS = [
    CCACrossModal(),
    SAMEmbedder(**_TINY),
    TempXNetEmbedder(**_TINY),
    DiachronicEmbedder(time_dim=4, **_TINY),
    BinnedProcrustesEmbedder(CCACrossModal(n_components=1), bins=3),
    BinnedProcrustesEmbedder(TempXNetEmbedder(**_TINY), bins=3, random_state=0),
    SequentialCrossModal(max_epochs=2, embedding_dim=4, hidden_dim=8, common_dim=4,
                         batch_size=16, n_memory=10, n_meta_train=10, random_state=0),
]

_FLOAT32 = (
    "the towers run in float32 (fast, GPU-friendly); a float32 matmul rounds differently "
    "for different batch shapes, so a row embedded alone and within a batch can differ "
    "by ~1e-7, above the check's 1e-7 tolerance (identical to float32 precision)"
)

#: check name -> reason, per estimator class.
EXPECTED_FAILURES = {
    "CCACrossModal": {},
    "SAMEmbedder": {
        "check_methods_subset_invariance": _FLOAT32,
    },
    "TempXNetEmbedder": {
        "check_methods_subset_invariance": _FLOAT32,
    },
    "DiachronicEmbedder": {
        "check_methods_subset_invariance": _FLOAT32,
    },
    # binary codes: a float32 rounding difference can flip a bit whose h is ~0
    "SequentialCrossModal": {
        "check_methods_subset_invariance": _FLOAT32,
    },
}


def _expected_failed_checks(estimator):
    if isinstance(estimator, BinnedProcrustesEmbedder):  # inherits its base's float32 caveat
        return _expected_failed_checks(estimator.base_estimator)
    return EXPECTED_FAILURES.get(type(estimator).__name__, {})


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)
