"""Top-k cross-modal search and exploration over time.

* :func:`search_embeddings`: exact, chunked top-k on raw embedding matrices
  (torch on any device, or ``faiss.IndexFlatIP``).
* :class:`CrossModalIndex`: a gallery embedded once with a fitted estimator at
  chosen instants, searched many times; :func:`cross_modal_search` does both at
  once.  Results come as a DataFrame (with payload columns such as captions) or
  a :class:`SearchResult`; their ``query`` column carries the caller's ids
  (``ids=``, or the index of a DataFrame of queries).
* :func:`neighbourhood_over_time` and :func:`neighbourhood_shift`: an item's
  neighbourhood at several instants, and the items whose neighbourhood changes
  most between two instants, each with the mean change Δ in
  ``table.attrs["time_change"]`` and, when the model barely uses time, a
  sentence saying so; :func:`plot_neighbourhood_over_time` and
  :func:`plot_neighbourhood_shift` draw them, Δ in the title.

Read more in the user guide: docs/search.md.
"""

from ._exploration import neighbourhood_over_time, neighbourhood_shift
from ._index import CrossModalIndex, cross_modal_search
from ._plotting import plot_neighbourhood_over_time, plot_neighbourhood_shift
from ._results import SearchResult
from ._exact import search_embeddings

__all__ = [
    "CrossModalIndex",
    "SearchResult",
    "cross_modal_search",
    "neighbourhood_over_time",
    "neighbourhood_shift",
    "plot_neighbourhood_over_time",
    "plot_neighbourhood_shift",
    "search_embeddings",
]
