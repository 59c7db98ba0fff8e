"""comparison.settings.training_epochs: one reading of a compared fit's epochs, for the job's
time estimate and results.json alike (two readings with opposite precedence disagreed on a
Binned model that sets its own max_epochs)."""

from temporal_xmodal import BinnedProcrustesEmbedder, CCACrossModal, DiachronicEmbedder
from temporal_xmodal.comparison.estimate import estimate_seconds
from temporal_xmodal.comparison.settings import training_epochs
from temporal_xmodal.estimators.binned import default_base_estimator


def test_an_estimators_own_epochs_come_before_its_bases():
    assert training_epochs(DiachronicEmbedder(max_epochs=7)) == 7
    assert training_epochs(BinnedProcrustesEmbedder()) == default_base_estimator().max_epochs
    assert training_epochs(BinnedProcrustesEmbedder(max_epochs=4)) == 4
    assert training_epochs(CCACrossModal()) is None


def test_the_estimate_grows_with_the_epochs_it_reads():
    few, n = estimate_seconds(3000, max_epochs=2, estimators=["Binned+Procrustes"])
    many, _ = estimate_seconds(3000, max_epochs=20, estimators=["Binned+Procrustes"])
    assert n == 2 and many > few
