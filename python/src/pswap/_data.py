"""Inputs: Arrow data streamed to the binary as an Arrow IPC stream, or paths."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import IO, TYPE_CHECKING, Any, Union

if TYPE_CHECKING:
    import pyarrow as pa

#: What ``commit``, ``stage`` and ``merge`` take: a pyarrow Table,
#: RecordBatch or RecordBatchReader; a pandas or Polars DataFrame (or any
#: object with ``__arrow_c_stream__``); a path (a file or a folder of
#: Parquet, CSV or JSON Lines files) or a list of paths.
Data = Union["pa.Table", "pa.RecordBatch", "pa.RecordBatchReader", str, "os.PathLike[str]",
             Sequence[Union[str, "os.PathLike[str]"]], Any]


#: Rows per batch sent to the binary: batches are zero-copy slices, and the
#: binary holds one batch at a time, so this bounds its memory whatever
#: the size of the producer's chunks.
BATCH_ROWS = 65536


def paths_of(data: Any) -> list[str] | None:
    """The paths ``data`` names, or None when it is data."""
    if isinstance(data, (str, os.PathLike)):
        return [os.fspath(data)]
    if isinstance(data, (list, tuple)) and data and all(isinstance(x, (str, os.PathLike)) for x in data):
        return [os.fspath(x) for x in data]
    return None


def _module(obj: Any) -> str:
    return type(obj).__module__.split(".")[0]


def to_arrow(data: Any) -> pa.Table | pa.RecordBatch | pa.RecordBatchReader:
    """``data`` as pyarrow, without copying where the library allows.

    pandas goes through ``pa.Table.from_pandas`` (its index left out:
    numeric columns without nulls are not copied); Polars through
    ``to_arrow`` (its buffers are Arrow's: no copy); any other object with
    ``__arrow_c_stream__`` (DuckDB relations, Arrow-backed frames) through
    the Arrow PyCapsule stream interface.

    Raises:
        TypeError: ``data`` is none of the inputs this package takes.
    """
    import pyarrow as pa

    if isinstance(data, (pa.Table, pa.RecordBatch, pa.RecordBatchReader)):
        return data
    mod = _module(data)
    if mod == "pandas" and type(data).__name__ == "DataFrame":
        return pa.Table.from_pandas(data, preserve_index=False)
    if mod == "polars" and type(data).__name__ == "DataFrame":
        return data.to_arrow()
    if mod == "polars" and type(data).__name__ == "LazyFrame":
        return data.collect().to_arrow()
    if hasattr(data, "__arrow_c_stream__"):
        return pa.RecordBatchReader.from_stream(data)
    raise TypeError(
        f"pswap takes a pyarrow Table, RecordBatch or RecordBatchReader, a pandas or Polars DataFrame, "
        f"or paths; not {type(data).__name__}")


def batches(data: pa.Table | pa.RecordBatch | pa.RecordBatchReader) -> tuple[pa.Schema, Iterable[pa.RecordBatch]]:
    """The schema and the record batches of Arrow data, lazily for a reader."""
    import pyarrow as pa

    if isinstance(data, pa.RecordBatch):
        return data.schema, pa.Table.from_batches([data]).to_batches(max_chunksize=BATCH_ROWS)
    if isinstance(data, pa.Table):
        return data.schema, data.to_batches(max_chunksize=BATCH_ROWS)
    return data.schema, _sliced(data)


def _sliced(reader: pa.RecordBatchReader) -> Iterable[pa.RecordBatch]:
    for b in reader:
        for off in range(0, max(b.num_rows, 1), BATCH_ROWS):
            yield b.slice(off, BATCH_ROWS)


def arrow_feeder(data: Any) -> Callable[[IO[bytes]], None]:
    """A function that writes ``data`` to a stream as an Arrow IPC stream.

    Batches are written as they come (a RecordBatchReader is read one batch
    at a time); the end-of-stream marker is written only after the last,
    so that a producer that fails half-way never looks like a shorter,
    complete stream to the binary.
    """
    import pyarrow as pa

    arrow = to_arrow(data)

    def feed(f: IO[bytes]) -> None:
        schema, items = batches(arrow)
        sink = pa.PythonFile(f, mode="w")
        writer = pa.ipc.new_stream(sink, schema)
        for b in items:
            writer.write_batch(b)
        writer.close()  # the end-of-stream marker
        sink.flush()

    return feed


def parquet_feeder(data: Any) -> Callable[[IO[bytes]], None]:
    """A function that writes ``data`` to a stream as one Parquet file.

    ``merge`` reads its input more than once (the binary spools standard
    input to a file), so it takes Parquet, written sequentially here.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrow = to_arrow(data)

    def feed(f: IO[bytes]) -> None:
        schema, items = batches(arrow)
        sink = pa.PythonFile(f, mode="w")
        with pq.ParquetWriter(sink, schema) as w:
            for b in items:
                w.write_batch(b)
        sink.flush()

    return feed
