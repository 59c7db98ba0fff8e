"""``use_time``: a time-aware estimator fitted with its times, or as its constant-time control.

A time-aware estimator's *constant-time control* is the same estimator, seed and rows with
every time set to one instant: the static model of the same method, which is what time has
to beat.  ``use_time=True`` (the default: the published method) fits with the times;
``use_time=False`` fits the control, which projects every item at the one instant it was
trained on, whatever time it is asked for.  The fitted estimator records which it is
(``uses_time_``).

Choosing between the two is model selection, done the scikit-learn way, on the question the
model is for: ``GridSearchCV(estimator, {"use_time": [True, False]},
scoring=SCORERS["tmap@50"])`` (docs/time.md, "Does time pay?").  No fit here fits twice.

The rule has one owner, :func:`~temporal_xmodal.estimators._neural.training_times` (the
times a fit trains on) and :func:`~temporal_xmodal.estimators._neural.projection_times`
(the times a fitted model projects at), which the neural estimators' one fit and
BinnedProcrustesEmbedder read alike; this module holds the parameter's documentation.  The parameter's
constraint is :data:`temporal_xmodal._constraints.USE_TIME_CONSTRAINT`.
"""

#: The ``use_time`` parameter's documentation, shared by the time-aware estimators.
USE_TIME_DOC = """    use_time : bool, default=True
        ``True``: train and project with the times (the published method).
        ``False``: the constant-time control (every time set to one instant;
        a static model of this method, projected at that instant whatever
        ``time=`` says).  Whether time pays on your data is a model selection:
        ``GridSearchCV(est, {"use_time": [True, False]},
        scoring=SCORERS["tmap@50"])`` (docs/time.md, "Does time pay?").  A
        warm start keeps the first fit's setting.
"""

#: The fitted attribute, documented once.
USE_TIME_ATTRIBUTES_DOC = """    uses_time_ : bool
        Whether the fitted model uses time (``False``: it is its constant-time
        control and projects every item at one instant).
"""
