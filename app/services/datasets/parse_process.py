"""Parse an upload in a child process with a memory limit, a time limit and a lower priority.

Parsing is CPU-bound: done in the API process it held the GIL (predictions waited). Its memory
is a block of lines and a shard (the rows go to the store's shards as they come), but a single
pathological line can still be as large as the file. Here each upload is parsed by
a process forked from a forkserver that has the parsers imported (a fork costs milliseconds; a
fresh interpreter would import scikit-learn for seconds). The child lowers its priority, caps its
address space (``RLIMIT_AS``) and CPU time (``RLIMIT_CPU``), parses, writes the data set to the
store itself and sends back only a summary; the parent kills it at the wall-clock limit. The
address-space limit is Linux's ``setrlimit``: the service runs on Linux (see the Dockerfile).
What the data set may take in the store (PGS_MAX_DATASET_BYTES, the rest of
PGS_STORE_QUOTA_BYTES) is checked as the shards are written.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import resource
import signal
from dataclasses import dataclass
from multiprocessing import forkserver
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Literal

from app.core.orphans import die_with_parent
from app.core.storage.base import Store, StoreUnavailable
from app.services.datasets.parse_base import Format, ParsedDataset, ParseError, ParseOptions, TooLargeError
from app.services.datasets.parsing import parse_upload
from app.services.datasets.shards import Manifest, ShardWriter, delete_dataset

# The child yields the CPU to the API process (predictions) when both want it.
NICENESS = 10
# RLIMIT_CPU is a backstop for a parent that died: the wall-clock limit normally acts first.
CPU_SLACK_S = 5
M_ARENA_MAX = -8  # glibc's mallopt parameter


class QuotaError(TooLargeError):
    """The data set does not fit in what is left of the store's quota."""


@dataclass(frozen=True)
class StoredSize:
    """What a data set may take in the store, and the setting that says so."""

    max_bytes: int
    setting: str
    quota: bool = False  # the limit is what is left of PGS_STORE_QUOTA_BYTES

    def exceeded(self, total: int) -> TooLargeError:
        return (QuotaError if self.quota else TooLargeError)(
            f"the data set takes more than {self.max_bytes} bytes in the store ({self.setting})"
            if total > 0
            else f"no room is left in the store ({self.setting})"
        )


@dataclass(frozen=True)
class ParseBudget:
    memory_bytes: int
    timeout_s: float
    shard_bytes: int
    stored: StoredSize


@dataclass(frozen=True)
class StoredDataset:
    """What the database row needs from a parse (the arrays stay in the store)."""

    n_samples: int
    n_features: int
    nnz: int
    format: Format
    compressed: bool
    label_kind: Literal["numeric", "string"]
    task: Literal["binary", "multiclass", "regression"]
    classes: list[int | float | str] | None
    index_base: int
    stored_bytes: int
    feature_names: list[str] | None = None
    label_name: str | None = None
    text_columns: list[int] | None = None
    n_missing: int = 0
    labelled: bool = True


def _summary(parsed: ParsedDataset, manifest: Manifest) -> StoredDataset:
    cols = parsed.columns
    return StoredDataset(
        n_samples=manifest.n_samples,
        n_features=manifest.n_features,
        nnz=manifest.nnz,
        stored_bytes=manifest.nbytes,
        format=parsed.format,
        compressed=parsed.compressed,
        label_kind=parsed.label_kind,
        task=parsed.task,
        classes=parsed.classes,
        index_base=parsed.index_base,
        feature_names=None if cols is None else cols.feature_names,
        label_name=None if cols is None else cols.label_name,
        text_columns=None if cols is None else cols.text_columns,
        n_missing=0 if cols is None else cols.n_missing,
        labelled=parsed.labelled,
    )


def _address_space_in_use() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _one_malloc_arena() -> None:
    """glibc gives each thread that allocates its own malloc arena, 64 MiB of address space
    reserved at once: under ``RLIMIT_AS`` the parse threads' arenas would take the budget the
    parse needs. Their allocations are few and large, so they share one."""
    with contextlib.suppress(OSError, AttributeError):  # not glibc
        ctypes.CDLL(None).mallopt(M_ARENA_MAX, 1)


def _limit_self(budget: ParseBudget) -> None:
    os.nice(NICENESS)
    _one_malloc_arena()
    # The limit counts what the forked process already maps (the imported libraries), so the
    # budget is what the parse may add to it.
    limit = _address_space_in_use() + budget.memory_bytes
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    cpu = int(budget.timeout_s) + CPU_SLACK_S
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))


def _child(
    upload: Path, options: ParseOptions, store: Store, key: str, budget: ParseBudget, conn: Connection
) -> None:
    # The forkserver forked this child from its only thread and exits when the API process does
    # (its pipe from the API reads EOF): the child goes with it instead of parsing for nobody.
    die_with_parent()
    outcome: tuple[str, Any]
    writer = ShardWriter(
        store,
        key,
        shard_bytes=budget.shard_bytes,
        max_bytes=budget.stored.max_bytes,
        over_limit=budget.stored.exceeded,
    )
    try:
        _limit_self(budget)
        parsed = parse_upload(upload, options, writer)
        manifest = writer.finish(parsed.n_features)
        outcome = ("stored", _summary(parsed, manifest))
    except QuotaError as exc:
        outcome = ("quota", str(exc))
    except TooLargeError as exc:
        outcome = ("too-large", str(exc))
    except ParseError as exc:
        outcome = ("invalid", str(exc))
    except MemoryError:
        outcome = ("memory", "")
    except StoreUnavailable as exc:  # a remote store that does not answer
        outcome = ("store-unavailable", str(exc))
    except OSError as exc:  # the store cannot take the data set (a full disk, read-only)
        outcome = ("os-error", (exc.errno, exc.strerror))
    except Exception as exc:  # a bug, not the file's fault: the parent answers 500 with this
        outcome = ("crashed", f"{type(exc).__name__}: {exc}")
    if outcome[0] != "stored":
        with contextlib.suppress(OSError):  # the parent deletes what is left
            writer.abort()
    conn.send(outcome)
    conn.close()


def _context() -> Any:
    ctx = multiprocessing.get_context("forkserver")
    # Takes effect when the forkserver starts; later calls change nothing.
    ctx.set_forkserver_preload([__name__, "app.services.datasets.parse_preload"])
    return ctx


def start_parser_server() -> None:
    """Start the forkserver the parses fork from, with the parsers imported, when the service
    starts rather than at its first upload: a fresh server's first upload of 2,000 rows waited
    5-7 s for it on a loaded 2-core machine, the next ones 0.3-0.5 s (bench.cold_start). Returns
    at once; the imports run in the forkserver, and a parse sent before they end waits for them."""
    _context()
    forkserver.ensure_running()


def _over_memory(budget: ParseBudget) -> TooLargeError:
    return TooLargeError(
        f"parsing this file needs more than {budget.memory_bytes} bytes of memory (PGS_PARSE_MEMORY_BYTES)"
    )


def _over_time(budget: ParseBudget) -> TooLargeError:
    return TooLargeError(f"parsing took longer than {budget.timeout_s:g} s (PGS_PARSE_TIMEOUT_S)")


def parse_and_store(
    upload: Path, options: ParseOptions, store: Store, key: str, budget: ParseBudget
) -> StoredDataset:
    """Parse ``upload`` in a child that writes the data set under ``key`` (blocking).

    Raises :class:`ParseError` (422), :class:`QuotaError` (507, the store's quota) or
    :class:`TooLargeError` (413, a size, memory or time limit). On any error nothing is left
    under ``key``.
    """
    ctx = _context()
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(
        target=_child, args=(upload, options, store, key, budget, send), name="pgs-parse", daemon=True
    )
    child.start()
    send.close()
    try:
        if not receive.poll(budget.timeout_s):
            raise _over_time(budget)
        try:
            status, detail = receive.recv()
        except EOFError:
            # Killed before it could answer: by the CPU limit, or by an allocation failure
            # outside Python's reach (the address-space limit).
            child.join()
            if child.exitcode == -signal.SIGXCPU:
                raise _over_time(budget) from None
            raise _over_memory(budget) from None
    except BaseException:
        delete_dataset(store, key)
        raise
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receive.close()
    if status == "stored":
        return detail
    delete_dataset(store, key)  # in case the child failed after writing
    raise _failure(status, detail, budget)


def _failure(status: str, detail: Any, budget: ParseBudget) -> Exception:
    """The exception a child's failed outcome becomes in the parent."""
    if status == "memory":
        return _over_memory(budget)
    if status == "store-unavailable":
        return StoreUnavailable(detail)  # answered 503 by the storage error handler
    if status == "os-error":
        return OSError(*detail)  # answered by the storage error handler (507 for a full disk)
    if status == "crashed":
        return RuntimeError(f"the parse process failed: {detail}")
    return {"quota": QuotaError, "too-large": TooLargeError}.get(status, ParseError)(detail)
