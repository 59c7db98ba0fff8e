"""The one answer to "which estimator does this Pipeline end in?" (layer 0: imports
nothing)."""

__all__ = ["final_estimator", "final_step"]


def final_step(estimator):
    """``(name, estimator)`` of a Pipeline's last step; ``(None, estimator)`` for anything
    that is not a Pipeline (an object without ``steps``, or with none)."""
    steps = getattr(estimator, "steps", None)
    return tuple(steps[-1]) if steps else (None, estimator)


def final_estimator(estimator):
    """A Pipeline's last step, or the estimator itself."""
    return final_step(estimator)[1]
