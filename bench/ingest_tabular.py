"""CSV ingest speed: the service's parser against Arrow's own reader on one thread.

Goal: CSV at least as fast as ``pyarrow.csv.read_csv`` on one thread (the parser adds little on
top of the reader it streams through).

For each file, best of ``--repeats`` runs, in MB/s of the file's bytes:

* ``service``: :func:`app.services.datasets.parsing.parse_upload` into a sink that only counts
  the rows (the parse: layout, Arrow's streaming reader, the rows as CSR and their checks; not
  the shard writer);
* ``service+shards``: the same into the shard writer on a local temporary store, what an upload
  pays before its row is inserted;
* ``read_csv``: ``pyarrow.csv.read_csv(path, use_threads=False)`` with its own type inference,
  the whole file to one table.

Files: the shared data's CSV files, and a generated one (``--generated-mb``, default 200 MB) of 20
numeric columns and a 0/1 label.

Run: ``.venv/bin/python -m bench.ingest_tabular`` (about 2 minutes).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow.csv as pacsv
import scipy.sparse as sp

from app.core.storage.local import LocalDirStore
from app.services.datasets.parse_base import ParseOptions
from app.services.datasets.parsing import parse_upload
from app.services.datasets.shards import ShardWriter, new_dataset_key

DATA_DIR = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
SHARD_BYTES = 64 * 1024 * 1024


class _CountingSink:
    def __init__(self) -> None:
        self.rows = 0

    def add(self, X: sp.csr_matrix, y: np.ndarray, text: np.ndarray | None = None) -> None:
        self.rows += X.shape[0]

    def shift_indices(self, delta: int) -> None:
        pass

    def abort(self) -> None:
        self.rows = 0


def _generate(path: Path, megabytes: int) -> None:
    rng = np.random.default_rng(0)
    header = ",".join([f"f{i}" for i in range(20)] + ["label"]) + "\n"
    with path.open("w") as fh:
        fh.write(header)
        while fh.tell() < megabytes * 1_000_000:
            X = rng.normal(size=(50_000, 20)).round(6)
            y = (X[:, 0] > 0).astype(int)
            np.savetxt(fh, np.column_stack([X, y]), delimiter=",", fmt=["%.6g"] * 20 + ["%d"])


def _best(fn: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _service(path: Path) -> None:
    parse_upload(path, ParseOptions(filename=path.name), _CountingSink())


def _service_shards(path: Path, root: Path) -> None:
    writer = ShardWriter(
        LocalDirStore(root),
        new_dataset_key(),
        shard_bytes=SHARD_BYTES,
        max_bytes=2**40,
        over_limit=OverflowError,
    )
    parsed = parse_upload(path, ParseOptions(filename=path.name), writer)
    writer.finish(parsed.n_features)


def _read_csv(path: Path) -> None:
    pacsv.read_csv(path, read_options=pacsv.ReadOptions(use_threads=False))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--generated-mb", type=int, default=200)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ingest-tabular-") as tmp:
        files = sorted(DATA_DIR.glob("*.csv"))
        if args.generated_mb:
            generated = Path(tmp) / f"generated-{args.generated_mb}mb.csv"
            _generate(generated, args.generated_mb)
            files.append(generated)
        columns = f"{'file':<28} {'MB':>8} {'service':>10} {'+shards':>10} {'read_csv':>10}"
        print(f"{columns}  MB/s, best of {args.repeats}")
        for path in files:
            mb = path.stat().st_size / 1e6
            service = _best(lambda p=path: _service(p), args.repeats)
            shards = _best(lambda p=path: _service_shards(p, Path(tmp) / "store"), args.repeats)
            arrow = _best(lambda p=path: _read_csv(p), args.repeats)
            print(f"{path.name:<28} {mb:8.1f} {mb / service:10.1f} {mb / shards:10.1f} {mb / arrow:10.1f}")


if __name__ == "__main__":
    main()
