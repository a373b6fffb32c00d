"""Where the stochastic engines get their samples: all rows in memory, or shards visited in turn.

An engine asks its sampler for ``count`` samples (a multiple of the minibatch size k) and runs its
kernel on each ``Segment`` it yields: a resident block of rows (``KernelData`` and its targets) and
the sample indices into it. ``InMemorySampler`` yields one segment over the whole data, with the
draws the engines always made. ``ShardSampler`` visits the shards of a ``TrainingShards``:

* the shards in a random order, a fresh one per epoch (an epoch visits every shard once);
* within a shard, ``sampling="permutation"``: a random permutation of its rows (Fisher-Yates,
  shuffled lazily as far as it is drawn, as in memory); ``"replacement"``: as many draws as the
  shard has rows, i.i.d. uniform among its rows;
* a minibatch that would straddle two shards takes the last rows of one and the first of the next:
  those few rows are copied into a block of k rows of their own, so the kernel never needs two
  shards at once.

The iterates live in the engine and carry across shards; the sampler holds one shard, and drops
it (its memory-mapped pages leave the resident set) when it opens the next. With one shard its
draws are those of ``InMemorySampler`` (no shard order to draw), so a fit on one shard equals the
in-memory fit iterate for iterate.

Shards visited one at a time meet the rows in the order they were stored, shard by shard: a data
set stored sorted by label then trains one class at a time. ``InterleavingSampler`` (a
``ShardedMatrix.window`` of more than one shard) keeps that many shards open, the next of the
epoch's order replacing one used up, and draws chunks of ``CHUNK_ROWS`` rows from their union:
how many from each shard is a multivariate hypergeometric draw over the rows they have left, which
rows a step of each shard's own permutation (or i.i.d. draws), and the chunk's rows are copied into
one block in a random order. One chunk after another, the open shards' rows come in a uniformly
random interleaving, row by row, as if the window were one shard.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import NamedTuple, Protocol

import numpy as np
import scipy.sparse as sp
from numba import njit

from ._sparse import DataStats, KernelData, mean_row_nnz, prepare
from .compiling import compile_for
from .losses import UNWEIGHTED
from .shards import ShardedMatrix

# Rows per chunk of an InterleavingSampler: the copy into one block and the draws around it cost
# about 0.1 ms a chunk, against a few microseconds a row for the kernel on it.
CHUNK_ROWS = 4096


class Segment(NamedTuple):
    """Samples of one resident block: ``rows`` index ``data``'s rows and the columns of
    ``targets`` (shape (n_outputs, rows of data)); ``len(rows)`` is a multiple of k."""

    data: KernelData
    targets: np.ndarray
    rows: np.ndarray
    # The weights of ``data``'s rows in the loss (``solver.losses.row_weight``): empty, unweighted.
    sample_weight: np.ndarray = UNWEIGHTED


class Sampler(Protocol):
    def compile(self) -> None:
        """Load or compile the kernels ``draw`` calls (``tracing.Engine.compile``)."""
        ...

    def draw(self, count: int) -> Iterator[Segment]:
        """Segments of ``count`` samples in all; each is run before the next is drawn."""
        ...


class Block(NamedTuple):
    """A resident block of training rows: the matrix as given, its kernel view and its targets."""

    X: object  # scipy CSR or a dense array
    data: KernelData
    targets: np.ndarray  # (n_outputs, rows)


@njit(cache=True)
def shuffle_step(perm, start, uniforms):
    """Steps start, start + 1, ... of a Fisher-Yates shuffle of ``perm``, one per uniform in [0, 1).

    Afterwards perm[start:start + len(uniforms)] continue a uniformly random permutation, whatever
    order ``perm`` was in before (so each epoch can reshuffle the previous epoch's order).
    """
    m = perm.shape[0]
    for step in range(uniforms.shape[0]):
        pos = start + step
        j = min(pos + int(uniforms[step] * (m - pos)), m - 1)  # uniform on pos..m-1
        perm[pos], perm[j] = perm[j], perm[pos]


class _RowOrder:
    """The order in which one block's rows are drawn: a lazily shuffled permutation, or i.i.d."""

    def __init__(self, m: int, sampling: str, rng: np.random.Generator):
        self.m = m
        self.rng = rng
        self.perm = np.arange(m, dtype=np.int64) if sampling == "permutation" else None
        self.pos = 0

    def take(self, count: int) -> np.ndarray:
        """The next ``count`` row indices. A permutation wraps into a reshuffled one (a new epoch
        over the block). The permutation is shuffled lazily, only as far as it has been drawn:
        rng.permutation(m) cost 0.4 ms at m = 50k, half the solver time of a run that reached its
        target after 0.03 epoch."""
        perm = self.perm
        if perm is None:  # sampling="replacement"
            self.pos += count
            return self.rng.integers(0, self.m, size=count)
        parts = []
        while count > 0:
            if self.pos == self.m:
                self.pos = 0  # a new epoch shuffles the same array again from the start
            start = self.pos
            take = min(count, self.m - start)
            shuffle_step(perm, start, self.rng.random(take))
            # A copy: the next epoch's shuffle moves these entries.
            parts.append(perm[start : start + take].copy())
            self.pos += take
            count -= take
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    @property
    def left(self) -> int:
        """Draws left in this pass over the block."""
        return self.m - self.pos


class InMemorySampler:
    """Every row resident: uniform draws with replacement (Figure 1's A_t) or a fresh random
    permutation per epoch, continued across chunks (the iterates are the same however the run is
    chunked)."""

    def __init__(
        self,
        data: KernelData,
        targets: np.ndarray,
        sampling: str,
        rng: np.random.Generator,
        sample_weight: np.ndarray = UNWEIGHTED,
    ):
        self.data = data
        self.targets = targets
        self.sample_weight = sample_weight
        self.order = _RowOrder(data.indptr.shape[0] - 1, sampling, rng)

    def compile(self) -> None:
        if self.order.perm is not None:
            compile_for(shuffle_step, self.order.perm, 0, np.empty(0))

    def draw(self, count: int) -> Iterator[Segment]:
        yield Segment(self.data, self.targets, self.order.take(count), self.sample_weight)


class InMemoryRows:
    """Training data that is resident: one block of every row (the estimators' ordinary fit)."""

    def __init__(
        self, data: KernelData, stats: DataStats, targets: np.ndarray, sample_weight: np.ndarray = UNWEIGHTED
    ):
        self.data = data
        self.targets = targets
        self.sample_weight = sample_weight
        self.stats = stats
        self.m = stats.m
        self.n_features = data.n_features
        self.mean_row_nnz = mean_row_nnz(data)

    def kernel_blocks(self) -> Iterator[tuple[KernelData, np.ndarray]]:
        """The rows and targets, as blocks (here one)."""
        yield self.data, self.targets

    def target_blocks(self) -> Iterator[np.ndarray]:
        yield self.targets

    def first_block(self) -> tuple[KernelData, np.ndarray]:
        """The rows that the sampled estimates of a step size read (here all of them)."""
        return self.data, self.targets

    def template(self) -> tuple[KernelData, np.ndarray]:
        """What the solver states are built on: here the data itself."""
        return self.data, self.targets

    def sampler(self, batch_size: int, sampling: str, rng: np.random.Generator) -> Sampler:
        return InMemorySampler(self.data, self.targets, sampling, rng, self.sample_weight)


class TrainingShards:
    """A ShardedMatrix as training data: its statistics from one checking pass, and its shards as
    kernel blocks with their targets (the interface of ``InMemoryRows``).

    ``encode(y_i)`` turns shard i's labels into targets of shape (n_outputs, rows) (+-1 per class
    for a classifier, float targets for a regressor). The statistics pass runs ``prepare`` on every
    shard (it refuses NaN, infinities and broken CSR structure, naming the shard).
    """

    def __init__(self, X: ShardedMatrix, encode: Callable[[np.ndarray], np.ndarray], n_outputs: int):
        self.X = X
        self.encode = encode
        self.n_outputs = n_outputs
        self.m = X.n_samples
        self.n_features = X.n_features
        self.sample_weight = UNWEIGHTED  # streamed rows are unweighted (the estimators refuse both)
        self.shard_ids = [i for i in range(X.n_shards) if X.shard_rows[i]]
        sum_sq, n_values, nnz, dtype = 0.0, 0, 0, None
        for i in self.shard_ids:
            X_i, _ = X.open(i)
            try:
                data, stats = prepare(X_i)
            except ValueError as exc:
                raise ValueError(f"shard {i}: {exc}") from exc
            sum_sq += stats.sum_sq
            n_values += stats.n_values
            nnz += int(data.indptr[-1])
            dtype = data.data.dtype if dtype is None else dtype
            del X_i, data
        self.stats = DataStats(sum_sq, n_values, self.m)
        self.mean_row_nnz = nnz / max(self.m, 1)
        self.dtype = np.dtype(np.float64) if dtype is None else dtype

    def block(self, i: int) -> Block:
        """Shard i, resident (its arrays memory-mapped when the ShardedMatrix maps them)."""
        X, y = self.X.open(i)
        return Block(X, prepare(X)[0], self.encode(y))

    def kernel_blocks(self) -> Iterator[tuple[KernelData, np.ndarray]]:
        """Every non-empty shard in order, one at a time."""
        for i in self.shard_ids:
            block = self.block(i)
            yield block.data, block.targets

    def target_blocks(self) -> Iterator[np.ndarray]:
        """Every non-empty shard's targets in order (its rows are not read)."""
        for i in self.shard_ids:
            yield self.encode(self.X.open(i)[1])

    def matrix_blocks(self) -> Iterator[tuple[object, np.ndarray]]:
        """Every non-empty shard's rows as given and its targets, for evaluation."""
        for i in self.shard_ids:
            X, y = self.X.open(i)
            yield X, self.encode(y)

    def rows_at(self, rows: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
        """The rows at the sorted indices ``rows`` (over the whole data set) as one CSR matrix in
        memory, and their targets (``ShardedMatrix.rows_at``)."""
        X, y = self.X.rows_at(rows)
        return X, self.encode(y)

    def first_block(self) -> tuple[KernelData, np.ndarray]:
        """The first shard: the sampled estimates of a step size (the q-norms of PGS's t0="auto"
        for p < 2) read its rows rather than the whole data set's."""
        block = self.block(self.shard_ids[0])
        return block.data, block.targets

    def template(self) -> tuple[KernelData, np.ndarray]:
        """A block without rows of the shards' types: what the solver states are built on (they
        hold no shard) and their kernels compile for."""
        data = KernelData(
            np.empty(0, dtype=self.dtype),
            np.empty(0, dtype=np.uint32),
            np.zeros(1, dtype=np.uint64),
            False,
            self.n_features,
        )
        return data, np.zeros((self.n_outputs, 0))

    def sampler(self, batch_size: int, sampling: str, rng: np.random.Generator) -> Sampler:
        """Draws shard by shard, or from a window of shards interleaved; from a single shard, the
        in-memory draws over it."""
        if len(self.shard_ids) == 1:
            block = self.block(self.shard_ids[0])
            return InMemorySampler(block.data, block.targets, sampling, rng)
        if self.X.window > 1:
            return InterleavingSampler(self, batch_size, sampling, rng, self.X.window)
        return ShardSampler(self, batch_size, sampling, rng)


TrainingRows = InMemoryRows | TrainingShards


def even_rows(m: int, k: int | None) -> np.ndarray | None:
    """Every (m / k)-th of ``m`` rows (sorted): a systematic sample of k rows spread evenly over
    the data whatever its order (rows sorted by label included), drawing nothing from the
    solver's random stream; None (all of them) when ``k`` is None or m <= k. What the trace
    computes its objective (``objective_rows``) and its test score (``eval_rows``) on."""
    if k is None or m <= k:
        return None
    return np.arange(k, dtype=np.int64) * m // k


class ShardSampler:
    """Samples from the shards of ``shards``: shards in a random order per epoch, a permutation of
    (or i.i.d. draws among) each shard's rows, minibatches of ``batch_size`` across shard ends
    (see the module docstring)."""

    def __init__(self, shards: TrainingShards, batch_size: int, sampling: str, rng: np.random.Generator):
        self.shards = shards
        self.k = batch_size
        self.sampling = sampling
        self.rng = rng
        self._visit = np.array(shards.shard_ids)  # shards with rows, in this epoch's order
        self._visit_pos = len(self._visit)  # no shard open yet
        self._block: Block | None = None
        self._order: _RowOrder | None = None
        # Rows drawn at a shard's end that wait for the next shard to complete their minibatch.
        self._carry: list[tuple[sp.csr_matrix, np.ndarray]] = []
        self._carried = 0

    def compile(self) -> None:
        if self.sampling == "permutation":
            compile_for(shuffle_step, np.arange(1, dtype=np.int64), 0, np.empty(0))

    def _next_shard(self) -> None:
        self._block = self._order = None  # drop the shard before the next one opens
        self._visit_pos += 1
        if self._visit_pos >= len(self._visit):  # a new epoch, in a new order
            self.rng.shuffle(self._visit)
            self._visit_pos = 0
        block = self.shards.block(int(self._visit[self._visit_pos]))
        self._block = block
        self._order = _RowOrder(block.data.indptr.shape[0] - 1, self.sampling, self.rng)

    def draw(self, count: int) -> Iterator[Segment]:
        """Segments of ``count`` samples in all (a multiple of k), opening shards as it goes."""
        k = self.k
        while count > 0:
            if self._order is None or self._order.left == 0:
                self._next_shard()
            block, order = self._block, self._order
            assert block is not None and order is not None
            if self._carried:
                # Complete the minibatch that started at the previous shard's end.
                take = min(k - self._carried, order.left)
                self._hold(block, order.take(take))
                if self._carried == k:
                    yield self._carried_segment()
                    count -= k
                continue
            whole = min(count, order.left // k * k)
            if whole:
                yield Segment(block.data, block.targets, order.take(whole))
                count -= whole
            else:  # fewer than k rows left in this shard: they start the next minibatch
                self._hold(block, order.take(order.left))

    def _hold(self, block: Block, rows: np.ndarray) -> None:
        """Copy ``rows`` of ``block`` aside for a minibatch that continues in the next shard."""
        X = block.X
        self._carry.append((X[rows], block.targets[:, rows]))  # type: ignore[index]
        self._carried += rows.shape[0]

    def _carried_segment(self) -> Segment:
        X = sp.vstack([part for part, _ in self._carry], format="csr")
        targets = np.concatenate([t for _, t in self._carry], axis=1)
        self._carry, self._carried = [], 0
        data = prepare(X)[0]
        return Segment(data, targets, np.arange(self.k, dtype=np.int64))


class InterleavingSampler:
    """Samples from ``window`` open shards of ``shards`` at once, their rows interleaved in
    chunks of CHUNK_ROWS (rounded to whole minibatches of ``batch_size``) copied into blocks of
    their own (see the module docstring). A chunk goes on across calls to ``draw``, so the draws
    do not depend on how a fit is chunked."""

    def __init__(
        self, shards: TrainingShards, batch_size: int, sampling: str, rng: np.random.Generator, window: int
    ):
        self.shards = shards
        self.sampling = sampling
        self.rng = rng
        self.window = window
        self.chunk_rows = max(1, CHUNK_ROWS // batch_size) * batch_size
        self._visit = np.array(shards.shard_ids)  # shards with rows, in this epoch's order
        self._visit_pos = len(self._visit)  # no shard open yet
        self._open: list[tuple[Block, _RowOrder]] = []
        self._chunk: tuple[KernelData, np.ndarray] | None = None
        self._chunk_pos = 0

    def compile(self) -> None:
        if self.sampling == "permutation":
            compile_for(shuffle_step, np.arange(1, dtype=np.int64), 0, np.empty(0))
        # For the arrays of the shards as they are opened (memory-mapped ones are read-only).
        source = self.shards.block(self.shards.shard_ids[0]).data
        rows = np.zeros(0, dtype=np.int64)
        indices = np.empty(0, dtype=source.indices.dtype)
        values = np.empty(0, dtype=source.data.dtype)
        indptr = np.zeros(1, dtype=np.uint64)
        compile_for(
            copy_rows, source.indptr, source.indices, source.data, rows, indptr, rows, indices, values
        )
        # And for rows set aside at a window's turnover (writable arrays: another signature).
        compile_for(copy_rows, indptr, indices, values, rows, indptr, rows, indices, values)

    def _fill(self) -> None:
        """Drop the used-up shards, then open the epoch's next ones up to the window (a new epoch,
        in a new order, once the last one's shards are all used up)."""
        self._open = [(block, order) for block, order in self._open if order.left]
        if not self._open and self._visit_pos >= len(self._visit):
            self.rng.shuffle(self._visit)
            self._visit_pos = 0
        while len(self._open) < self.window and self._visit_pos < len(self._visit):
            block = self.shards.block(int(self._visit[self._visit_pos]))
            self._visit_pos += 1
            self._open.append((block, _RowOrder(block.data.indptr.shape[0] - 1, self.sampling, self.rng)))

    def _next_chunk(self) -> tuple[KernelData, np.ndarray]:
        """The next chunk_rows rows from the open shards, in a random order, as one block (its
        kernel data and targets)."""
        pieces: list[tuple[Block, np.ndarray]] = []  # rows taken from each shard, in turn
        need = self.chunk_rows
        while need:
            if pieces:
                # The open shards ran out before the chunk was full (their rows are drawn in
                # proportion, so they run out together): the rows taken from them are copied
                # aside, so that _fill drops them before it opens the next window. Else a window's
                # turnover held two windows of shards at once.
                pieces = [self._set_aside(pieces)]
            self._fill()
            left = np.array([order.left for _, order in self._open])
            counts = self.rng.multivariate_hypergeometric(left, min(need, int(left.sum())))
            pieces += [
                (block, order.take(int(count)))
                for (block, order), count in zip(self._open, counts, strict=True)
                if count
            ]
            need -= int(counts.sum())
        # The j-th row taken goes to row dest[j] of the chunk: a uniformly random order.
        dest = np.empty(self.chunk_rows, dtype=np.int64)
        dest[self.rng.permutation(self.chunk_rows)] = np.arange(self.chunk_rows)
        return _gather(pieces, dest, self.shards.n_features, self.shards.n_outputs)

    def _set_aside(self, pieces: list[tuple[Block, np.ndarray]]) -> tuple[Block, np.ndarray]:
        """The rows ``pieces`` take, copied in the order taken into a block of their own (at most
        a chunk), with the rows that read them all in that order."""
        n = sum(len(rows) for _, rows in pieces)
        data, targets = _gather(
            pieces, np.arange(n, dtype=np.int64), self.shards.n_features, self.shards.n_outputs
        )
        return Block(None, data, targets), np.arange(n, dtype=np.int64)

    def draw(self, count: int) -> Iterator[Segment]:
        """Segments of ``count`` samples in all (a multiple of k), chunk after chunk."""
        while count > 0:
            if self._chunk is None or self._chunk_pos == self.chunk_rows:
                self._chunk, self._chunk_pos = None, 0  # dropped before the next is built
                self._chunk = self._next_chunk()
            take = min(count, self.chunk_rows - self._chunk_pos)
            yield Segment(*self._chunk, np.arange(self._chunk_pos, self._chunk_pos + take, dtype=np.int64))
            self._chunk_pos += take
            count -= take


def _gather(
    pieces: list[tuple[Block, np.ndarray]], dest: np.ndarray, n_features: int, n_outputs: int
) -> tuple[KernelData, np.ndarray]:
    """The rows ``pieces`` take (block, row indices), the j-th of them at row ``dest[j]``, copied
    into one CSR block (scipy's row indexing and vstack cost 7 ms a chunk, most of it Python
    around small copies; NumPy's index arithmetic 1.2 ms, three times PGS's own work on it)."""
    lengths = np.concatenate(
        [(block.data.indptr[rows + 1] - block.data.indptr[rows]).astype(np.int64) for block, rows in pieces]
    )
    out_lengths = np.empty_like(lengths)
    out_lengths[dest] = lengths
    indptr = np.zeros(len(dest) + 1, dtype=np.uint64)
    np.cumsum(out_lengths, out=indptr[1:])
    first = pieces[0][0].data
    indices = np.empty(int(indptr[-1]), dtype=first.indices.dtype)
    values = np.empty(int(indptr[-1]), dtype=first.data.dtype)
    targets = np.empty((n_outputs, len(dest)))
    at = 0
    for block, rows in pieces:
        to = dest[at : at + len(rows)]
        copy_rows(block.data.indptr, block.data.indices, block.data.data, rows, indptr, to, indices, values)
        targets[:, to] = block.targets[:, rows]
        at += len(rows)
    return KernelData(values, indices, indptr, False, n_features), targets


@njit(cache=True)
def copy_rows(indptr, indices, data, rows, out_indptr, dest, out_indices, out_data):
    """Row rows[i] of the CSR arrays (indptr, indices, data) into row dest[i] of the output,
    whose out_indptr is already laid out."""
    for i in range(rows.shape[0]):
        start = np.int64(indptr[rows[i]])
        n = np.int64(indptr[rows[i] + 1]) - start
        at = np.int64(out_indptr[dest[i]])
        for q in range(n):
            out_indices[at + q] = indices[start + q]
            out_data[at + q] = data[start + q]
