"""Top-k cross-modal search and exploration over time.

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
