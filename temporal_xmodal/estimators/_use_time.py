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

The neural estimators apply the rule inline in their one fit; this module holds its
documentation and the helpers BinnedProcrustesEmbedder fits through.  The parameter's
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


def control_times(estimator, n):
    """``n`` times at the instant the control is fitted at: the axis origin."""
    return estimator.time_axis_.constant(n)


def projection_times(estimator, time, n):
    """The times an estimator projects ``n`` items at: ``time`` (``None`` for a model that
    needs none), or the control's instant."""
    return time if getattr(estimator, "uses_time_", True) else control_times(estimator, n)


def fit_using_time(estimator, fit, X_image, X_text, time, labels):
    """Fit ``estimator`` through ``fit(X_image, X_text, time, labels)`` as ``use_time`` says.

    ``estimator.uses_time_`` is set first (the fit reads it); a warm start continues the model
    it has, with or without time.
    """
    if not (estimator._continues() and hasattr(estimator, "uses_time_")):
        estimator.uses_time_ = bool(estimator.use_time)
    if not estimator.uses_time_:
        time = control_times(estimator, len(time))
    fit(X_image, X_text, time, labels)
    return estimator
