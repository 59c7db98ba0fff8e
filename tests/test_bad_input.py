"""Bad input gets a clear answer: every case an error or a warning naming the problem.

The case table is ``tests/_bad_input.py``: NaN, inf, huge and denormal features, bad or
missing times, strings and dates in the wrong place, empty or one-row X, bad labels, bad
``n_image_features`` / ``time_unit`` / ``random_state``, bad transform input, an unfitted
estimator, a Ctrl-C in the first epoch, warm starts on other widths, and bad arguments to
the metrics, the bins and the scorers; and round 3 (issues 32 and 35): rate strings with a
count ("1/2Y"), Ctrl-C in a second fit and in Binned, wrong-length metric times, unordered and
ragged search ids, a misleading "same time" warning, the default half split of NumPy X,
whole rows to ``transform_text``, ambiguous "m", implausible time magnitudes, a default
window that spans the data, a label column after the date; and issue 41's families
(``tests/_bad_input_issue41.py``): ``pipe[-1]`` given arrays, a validation split of one row,
bools as counts, ``pd.NaT``, whole rows as an array through a Pipeline, a huge
``intra_balance``, a share too small to represent, staged batches on a missing GPU, the
StillImprovingWarning of a short fit, the date prior at its defaults, every paper setting;
and issue 48's (``tests/_bad_input_issue48.py``): dates outside ``datetime64[ns]``,
checkpoint figures that cannot rank, the date prior's held-out pairs, its Ctrl-C and its
default prior in a search, captions and their times, compiled steps of many fits,
``search_embeddings``' device, subpackages after a bare import, a ``"+5%"`` share, the meta
device, an 8,000-bin one-hot; and issue 57's (``tests/_bad_input_issue57.py``): the compare
job's time unit and estimator names, ``.npz`` clashes, Ctrl-C and folders of ``--seeds`` runs,
one class, a NaN validation figure, the LR schedule after Ctrl-C, genuine dates, a numeric
``--window``, knobs that cannot act, warm-start progress, NaN captions, a header-only CSV,
huge ``--seeds``, a zero margin.
Each case must end ``clear`` (an error or warning naming the problem) or ``sane`` (legitimate
input, finite output); ``silent``, ``misleading`` (an answer whose words are wrong),
``obscure`` and ``hang`` fail it.
``benchmarks/probe_bad_input.py`` counts the same outcomes into JSON.
"""

import numpy as np
import pytest

from _bad_input import ESTIMATORS, Case, Misleading, Wrong, all_cases, classify


CASES = all_cases()

#: Cases whose fix lives in a file another change owns, with what it waits on (strict: a
#: fixed case fails here until it is taken off this list).
PENDING = {
}


def _param(owner, case):
    marks = ([pytest.mark.xfail(strict=True, reason="waits on " + PENDING[case.name])]
             if case.name in PENDING else [])
    return pytest.param(owner, case, marks=marks, id=f"{owner}-{case.name}")


@pytest.mark.parametrize("owner, case", [_param(owner, case) for owner, case in CASES])
def test_bad_input_gets_a_clear_answer(owner, case):
    outcome, detail, due = classify(case, owner)
    assert outcome in ("clear", "sane"), f"{outcome} (due: {due}): {detail}"


def test_every_estimator_meets_every_case():
    per_estimator = [case.name for owner, case in CASES if owner == ESTIMATORS[0]]
    assert len(per_estimator) == len(set(per_estimator)) == 69
    assert len(CASES) == 6 * 69 + 35 + 16 + 18 + 24 + 16  # ... issue 48, issue 57


@pytest.mark.parametrize("run, due, expected", [
    (lambda name: np.ones(3), "error", "silent"),  # no error where one was due
    (lambda name: np.full(3, np.nan), "either", "silent"),  # NaN output without a word
    (lambda name: np.ones(3), "warn", "silent"),  # no warning where one was due
    (lambda name: 1 / 0, "error", "obscure"),  # not a ValueError / TypeError
    (lambda name: int("nothing to see"), "error", "obscure"),  # does not name the problem
    (lambda name: int("bogus"), "ok", "obscure"),  # legitimate input refused
    (lambda name: int("bogus"), "error", "clear"),
    (lambda name: np.ones(3), "ok", "sane"),
    (lambda name: Wrong("read '1/2Y' as 1/12 per year"), "ok", "silent"),  # a wrong answer
    (lambda name: Misleading("'could not compile' when a cache filled up"), "ok",
     "misleading"),  # an answer whose words are wrong
])
def test_classify_catches_silent_and_obscure_answers(run, due, expected):
    """The cases can fail: an answer that is silent, misleading or obscure is classified so."""
    assert classify(Case("probe", run, due, ["bogus"]), "SAMEmbedder")[0] == expected
