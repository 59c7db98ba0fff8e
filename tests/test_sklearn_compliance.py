"""scikit-learn compliance of every estimator (``parametrize_with_checks``).

Expected failures are listed per estimator with the reason.
"""

from sklearn.utils.estimator_checks import parametrize_with_checks

from temporal_xmodal import CCACrossModal

ESTIMATORS = [CCACrossModal()]

#: check name -> reason, per estimator class.
EXPECTED_FAILURES = {
    "CCACrossModal": {},
}


def _expected_failed_checks(estimator):
    return EXPECTED_FAILURES.get(type(estimator).__name__, {})


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)
