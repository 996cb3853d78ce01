"""Python inside TensorFlow programs: ``tf.py_function`` (a Python function of tensors,
differentiable through the operations it runs), ``tf.numpy_function`` (a function of NumPy
arrays, no gradient) and ``tf.ensure_shape``.

Both run the Python function when they are called. tapegrad's generated programs are NumPy
code without Python callbacks, so inside ``tf.function`` they raise instead of running the
function once at trace time, which would freeze its result into the program. ``tf.data``'s
``map`` runs its function eagerly, so they work there.

>>> import tapegrad as tf
>>> tf.numpy_function(lambda a: a * 2, [tf.constant([1.0, 2.0])], tf.float32).numpy().tolist()
[2.0, 4.0]
"""
import numpy as np

from tapegrad.core import dtypes as _dt
from tapegrad.core.state import STATE
from tapegrad.core.tensor import Tensor, convert_to_tensor
from tapegrad.errors import InvalidArgumentError

__all__ = ["py_function", "numpy_function", "ensure_shape"]


def _outside_traces(name):
    if STATE.stack.tracers:
        raise NotImplementedError(
            f"tf.{name} inside tf.function: tapegrad compiles functions into NumPy code, "
            "which cannot call back into Python, and running the function once while tracing "
            "would freeze its result into the program. Call it outside tf.function, or run "
            "functions eagerly with tf.config.run_functions_eagerly(True).")


def _result(value, dtype, name):
    """``value`` as a tensor of ``dtype``: a Python number or list is converted, a tensor or
    array of another dtype raises (TensorFlow's InvalidArgumentError)."""
    dtype = _dt.as_dtype(dtype)
    if isinstance(value, (Tensor, np.ndarray, np.generic)) and value.dtype != dtype:
        raise InvalidArgumentError(
            f"{name}: the function returned a {_dt.as_dtype(value.dtype).name} value where "
            f"Tout asks for {dtype.name}.")
    if isinstance(value, Tensor):
        return value
    return convert_to_tensor(value, dtype=dtype)


def _outputs(ret, Tout, name):
    if isinstance(Tout, (list, tuple)):
        if not Tout:
            return []
        ret = [ret] if not isinstance(ret, (list, tuple)) else list(ret)
        if len(ret) != len(Tout):
            raise ValueError(f"{name}: the function returned {len(ret)} values, Tout lists "
                             f"{len(Tout)}.")
        return [_result(r, t, name) for r, t in zip(ret, Tout)]
    if Tout is None:
        return None
    return _result(ret, Tout, name)


def py_function(func=None, inp=None, Tout=None, name=None):
    """Call ``func(*inp)`` on tensors, eagerly; its results become tensors of ``Tout`` (a
    dtype, or a list of them). Tapes record the operations ``func`` runs, so gradients flow
    through it, as in TensorFlow.

    >>> import tapegrad as tf
    >>> x = tf.constant(3.0)
    >>> with tf.GradientTape() as g:
    ...     g.watch(x)
    ...     y = tf.py_function(lambda a: a * a, [x], tf.float32)
    >>> float(g.gradient(y, x))
    6.0
    """
    _outside_traces("py_function")
    args = [a if isinstance(a, Tensor) else convert_to_tensor(a) for a in (inp or [])]
    return _outputs(func(*args), Tout, "py_function")


def numpy_function(func, inp, Tout, stateful=True, name=None):
    """Call ``func(*arrays)`` on the inputs' NumPy values; its results become tensors of
    ``Tout``. Nothing is recorded: the results have no gradient (None), as in TensorFlow.

    >>> import numpy as np, tapegrad as tf
    >>> tf.numpy_function(np.sort, [tf.constant([3, 1, 2])], tf.int32).numpy().tolist()
    [1, 2, 3]
    """
    _outside_traces("numpy_function")
    arrays = [np.asarray(a._value if isinstance(a, Tensor) else a) for a in inp]
    out = func(*arrays)
    if isinstance(out, (list, tuple)):
        out = type(out)(np.asarray(o) if isinstance(o, np.ndarray) else o for o in out)
    return _outputs(out, Tout, "numpy_function")


def ensure_shape(x, shape, name=None):
    """``x`` itself if its shape fits ``shape`` (None: any size; a None shape: anything),
    else TensorFlow's InvalidArgumentError (ValueError while ``tf.function`` traces).

    >>> import tapegrad as tf
    >>> tf.ensure_shape(tf.zeros((2, 3)), [None, 3]).shape
    TensorShape([2, 3])
    """
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    if shape is None:
        return x
    dims = getattr(shape, "dims", shape)
    if dims is None:
        return x
    want = [None if v is None else int(v) for v in (getattr(d, "value", d) for d in dims)]
    have = list(x.shape)
    if len(want) != len(have) or any(w is not None and w != h for w, h in zip(want, have)):
        if STATE.stack.tracers:  # TensorFlow's shape inference refuses it while tracing
            raise ValueError(f"Shape {x.shape} is not compatible with the expected shape "
                             f"{want}")

        def show(s):
            return "[" + ",".join("?" if d is None else str(d) for d in s) + "]"
        raise InvalidArgumentError(f"Shape of tensor input {show(have)} is not compatible "
                                   f"with expected shape {show(want)}.")
    return x
