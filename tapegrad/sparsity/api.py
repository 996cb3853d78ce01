"""The public functions: ``hessian``, ``jacobian`` and ``pattern`` (see the package doc)."""
import functools
import math

import numpy as np

from tapegrad import ops
from tapegrad.core import hooks
from tapegrad.core.tensor import Tensor
from tapegrad.ir.core import Program
from tapegrad.sparsity import detect
from tapegrad.sparsity.compressed import (MIN_SIZE, PlanCache, compressed_rows, decompress, usable,
                                          worth_it)
from tapegrad.tape.gradient_tape import GradientTape
from tapegrad.transforms import functional
from tapegrad.tape import jacobians
from tapegrad.util import nest


def _single_arg(args, argnums, name):
    """The index of the one differentiated argument, or None when it is not a plain tensor
    (nested structures, several argnums: those take the dense path)."""
    if isinstance(argnums, (tuple, list)) or isinstance(argnums, bool) \
            or not isinstance(argnums, (int, np.integer)):
        return None
    if not -len(args) <= argnums < len(args):
        return None  # the dense path raises the proper error
    a = args[argnums]
    if not isinstance(a, (Tensor, np.ndarray)) or nest.is_nested(a) or getattr(a, "_level", 0):
        return None
    return int(argnums) % len(args)


def _small(a):
    # too few elements for compression to pay: skip even the detection
    return math.prod(a.shape) < MIN_SIZE


def _record(f, fn_of, args, kwargs, num, name):
    """Run ``fn_of(f)`` on the arguments under a tape; ``(entries, x, y)`` or None."""
    with GradientTape(watch_accessed_variables=False) as tape:
        args, _, leaves = functional._diff_args(args, (num,), name)
        tape.watch(leaves)
        y = fn_of(f, num)(*args, **kwargs)
    x = leaves[0]
    if not isinstance(y, Tensor) or not usable(x) or y.dtype.kind != "f":
        return None
    return tape._entries, x, y


def _compressed(entries, x, y, cache, sparse, chunk_size):
    """The dense ``d y / d x`` of shape ``y.shape + x.shape``, compressed when it pays."""
    out_shape = tuple(y.shape) + tuple(x.shape)
    path = jacobians._Path(entries, {id(x)}, {id(y)})
    if id(y) not in path.connected:
        return ops.zeros(out_shape, dtype=y.dtype)
    plan = cache.get(path.entries, x, y) if sparse is not False else None
    if worth_it(plan, math.prod(x.shape), sparse):
        return decompress(compressed_rows(path, x, y, plan), plan, out_shape, y.dtype)
    ((block,),) = jacobians.tape_jacobians(entries, [y], [x], mode="forward",
                                           chunk_size=chunk_size, sparse=False)
    return block if block is not None else ops.zeros(out_shape, dtype=y.dtype)


def hessian(f, argnums=0, sparse=True, chunk_size=None, _dense=None):
    """The Hessian of a scalar ``f``, by sparsity detection, colouring and ``c`` HVPs.

    The pattern of ``grad f``'s Jacobian is detected once per structure (shapes, operations)
    and coloured; one forward-over-reverse pass then carries ``c`` directions instead of
    ``n``. ``sparse=True`` always compresses (when detection succeeds); ``None`` only when
    it needs at most a quarter of ``n`` directions (what ``tapegrad.hessian`` does);
    ``False`` is the dense ``tapegrad.hessian``. The result equals the dense Hessian.

    >>> import tapegrad as tf
    >>> f = lambda x: tf.reduce_sum(x[1:] * x[:-1])
    >>> tf.sparsity.hessian(f)(tf.constant([1.0, 2.0, 3.0])).numpy().tolist()
    [[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]
    """
    dense = _dense or functional.hessian(f, argnums, chunk_size=chunk_size, sparse=False)
    cache = PlanCache("hessian")

    @functools.wraps(f)
    def hessian_f(*args, **kwargs):
        num = _single_arg(args, argnums, "hessian")
        if num is None or sparse is False or (sparse is None and _small(args[num])):
            return dense(*args, **kwargs)
        rec = _record(f, functional.jacrev, args, kwargs, num, "hessian")
        if rec is None or tuple(rec[2].shape) != tuple(rec[1].shape):
            return dense(*args, **kwargs)  # not a scalar function of one float tensor
        return _compressed(*rec, cache, sparse, chunk_size)

    hessian_f._sparsity_cache = cache  # for inspection and tests
    return hessian_f


def _identity_fn(f, num):
    return f


def jacobian(f, argnums=0, sparse=True, chunk_size=None):
    """The Jacobian of ``f`` (one tensor in, one tensor out) with compressed forward mode.

    Columns that never share a row share one tangent direction (distance-2 colouring), so a banded
    Jacobian costs a few JVPs whatever its size. Shape ``out.shape + arg.shape``.

    >>> import tapegrad as tf
    >>> jac = tf.sparsity.jacobian(lambda x: x[1:] - x[:-1])
    >>> jac(tf.constant([1.0, 4.0, 9.0])).numpy().tolist()
    [[-1.0, 1.0, 0.0], [0.0, -1.0, 1.0]]
    """
    dense = functional.jacobian(f, argnums, "forward", chunk_size)
    cache = PlanCache("jacobian")

    @functools.wraps(f)
    def jac_f(*args, **kwargs):
        num = _single_arg(args, argnums, "jacobian")
        if num is None or sparse is False:
            return dense(*args, **kwargs)
        rec = _record(f, _identity_fn, args, kwargs, num, "jacobian")
        if rec is None:
            return dense(*args, **kwargs)
        return _compressed(*rec, cache, sparse, chunk_size)

    jac_f._sparsity_cache = cache
    return jac_f


def pattern(f, *args, argnums=0, kind="hessian", **kwargs):
    """The detected boolean sparsity pattern, flattened: ``(n, n)`` for ``kind='hessian'``
    (of ``grad f``'s Jacobian), ``(m, n)`` for ``kind='jacobian'``. None if too large.

    ``f`` may also be an IR ``Program`` (e.g. a ``ConcreteFunction``'s ``.program`` of
    ``grad f``); then the pattern of its output 0 with respect to input ``argnums``.

    >>> import tapegrad as tf
    >>> f = lambda x: tf.reduce_sum(x[1:] * x[:-1])
    >>> tf.sparsity.pattern(f, tf.constant([1.0, 2.0, 3.0])).astype(int).tolist()
    [[0, 1, 0], [1, 0, 1], [0, 1, 0]]
    """
    if isinstance(f, Program):
        return detect.program_pattern(f, wrt=argnums)
    if kind not in ("hessian", "jacobian"):
        raise ValueError(f"pattern: kind must be 'hessian' or 'jacobian', got {kind!r}.")
    num = _single_arg(args, argnums, "pattern")
    if num is None:
        raise TypeError("pattern: the differentiated argument must be one tensor or array.")
    rec = _record(f, functional.jacrev if kind == "hessian" else _identity_fn, args, kwargs, num,
                  "pattern")
    if rec is None:
        raise TypeError("pattern: f must map a floating tensor to one floating tensor.")
    entries, x, y = rec
    path = jacobians._Path(entries, {id(x)}, {id(y)})
    return detect.tape_pattern(path.entries, x, y)


# tapegrad.hessian (transforms/functional.py) compresses through this where it pays
hooks.install(sparse_hessian=hessian)
