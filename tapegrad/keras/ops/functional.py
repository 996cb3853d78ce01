"""``keras.ops``' ``switch``, ``vectorize``, ``custom_gradient``, ``associative_scan``,
``get_item`` and ``jvp``: control flow and function transformations over tapegrad's
``cond``, ``vmap``, ``custom_gradient`` and ``ForwardAccumulator``, so they trace and
differentiate.

>>> from tapegrad.keras import ops
>>> float(ops.switch(1, [lambda x: x + 1.0, lambda x: x * 3.0], 2.0))
6.0
"""
import math
import re

import numpy as np

from tapegrad.autodiff import ForwardAccumulator
from tapegrad.batching.vmap import vmap as _vmap
from tapegrad.control_flow import ops as _control_flow
from tapegrad.keras import _tf as tf
from tapegrad.keras.ops.extra import _t
from tapegrad.tape.custom_gradient import custom_gradient as _custom_gradient

__all__ = ["switch", "vectorize", "custom_gradient", "associative_scan", "get_item", "jvp"]


def _tensors(out):
    return tf.nest.map_structure(_t, out)


def switch(index, branches, *operands):
    """``branches[index](*operands)``, ``index`` clipped to the branches' range (so -1 is
    the first branch); a traced ``index`` selects at run time (nested ``cond``s).

    >>> float(switch(-1, [lambda: 1.0, lambda: 2.0]))
    1.0
    """
    index = tf.cast(_t(index), "int32")

    def pick(i):
        if i == len(branches) - 1:
            return _tensors(branches[i](*operands))
        return _control_flow.cond(index <= i, lambda: _tensors(branches[i](*operands)),
                                  lambda: pick(i + 1))

    return pick(0)


def custom_gradient(f):
    """A function ``f(*x) -> (y, grad)`` whose derivative is the user's ``grad(upstream)``
    (``tf.custom_gradient``, as Keras's TensorFlow backend).

    >>> import tapegrad as tf
    >>> @custom_gradient
    ... def clipped(x):
    ...     return x * 1.0, lambda g: tf.clip_by_value(g, -1.0, 1.0)
    >>> x = tf.constant(2.0)
    >>> with tf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = clipped(x) * 5.0
    >>> float(tape.gradient(y, x))
    1.0
    """
    return _custom_gradient(f)


_DIMS = r"\(\s*(?:\w+(?:\s*,\s*\w+)*)?\s*\)"
_SIGNATURE = re.compile(rf"^{_DIMS}(?:\s*,\s*{_DIMS})*\s*->\s*{_DIMS}(?:\s*,\s*{_DIMS})*$")


def _parse(signature):
    if not _SIGNATURE.match(signature):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    ins, outs = signature.split("->")
    parse = lambda side: [tuple(re.findall(r"\w+", d))  # noqa: E731
                          for d in re.findall(_DIMS, side)]
    return parse(ins), parse(outs)


def vectorize(pyfunc, *, excluded=None, signature=None):
    """``pyfunc`` applied to each element (or each core block of ``signature``, NumPy's
    generalized-ufunc form such as ``"(n),(n)->()"``) of its broadcast arguments, as
    ``numpy.vectorize``; computed once on the whole batch with ``vmap``. ``excluded``
    names positions or keywords passed through unchanged.

    >>> import numpy as np
    >>> import tapegrad as tf
    >>> dot = vectorize(lambda a, b: tf.reduce_sum(a * b), signature="(n),(n)->()")
    >>> dot(np.ones((2, 3), "float32"), np.arange(3, dtype="float32")).numpy().tolist()
    [3.0, 3.0]
    """
    excluded = set(excluded or ())

    def wrapped(*args, **kwargs):
        fixed_kw = {k: v for k, v in kwargs.items() if k in excluded}
        mapped_kw = [k for k in kwargs if k not in excluded]
        free = [i for i, a in enumerate(args) if i not in excluded and a is not None]
        values = [_t(args[i]) for i in free] + [_t(kwargs[k]) for k in mapped_kw]
        if signature is None:
            cores, out_cores = [()] * len(values), None
        else:
            cores, out_cores = _parse(signature)
            if len(cores) != len(values):
                raise TypeError(f"wrong number of positional arguments: expected "
                                f"{len(cores)}, got {len(values)}")
        sizes, batch_shapes = {}, []
        for v, core in zip(values, cores):
            if v.ndim < len(core):
                raise ValueError(f"input with shape {tuple(v.shape)} does not have enough "
                                 f"dimensions for all core dimensions {core}")
            n = v.ndim - len(core)
            for name, size in zip(core, v.shape[n:]):
                if sizes.setdefault(name, size) != size:
                    raise ValueError(f"inconsistent size for core dimension {name!r}: "
                                     f"{size} vs {sizes[name]}")
            batch_shapes.append(tuple(v.shape[:n]))
        batch = np.broadcast_shapes(*batch_shapes)
        count = math.prod(batch)
        flat = [tf.reshape(tf.broadcast_to(v, batch + tuple(v.shape[v.ndim - len(c):])),
                           (count,) + tuple(v.shape[v.ndim - len(c):]))
                for v, c in zip(values, cores)]

        def call(*vals):
            full = list(args)
            for i, v in zip(free, vals):
                full[i] = v
            kw = dict(fixed_kw, **dict(zip(mapped_kw, vals[len(free):])))
            return _tensors(pyfunc(*full, **kw))

        if not batch:
            return call(*[tf.reshape(v, v.shape[1:]) for v in flat])
        out = _vmap(call)(*flat)
        if out_cores is not None and len(out_cores) > 1 and (
                not isinstance(out, tuple) or len(out) != len(out_cores)):
            raise ValueError(f"output has the wrong number of values for signature "
                             f"{signature}")
        return tf.nest.map_structure(lambda y: tf.reshape(y, batch + tuple(y.shape[1:])), out)

    return wrapped


def associative_scan(f, elems, reverse=False, axis=0):
    """The inclusive scan of an associative ``f(a, b)`` (an earlier block first) along
    ``axis`` of ``elems`` (a structure of tensors of one length there): each prefix
    combined, in log2(n) rounds of ``f`` on whole blocks; ``reverse`` scans from the end.

    >>> associative_scan(lambda a, b: a + b, np.array([1.0, 2.0, 3.0])).numpy().tolist()
    [1.0, 3.0, 6.0]
    """
    if not callable(f):
        raise TypeError(f"`f` should be a callable. Received: f={f}")
    flat = [_t(e) for e in tf.nest.flatten(elems)]
    n = flat[0].shape[axis]
    if any(e.shape[axis] != n for e in flat[1:]):
        raise ValueError("Array inputs to associative_scan must have the same first "
                         f"dimension. (saw: {[tuple(e.shape) for e in flat]})")
    if reverse:
        flat = [tf.reverse(e, [axis]) for e in flat]

    def part(e, start, stop):
        return tf.gather(e, np.arange(start, stop), axis=axis)

    shift = 1
    while shift < n:
        # element i >= shift becomes f(element i - shift, element i): Hillis and Steele
        a = tf.nest.pack_sequence_as(elems, [part(e, 0, n - shift) for e in flat])
        b = tf.nest.pack_sequence_as(elems, [part(e, shift, n) for e in flat])
        combined = [_t(c) for c in tf.nest.flatten(f(a, b))]
        flat = [tf.concat([part(e, 0, shift), c], axis=axis) for e, c in zip(flat, combined)]
        shift *= 2
    if reverse:
        flat = [tf.reverse(e, [axis]) for e in flat]
    return tf.nest.pack_sequence_as(elems, flat)


def get_item(x, key):
    """``x[key]``.

    >>> get_item([[1, 2], [3, 4]], (1, 0)).numpy().tolist()
    3
    """
    return _t(x)[key]


def jvp(fun, primals, tangents, has_aux=False):
    """``(fun(*primals), J tangents)`` by forward mode (and ``fun``'s auxiliary output
    third with ``has_aux``, ``fun`` then returning ``(output, aux)``).

    >>> [float(v) for v in jvp(lambda x: x * x, (3.0,), (1.0,))]
    [9.0, 6.0]
    """
    flat = [_t(p) for p in tf.nest.flatten(primals)]
    directions = [tf.cast(_t(t), p.dtype) for t, p in zip(tf.nest.flatten(tangents), flat)]
    with ForwardAccumulator(flat, directions) as acc:
        args = tf.nest.pack_sequence_as(primals, flat)
        out = fun(*args)
        out, aux = out if has_aux else (out, None)
        outs = [_t(o) for o in tf.nest.flatten(out)]
        rates = [acc.jvp(o) for o in outs]
    result = (tf.nest.pack_sequence_as(out, outs), tf.nest.pack_sequence_as(out, rates))
    return result + (aux,) if has_aux else result
