"""The fast call of a ``tf.function``: a ``__call__`` unrolled for the function's arity.

A call's overhead is mostly Python bytecode, so the path for positional tensors or arrays
(nothing active, a signature seen before) is generated per arity without loops or lists:
it reads each argument's NumPy value, looks its shapes and dtypes up in ``_fast`` and runs
the compiled program. Anything else takes ``Function._call``. Lists and tuples of tensors
(a layer's ``[w, b]``) have a fast path too (``flat_key``).

>>> import tapegrad as tf
>>> f = tf.function(lambda x, y: x + y)
>>> type(f).__call__ is not type(f).__mro__[1].__call__  # the unrolled call of arity 2
True
"""
import inspect

import numpy as np

from tapegrad.core.state import STATE
from tapegrad.core.tensor import Tensor


def flat_key(args):
    """``(key, values)`` of positional arguments that are tensors, arrays and lists or
    tuples of them (one level: a layer's ``[w, b]``), else None: the fast call's key (the
    structure, each value's shape and dtype) and the NumPy values in ``walk``'s order.

    >>> import numpy as np, tapegrad as tf
    >>> key, vals = flat_key(([tf.ones([2]), np.zeros(3)], tf.ones([])))
    >>> key[:2], len(vals)
    ((<class 'list'>, 2), 3)
    """
    key, vals = [], []
    for a in args:
        t = type(a)
        if t is Tensor or t is np.ndarray:
            items, key_part = (a,), None
        elif t is list or t is tuple:
            items, key_part = a, (t, len(a))
        else:
            return None
        if key_part is not None:
            key += key_part
        for b in items:
            tb = type(b)
            if tb is Tensor:
                v = b._value
            elif tb is np.ndarray:
                v = b
            else:
                return None
            key += (v.shape, v.dtype)
            vals.append(v)
    return tuple(key), vals


_FAST_CALL = """
def __call__(self, *args, **kwargs):
    if not kwargs and len(args) == {n} and STATE.stack.idle:
        {unpack}
{convert}
        run = self._fast.get(({key}))
        if run is not None:
            return run({vals})
    return self._call(args, kwargs)
"""
# an argument that is no tensor or array: lists and tuples of them have a fast path too
# (``flat_key``; its key starts with the container's type, never a shape, so the two kinds
# of key cannot meet)
_SLOW_ARG = """            found = flat_key(args)
            if found is not None:
                run = self._fast.get(found[0])
                if run is not None:
                    return run(*found[1])
            return self._call(args, kwargs)"""
_fast_classes = {}


def _signature(fn):
    """``inspect.signature(fn)``, or None for callables it cannot read (builtins)."""
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _fast_arity(sig):
    """How many positional arguments take the fast path (-1: never)."""
    if sig is None:
        return -1
    n = 0
    for p in sig.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            n += 1
        elif p.kind == p.KEYWORD_ONLY:
            return -1
    return n


def fast_class(base, n):
    """The subclass of ``base`` (``Function``) with the fast ``__call__`` for ``n``
    positional arguments, made once per arity."""
    cls = _fast_classes.get(n)
    if cls is None:
        convert = "\n".join(
            f"        t = type(a{i})\n"
            f"        if t is Tensor:\n            v{i} = a{i}._value\n"
            f"        elif t is ndarray:\n            v{i} = a{i}\n"
            f"        else:\n{_SLOW_ARG}" for i in range(n))
        src = _FAST_CALL.format(
            n=n, unpack=(", ".join(f"a{i}" for i in range(n)) + ", = args") if n else "pass",
            convert=convert, key="".join(f"v{i}.shape, v{i}.dtype, " for i in range(n)),
            vals=", ".join(f"v{i}" for i in range(n)))
        ns = {"STATE": STATE, "Tensor": Tensor, "ndarray": np.ndarray, "flat_key": flat_key}
        exec(compile(src, f"<tapegrad fast call {n}>", "exec"), ns)
        cls = type(base.__name__, (base,), {"__call__": ns["__call__"]})
        cls.__qualname__ = base.__qualname__
        cls.__module__ = base.__module__
        _fast_classes[n] = cls
    return cls
