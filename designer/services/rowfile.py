"""Rows streamed to a CSV or Parquet file as they come (no Qt): what ``sweep --out`` and
``optimize --out`` write, so a search of any size holds no more than a buffer of rows.

:func:`row_file` opens ``PATH.csv`` or ``PATH.parquet`` (the format from the name; ``-`` is CSV on
standard output) through :func:`designer.safeio.atomic_output`: the rows go to a temporary file in
the target's folder, renamed over the target when the block ends without an exception. A caller
that catches ``KeyboardInterrupt`` inside the block therefore keeps the rows written so far under
the final name (``RowFile.count`` says how many); any other error leaves the old file, or none.

CSV: one line per row, cells through :func:`designer.textsafe.csv_row`, flushed to the file at
least every :data:`FLUSH_S` seconds. Parquet (``pyarrow``, the optional ``parquet`` extra): a row
group every :data:`PARQUET_ROWS` rows or :data:`FLUSH_S` seconds, typed columns (``int``,
``float``, ``bool``, ``str``; a missing cell is null), the footer written when the file closes.
"""

from __future__ import annotations

import contextlib
import csv
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from designer.errors import UsageError

#: the longest a written row stays in a buffer (seconds)
FLUSH_S = 1.0
#: rows per Parquet row group (a few hundred KB of figures: large enough to compress, small
#: enough that a stopped search loses no more than that many rows' buffer)
PARQUET_ROWS = 8192
FORMATS = (".csv", ".parquet")


def out_format(path: str, what: str = "--out") -> str:
    """``"csv"`` or ``"parquet"`` from the name's extension (``-`` and the standard streams: CSV);
    anything else is a one-line UsageError."""
    from designer.safeio import is_console

    if is_console(path):
        return "csv"
    ext = Path(path).suffix.lower()
    if ext not in FORMATS:
        raise UsageError(f"{what} {path}: write a .csv or a .parquet file (the format comes from the "
                         f"extension), e.g. {what + ' ' if what.startswith('--') else ''}points.csv")
    if ext == ".parquet":
        parquet_module(what)
    return ext[1:]


def parquet_module(what: str = "--out") -> Any:
    """``pyarrow.parquet``, or a one-line UsageError saying how to get it."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise UsageError(f"{what}: writing Parquet needs pyarrow (pip install 'dpu-cluster-designer[parquet]' "
                         "or pip install pyarrow); or write a .csv file") from None
    return pq


class RowFile:
    """An open row file: :meth:`write` one row (a sequence in column order, or a dict by name)."""

    def __init__(self, fh: Any, columns: Sequence[tuple[str, str]], fmt: str) -> None:
        self.columns = list(columns)
        self.names = [c for c, _ in self.columns]
        self.format = fmt
        self.count = 0
        self._fh = fh
        self._last = time.monotonic()
        if fmt == "csv":
            from designer.textsafe import csv_row

            self._csv_row = csv_row
            self._csv = csv.writer(fh)
            self._csv.writerow(csv_row(self.names))
        else:
            import pyarrow as pa

            types = {"int": pa.int64(), "float": pa.float64(), "bool": pa.bool_(), "str": pa.string()}
            self._schema = pa.schema([(c, types[t]) for c, t in self.columns])
            self._writer = parquet_module().ParquetWriter(fh, self._schema)
            self._buffer: list[list] = [[] for _ in self.columns]

    def write(self, row: Sequence[Any] | dict[str, Any]) -> None:
        cells = [row.get(c) for c in self.names] if isinstance(row, dict) else list(row)
        self.count += 1
        now = time.monotonic()
        due = now - self._last >= FLUSH_S
        if self.format == "csv":
            self._csv.writerow(self._csv_row(["" if c is None else c for c in cells]))
            if due:
                self._fh.flush()
                self._last = now
            return
        for column, cell in zip(self._buffer, cells):
            column.append(cell)
        if due or len(self._buffer[0]) >= PARQUET_ROWS:
            self._group()
            self._last = now

    def _group(self) -> None:
        if self.format != "csv" and self._buffer[0]:
            import pyarrow as pa

            self._writer.write_table(pa.table(self._buffer, schema=self._schema))
            self._buffer = [[] for _ in self.columns]

    def close(self) -> None:
        if self.format == "csv":
            self._fh.flush()
        else:
            self._group()
            self._writer.close()


@contextlib.contextmanager
def row_file(path: str, columns: Sequence[tuple[str, str]], *, inputs: Sequence[Any] = (),
             what: str = "--out") -> Iterator[RowFile]:
    """A :class:`RowFile` writing ``path`` atomically (module docstring). ``columns`` are
    ``(name, type)`` pairs, type ``int``, ``float``, ``bool`` or ``str`` (Parquet's column types;
    CSV writes every cell as text)."""
    from designer.safeio import atomic_output

    fmt = out_format(path, what)
    with atomic_output(path, inputs=inputs, what=what) as tmp:
        if fmt == "csv":
            with open(tmp, "w", newline="", encoding="utf-8") as fh:
                out = RowFile(fh, columns, fmt)
                yield out
                out.close()
        else:
            with open(tmp, "wb") as fh:
                out = RowFile(fh, columns, fmt)
                try:
                    yield out
                except BaseException:
                    with contextlib.suppress(Exception):
                        out.close()  # the temporary file is removed: only release pyarrow's writer
                    raise
                out.close()
