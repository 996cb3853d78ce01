"""``batch_jacobian`` on a tape: per-example Jacobians by TensorFlow's definition (a sum
over the target's batch), with a warning where sparsity detection sees coupled examples.
The passes, chunks and bases are tape/jacobians.py's."""
import warnings

import numpy as np

from tapegrad.primitives.api import concat, reshape, transpose, zeros
from tapegrad.core import hooks
from tapegrad.core.tensor import Tensor
from tapegrad.tape.jacobians import (_Path, _basis, _broadcast_basis, _chunks, _is_float,
                                     _rows_per_chunk, _run_rows, _size, _unobserved,
                                     _zeros_rows, choose_mode)

_wrap = Tensor._wrap


class BatchCouplingWarning(UserWarning):
    """``batch_jacobian`` of a target whose examples depend on each other."""


COUPLED_WARNING = (
    "batch_jacobian: examples of the target depend on other examples of the source (a mean "
    "over the batch, batch normalization in training, ...), so the result is not a "
    "per-example Jacobian: entry [b, i, j] is the sum over the target's batch b' of "
    "d target[b', i] / d source[b, j], as in TensorFlow. Use jacobian for the full "
    "Jacobian.")


def tape_batch_jacobian(entries, target, source, *, mode="auto", chunk_size=None, loop=False):
    """``J[b, i, j] = sum over b' of d target[b', i] / d source[b, j]``, of shape
    ``[b, y1..yn, x1..xm]`` (TensorFlow's definition); None if ``target`` does not depend on
    ``source``. For independent examples that is each example's Jacobian.

    When sparsity detection sees that examples are coupled it warns
    (``BatchCouplingWarning``) and uses reverse mode, which computes that sum; forward mode
    (which would sum over the source's batch) runs only where the examples are known to be
    independent.
    """
    if not (_is_float(target) and _is_float(source)):
        return None
    path = _Path(entries, {id(source)}, {id(target)})
    if id(target) not in path.connected:
        return None
    b = target.shape[0]
    yshape, xshape = tuple(target.shape[1:]), tuple(source.shape[1:])
    ny, nx = _size(yshape), _size(xshape)
    out_shape = (b,) + yshape + xshape
    if ny == 0 or nx == 0 or b == 0:
        return zeros(out_shape, dtype=target.dtype)
    coupled = hooks.batch_coupling(path.entries, source, target) if hooks.batch_coupling \
        else None
    if coupled:
        warnings.warn(COUPLED_WARNING, BatchCouplingWarning, stacklevel=4)
    mode = choose_mode(mode, nx, ny)
    if mode == "forward" and coupled is not False:
        # Forward mode sums over the source's batch, TensorFlow's batch_jacobian over the
        # target's: they agree only for independent examples.
        mode = "reverse"
    reverse = mode == "reverse"
    if not loop and hooks.sparse_jacobian is not None:
        out = hooks.sparse_jacobian(path, target, source, reverse, chunk_size, batch=True)
        if out is not None:
            return out
    n_rows = ny if reverse else nx
    dt = target.dtype if reverse else source.dtype
    size = _rows_per_chunk(path, n_rows, dt, chunk_size, loop, b * max(nx, ny), b * nx * ny)
    row_shape = yshape if reverse else xshape
    tid, sid = id(target), id(source)

    if reverse:
        def pass_(cotangent):
            return [path.backward({tid: cotangent}, {sid}).get(sid)]
    else:
        def pass_(tangent):
            return [path.forward({sid: tangent}, {tid}).get(tid)]

    parts = []
    for start, stop in _chunks(n_rows, size):
        k = stop - start
        rows = _basis(n_rows, start, stop, dt).reshape((k, 1) + row_shape)
        (part,) = _run_rows(pass_, _broadcast_basis(rows, (k, b) + row_shape), k)
        parts.append((part, k))
    if all(p is None for p, _ in parts):
        return zeros(out_shape, dtype=target.dtype)
    parts = [(p if p is not None else _zeros_rows(k, parts), k) for p, k in parts]
    return _assemble_batch(parts, b, ny, nx, out_shape, reverse)


def _assemble_batch(parts, b, ny, nx, out_shape, reverse):
    # a part holds rows (k, b, ...) of the (n_rows, b, n_other) array J[row, example, other]
    n_other = nx if reverse else ny
    perm = (1, 0, 2) if reverse else (1, 2, 0)
    vals = [p for p, _ in parts]
    if all(_unobserved(v) for v in vals):
        if len(vals) == 1:
            a = vals[0]._value
            a = a.reshape(a.shape[0], b, n_other).transpose(perm)
            return _wrap(np.ascontiguousarray(a).reshape(out_shape))
        buf = np.empty((b, ny, nx), vals[0].dtype)
        start = 0
        for v in vals:
            a = v._value
            k = a.shape[0]
            a = a.reshape(k, b, n_other).transpose(perm)
            if reverse:
                buf[:, start:start + k, :] = a
            else:
                buf[:, :, start:start + k] = a
            start += k
        return _wrap(buf.reshape(out_shape))
    j = vals[0] if len(vals) == 1 else concat(vals, 0)
    n_rows = ny if reverse else nx
    j = transpose(reshape(j, (n_rows, b, n_other)), perm)
    return reshape(j, out_shape)
