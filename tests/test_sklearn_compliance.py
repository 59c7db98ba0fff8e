"""scikit-learn compliance of every estimator (``parametrize_with_checks``).

Expected failures are listed per estimator with the reason.
"""

from sklearn.utils.estimator_checks import parametrize_with_checks

from _tiny import tiny
from temporal_xmodal import (
    BinnedProcrustesEmbedder,
    CCACrossModal,
    DiachronicEmbedder,
    SAMEmbedder,
    SequentialCrossModal,
    TempXNetEmbedder,
)

#: Small networks and few epochs keep the checks fast; behaviour is unchanged.
ESTIMATORS = [
    CCACrossModal(),
    tiny(SAMEmbedder),
    tiny(TempXNetEmbedder),
    tiny(DiachronicEmbedder),
    tiny(BinnedProcrustesEmbedder, base_estimator=tiny(CCACrossModal, n_components=1), bins=3),
    tiny(BinnedProcrustesEmbedder, base_estimator=tiny(TempXNetEmbedder), bins=3),
    tiny(SequentialCrossModal),
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
