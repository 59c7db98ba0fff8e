"""Named synthetic worlds: keyword arguments of :func:`make_temporal_crossmodal`.

Each world puts what time tells somewhere else, so that a time-aware model can be checked on all
of them.  ``make_clip_like(n, **TEMPORAL_WORLDS[name])`` draws one in CLIP geometry.  Read more in
docs/datasets.md ("Worlds").
"""

__all__ = ["TEMPORAL_WORLDS"]

#: World name -> keyword arguments of :func:`make_temporal_crossmodal`
#: (``**TEMPORAL_WORLDS[name]``; size, seed and the other parameters stay free):
#:
#: ``"meaning shift"``: the demo world (``DEMO_WORLD``); caption wordings pass between
#: categories at the era boundaries, pictures and writing style stay.
#: ``"content drift"``: each category's content turns half a turn over the range, in pictures
#: and captions alike.
#: ``"recurring events"``: every category recurs in bursts sharing a strong event offset.
#: ``"static"``: time says nothing about items or their relation (time profiles aside).
#: ``"steady"``: the static world with every category spread evenly: only the date separates two
#: items of one category.
#: ``"wording drift"``: the caption wording turns a full turn over the range.
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
