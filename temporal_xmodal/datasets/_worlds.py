"""Named synthetic worlds: keyword arguments of :func:`make_temporal_crossmodal`.

Each world puts what time tells somewhere else, so that a time-aware model
can be checked on all of them: where time helps it should win, and in the
static world it should not lose.  Read more in the user guide:
docs/datasets.md ("Worlds").

The CLIP-like world is not an entry: its geometry (unit-norm embeddings with a
shared offset per modality) is not a keyword of :func:`make_temporal_crossmodal`,
and every entry here is.  It is :func:`~temporal_xmodal.datasets.make_clip_like`
at its defaults, and ``make_clip_like(n, **TEMPORAL_WORLDS[name])`` puts any of
these worlds in that geometry.
"""

__all__ = ["TEMPORAL_WORLDS"]

#: World name -> keyword arguments of
#: :func:`~temporal_xmodal.datasets.make_temporal_crossmodal`, to pass as
#: ``**TEMPORAL_WORLDS[name]`` (they override the defaults; the size, seed and
#: other parameters stay free).
#:
#: ``"meaning shift"``
#:     The demo world (``temporal_xmodal.comparison.data.DEMO_WORLD``): the
#:     defaults with a stable writing style (``drift=0``).  Caption wordings
#:     pass between categories at each of the 2 boundaries of 3 eras, so only
#:     the date tells what a routine caption means; pictures never change.
#: ``"content drift"``
#:     Static wording, one era; each category's content turns half a turn over
#:     the time range (``content_drift=2``) in pictures and captions alike: at
#:     t1 it is the opposite of its content at t0.  The picture-caption
#:     relation of any one moment never changes, but a category's late items
#:     look unlike its early ones: a static linear image->category probe loses
#:     0.03-0.09 accuracy to per-period probes, which stay at 0.999 (2,000
#:     items, 5 seeds; ``content_drift=1`` costs it nothing).
#: ``"recurring events"``
#:     Every category recurs in bursts (``profiles="recurrent"``) whose items
#:     share a strong event offset (``event_strength=2``), static wording: the
#:     time structure lies in which event (burst) an item belongs to.
#: ``"static"``
#:     Static wording, one era, no event offsets: time says nothing about what
#:     an item looks like or how pictures and captions relate (it still tells
#:     which categories are frequent when, through the time profiles).
#: ``"steady"``
#:     The static world with every category steady (``profiles="steady"``):
#:     each category's items are spread evenly over the whole range, and
#:     nothing about an item tells its date.  Only the date separates two items
#:     of one category, so "same category and close in time" (time-window
#:     mAP@50) is answerable only by a model that reads the date: the structure
#:     the same-category term of DCM (L_intra) is for.  A date filter (the candidates
#:     restricted to the window) answers that question for any model.
#: ``"wording drift"``
#:     One era, no meaning shift, mixed profiles; the caption wording drifts
#:     continuously over the whole range (``drift=4``: the text map turns a
#:     full turn, so captions of one category read differently at every
#:     moment).  Category retrieval across time is the question: a static
#:     model has to read every wording at once, a date filter does not help
#:     it (every category spans the range), a model that reads the date can
#:     follow the wording.
TEMPORAL_WORLDS = {
    "meaning shift": {"drift": 0.0},
    "content drift": {"drift": 0.0, "meaning_shift": 0.0, "n_eras": 1, "content_drift": 2.0},
    "recurring events": {"drift": 0.0, "meaning_shift": 0.0, "n_eras": 1,
                         "profiles": "recurrent", "event_strength": 2.0},
    "static": {"drift": 0.0, "meaning_shift": 0.0, "n_eras": 1, "event_strength": 0.0},
    "steady": {"drift": 0.0, "meaning_shift": 0.0, "n_eras": 1, "event_strength": 0.0,
               "profiles": "steady"},
    "wording drift": {"drift": 4.0, "meaning_shift": 0.0, "n_eras": 1},
}
