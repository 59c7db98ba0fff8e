"""THE INPUT BOUNDARY: X = [image | text | time] read (``_columns``, ``_time_column``), and
its blocks, labels and embeddings checked (``_checks``), once; lower layers trust them."""

from ._checks import (check_embedding, check_embeddings, check_features, check_labels,
                      nonfinite_rows)
from ._columns import (LayoutWarning, named_blocks, resolve_blocks, split_blocks,
                       split_time_column, write_time_column)
from ._time_column import TimeColumnWarning, check_time_column_values

__all__ = ["LayoutWarning", "TimeColumnWarning", "check_embedding", "check_embeddings",
           "check_features", "check_labels", "check_time_column_values", "named_blocks",
           "nonfinite_rows", "resolve_blocks", "split_blocks", "split_time_column",
           "write_time_column"]
