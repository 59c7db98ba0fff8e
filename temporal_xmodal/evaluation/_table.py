"""The column table the protocols return for per-bin and per-query results."""

from collections.abc import Mapping

import numpy as np

__all__ = ["ResultTable"]


class ResultTable(Mapping):
    """A small read-only column table: a mapping of column name → 1-D array, without pandas.

    The protocols return it for per-bin and per-query results: ``table["center"]`` is a column,
    :meth:`to_frame` a :class:`pandas.DataFrame`, :meth:`records` a list of row dicts.  Read more
    in docs/evaluation.md.

    Parameters
    ----------
    columns : mapping of str to array-like
        Columns of equal length (else ``ValueError``).

    Attributes
    ----------
    n_rows : int
        Number of rows.
    """

    def __init__(self, columns):
        self._columns = {str(name): np.asarray(col) for name, col in columns.items()}
        lengths = {col.shape[0] for col in self._columns.values()}
        if len(lengths) > 1:
            raise ValueError(f"All columns must have the same length; got {sorted(lengths)}.")
        self.n_rows = lengths.pop() if lengths else 0

    def __getitem__(self, name):
        return self._columns[name]

    def __iter__(self):
        return iter(self._columns)

    def __len__(self):
        return len(self._columns)

    @property
    def columns(self):
        """Column names, in order (list of str)."""
        return list(self._columns)

    def records(self):
        """The rows as a list of ``{column: value}`` dicts (numpy scalars unwrapped)."""
        return [
            {name: col[i].item() if hasattr(col[i], "item") else col[i]
             for name, col in self._columns.items()}
            for i in range(self.n_rows)
        ]

    def to_frame(self):
        """The table as a :class:`pandas.DataFrame` (needs pandas)."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - pandas is installed in the tests
            raise ImportError(
                "ResultTable.to_frame needs pandas: pip install temporal-xmodal[pandas]"
            ) from exc
        return pd.DataFrame(self._columns)

    def __repr__(self):
        header = " | ".join(self._columns)
        rows = [
            " | ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in row.values())
            for row in self.records()[:10]
        ]
        more = [f"... ({self.n_rows} rows)"] if self.n_rows > 10 else []
        return "\n".join([f"ResultTable({self.n_rows} rows)", header, *rows, *more])
