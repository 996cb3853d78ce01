"""Vectorized Jacobians over a recorded tape, in reverse or forward mode.

Reverse mode runs the backward pass once with a *batched* cotangent: the rows of an identity
matrix, carried as a ``BatchedTensor``; every derivative rule then works on all rows at once
through the batching rules. Forward mode replays the tape with batched tangents. ``auto``
picks the mode with fewer passes: forward when the source has fewer elements than the target.
Rows are processed in chunks so that one chunk stays within a memory budget.
"""
import numpy as np

import tapegrad.ops as T
from tapegrad import config
from tapegrad.core.tensor import Tensor
from tapegrad.transforms.batching import BatchedTensor, batch_level, unbatch

MODES = ("auto", "forward", "reverse")


def check_mode(mode):
    if mode is None:
        return "auto"
    if mode not in MODES:
        raise ValueError(f"Unknown Jacobian mode {mode!r}; expected one of {MODES}.")
    return mode


def check_chunk_size(chunk_size):
    if chunk_size is None:
        return None
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) \
            or chunk_size <= 0:
        raise ValueError(f"chunk_size must be a positive integer or None, got {chunk_size!r}.")
    return int(chunk_size)


def choose_mode(mode, n_in, n_out):
    if mode == "auto":
        return "forward" if n_in < n_out else "reverse"
    return mode


def _size(shape):
    n = 1
    for s in shape:
        n *= int(s)
    return n


def auto_chunk(entries, n_rows, itemsize=8):
    """Rows per chunk so that the batched intermediates fit the memory budget."""
    widest = 1
    for e in entries:
        widest = max(widest, _size(e[3].shape))
    per_row = 4 * widest * itemsize  # a few live intermediates of the widest size per row
    return max(1, min(n_rows, config.memory_budget() // per_row))


def _chunks(n, size):
    for start in range(0, n, size):
        yield start, min(n, start + size)


def _basis(n, start, stop, shape, dtype):
    """Rows start..stop of the n x n identity, each reshaped to ``shape``."""
    rows = np.zeros((stop - start, n), dtype=dtype)
    rows[np.arange(stop - start), np.arange(start, stop)] = 1
    return Tensor._wrap(rows.reshape((stop - start,) + tuple(shape)))


def _run_batched(fn, seed_value, rows):
    """Call ``fn(seed)`` with the seed batched over ``rows``; return the stacked result."""
    with batch_level() as lvl:
        out = fn(BatchedTensor(seed_value, lvl))
        if out is None:
            return None
        return unbatch(out, lvl, rows)


def tape_jacobian(entries, target, source, *, mode, loop, chunk_size):
    from tapegrad.tape.gradient_tape import backward, forward, reachable_from
    n_out, n_in = _size(target.shape), _size(source.shape)
    tshape, sshape = tuple(target.shape), tuple(source.shape)
    if target is not source and id(target) not in reachable_from(entries, {id(source)}):
        return None
    if n_out == 0 or n_in == 0:
        return T.zeros(tshape + sshape, dtype=source.dtype)
    mode = choose_mode(mode, n_in, n_out)
    dt = target.dtype if mode == "reverse" else source.dtype
    n_rows = n_out if mode == "reverse" else n_in
    if loop:
        chunk_size = 1
    size = chunk_size or auto_chunk(entries, n_rows, dt.itemsize)
    parts = []
    for start, stop in _chunks(n_rows, size):
        if mode == "reverse":
            seed = _basis(n_out, start, stop, tshape, dt)
            fn = lambda s: backward(entries, {id(target): s}, {id(source)}).get(id(source))
        else:
            seed = _basis(n_in, start, stop, sshape, dt)
            fn = lambda s: (s if target is source else forward(entries, {id(source): s},
                                                                  id(target)))
        part = _run_batched(fn, seed, stop - start)
        if part is None:
            part = T.zeros((stop - start,) + (sshape if mode == "reverse" else tshape), dt)
        parts.append(part)
    j = parts[0] if len(parts) == 1 else T.concat(parts, 0)
    if mode == "reverse":
        return T.reshape(j, tshape + sshape)
    j = T.transpose(T.reshape(j, (n_in, n_out)))
    return T.reshape(j, tshape + sshape)


def tape_batch_jacobian(entries, target, source, *, mode, loop, chunk_size):
    from tapegrad.tape.gradient_tape import backward, forward, reachable_from
    b = target.shape[0]
    yshape, xshape = tuple(target.shape[1:]), tuple(source.shape[1:])
    ny, nx = _size(yshape), _size(xshape)
    if target is not source and id(target) not in reachable_from(entries, {id(source)}):
        return None
    if ny == 0 or nx == 0:
        return T.zeros((b,) + yshape + xshape, dtype=source.dtype)
    mode = choose_mode(mode, nx, ny)
    n_rows = ny if mode == "reverse" else nx
    dt = target.dtype if mode == "reverse" else source.dtype
    if loop:
        chunk_size = 1
    size = chunk_size or auto_chunk(entries, n_rows, dt.itemsize)
    parts = []
    for start, stop in _chunks(n_rows, size):
        k = stop - start
        if mode == "reverse":
            rows = _basis(ny, start, stop, yshape, dt)._value
            seed = Tensor._wrap(np.broadcast_to(rows[:, None], (k, b) + yshape))
            fn = lambda s: backward(entries, {id(target): s}, {id(source)}).get(id(source))
        else:
            rows = _basis(nx, start, stop, xshape, dt)._value
            seed = Tensor._wrap(np.broadcast_to(rows[:, None], (k, b) + xshape))
            fn = lambda s: (s if target is source else forward(entries, {id(source): s},
                                                                  id(target)))
        part = _run_batched(fn, seed._value, k)
        if part is None:
            part = T.zeros((k, b) + (xshape if mode == "reverse" else yshape), dt)
        parts.append(part)
    j = parts[0] if len(parts) == 1 else T.concat(parts, 0)
    if mode == "reverse":   # (ny, b, x...) -> (b, y..., x...)
        j = T.transpose(T.reshape(j, (ny, b, nx)), (1, 0, 2))
    else:                   # (nx, b, y...) -> (b, y..., x...)
        j = T.transpose(T.reshape(j, (nx, b, ny)), (1, 2, 0))
    return T.reshape(j, (b,) + yshape + xshape)
