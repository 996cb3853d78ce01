"""``tf.debugging``: assertions and numeric checks, with TensorFlow's errors.

Eagerly (and inside ``tf.function`` where the condition is known while tracing) a failed
assertion raises at once. A condition on symbolic values is staged: the compiled program
checks it each time it runs (the ``check`` primitive, primitives/checks.py) and raises
TensorFlow's ``InvalidArgumentError``. Shape and dtype assertions (``assert_rank``,
``assert_shapes``, ``assert_type``...) are static, as TensorFlow's are for known shapes:
``ValueError`` / ``TypeError`` while tracing. Assertions return None.

>>> import tapegrad as tf
>>> tf.debugging.assert_equal(tf.constant([1, 2]), [1, 2])
>>> tf.debugging.check_numerics(tf.constant([1.0, float("nan")]), "loss")
Traceback (most recent call last):
...
tapegrad.errors.InvalidArgumentError: loss : Tensor had NaN values
"""
import numpy as np

from tapegrad.core.dispatch import bind
from tapegrad.core.state import STATE
from tapegrad.core.tensor import Tensor
from tapegrad.errors import InvalidArgumentError
from tapegrad.ops import elementwise_ops
from tapegrad.ops import reduction_ops
from tapegrad.ops._convert import binary, tensor
from tapegrad.primitives import checks, effects

__all__ = [
    "Assert", "assert_all_finite", "assert_equal", "assert_greater", "assert_greater_equal",
    "assert_integer", "assert_less", "assert_less_equal", "assert_near", "assert_negative",
    "assert_non_negative", "assert_non_positive", "assert_none_equal", "assert_positive",
    "assert_proper_iterable", "assert_rank", "assert_rank_at_least", "assert_rank_in",
    "assert_same_float_dtype", "assert_scalar", "assert_shapes", "assert_type",
    "check_numerics", "is_numeric_tensor", "get_log_device_placement",
    "set_log_device_placement"]


def _concrete(t):
    return not getattr(t, "_symbolic", False)


def _require(ok, message, data, summarize=3):
    """Raise InvalidArgumentError unless ``ok`` (a bool tensor) is all true: now where it
    has a value, else when the compiled program runs."""
    if _concrete(ok):
        if not np.all(ok._value):
            raise InvalidArgumentError(checks.failure_text(
                message, [np.asarray(d._value) for d in data if _concrete(d)], summarize))
        return None
    from tapegrad.ops.logging_ops import _token
    if not STATE.stack.tracers:
        raise NotImplementedError("tf.debugging assertions inside vmap run only inside a "
                                  "tf.function; assert outside the vmap instead.")
    token = _token()
    token.assign(bind(checks.check_p, token.read_value(), ok, *data,
                      message=effects.codes(message), summarize=summarize))
    return None


def _prefix(message):
    return f"{message}\n" if message else ""


def _compare(fn, sym, x, y, message, summarize):
    x, y = binary(x, y, f"assert {sym}")
    ok = reduction_ops.reduce_all(fn(x, y))
    return _require(ok, f"{_prefix(message)}Condition x {sym} y did not hold.", [x, y],
                    3 if summarize is None else summarize)


def assert_equal(x, y, message=None, summarize=None, name=None):
    """Raise ``InvalidArgumentError`` unless ``x == y`` everywhere (broadcasting)."""
    return _compare(elementwise_ops.equal, "==", x, y, message, summarize)


def assert_none_equal(x, y, message=None, summarize=None, name=None):
    """Raise ``InvalidArgumentError`` unless ``x != y`` everywhere."""
    return _compare(elementwise_ops.not_equal, "!=", x, y, message, summarize)


def assert_less(x, y, message=None, summarize=None, name=None):
    """Raise ``InvalidArgumentError`` unless ``x < y`` everywhere."""
    return _compare(elementwise_ops.less, "<", x, y, message, summarize)


def assert_less_equal(x, y, message=None, summarize=None, name=None):
    """Raise ``InvalidArgumentError`` unless ``x <= y`` everywhere."""
    return _compare(elementwise_ops.less_equal, "<=", x, y, message, summarize)


def assert_greater(x, y, message=None, summarize=None, name=None):
    """Raise ``InvalidArgumentError`` unless ``x > y`` everywhere."""
    return _compare(elementwise_ops.greater, ">", x, y, message, summarize)


def assert_greater_equal(x, y, message=None, summarize=None, name=None):
    """Raise ``InvalidArgumentError`` unless ``x >= y`` everywhere."""
    return _compare(elementwise_ops.greater_equal, ">=", x, y, message, summarize)


def _sign(fn, sym, x, message, summarize):
    x = tensor(x)
    ok = reduction_ops.reduce_all(fn(x, 0))
    return _require(ok, f"{_prefix(message)}Condition x {sym} 0 did not hold element-wise:",
                    [x], 3 if summarize is None else summarize)


def assert_positive(x, message=None, summarize=None, name=None):
    """Raise ``InvalidArgumentError`` unless ``x > 0`` everywhere."""
    return _sign(elementwise_ops.greater, ">", x, message, summarize)


def assert_negative(x, message=None, summarize=None, name=None):
    """Raise ``InvalidArgumentError`` unless ``x < 0`` everywhere."""
    return _sign(elementwise_ops.less, "<", x, message, summarize)


def assert_non_negative(x, message=None, summarize=None, name=None):
    """Raise ``InvalidArgumentError`` unless ``x >= 0`` everywhere."""
    return _sign(elementwise_ops.greater_equal, ">=", x, message, summarize)


def assert_non_positive(x, message=None, summarize=None, name=None):
    """Raise ``InvalidArgumentError`` unless ``x <= 0`` everywhere."""
    return _sign(elementwise_ops.less_equal, "<=", x, message, summarize)


def assert_near(x, y, rtol=None, atol=None, message=None, summarize=None, name=None):
    """Raise ``InvalidArgumentError`` unless ``|x - y| <= atol + rtol * |y|`` everywhere;
    ``rtol`` and ``atol`` default to 10 ulp of the dtype (``ValueError`` for integers)."""
    x, y = binary(x, y, "assert_near")
    if x.dtype.kind not in "fc":
        raise ValueError(f"data type {x.dtype.type} not inexact")
    eps = float(np.finfo(x.dtype).eps)
    rtol = 10 * eps if rtol is None else rtol
    atol = 10 * eps if atol is None else atol
    real = np.finfo(x.dtype).dtype
    diff = elementwise_ops.abs(x - y)
    tol = tensor(np.asarray(atol, real)) + tensor(np.asarray(rtol, real)) * elementwise_ops.abs(y)
    ok = reduction_ops.reduce_all(elementwise_ops.less_equal(diff, tol))
    return _require(ok, f"{_prefix(message)}x and y not equal to tolerance rtol = {rtol}, "
                    f"atol = {atol}", [x, y], 3 if summarize is None else summarize)


def check_numerics(tensor_, message, name=None):
    """``tensor_`` itself; raises ``InvalidArgumentError`` (``'message : Tensor had NaN
    values'``, or Inf) where it holds a NaN or an infinity. Floats only."""
    t = tensor(tensor_)
    if t.dtype.kind not in "fc":
        raise InvalidArgumentError(f"Value for attr 'T' of {t.dtype.name} is not in the list "
                                   "of allowed values: half, float, double")
    if _concrete(t):
        v = t._value
        if np.isnan(v).any():
            raise InvalidArgumentError(f"{message} : Tensor had NaN values")
        if np.isinf(v).any():
            raise InvalidArgumentError(f"{message} : Tensor had Inf values")
        return t
    _require(reduction_ops.reduce_all(elementwise_ops.logical_not(elementwise_ops.is_nan(t))), f"{message} : Tensor had NaN values",
             [], 0)
    _require(reduction_ops.reduce_all(elementwise_ops.logical_not(elementwise_ops.is_inf(t))), f"{message} : Tensor had Inf values",
             [], 0)
    return t


def assert_all_finite(x, message, name=None):
    """``check_numerics``: ``x`` itself, ``InvalidArgumentError`` where not all finite."""
    return check_numerics(x, message)


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - TensorFlow's name
    """Raise ``InvalidArgumentError`` unless ``condition`` (a bool scalar) holds, printing
    ``data`` (tensors and strings)."""
    ok = tensor(condition)
    if ok.dtype != np.bool_:
        raise TypeError(f"condition must be a bool tensor, got {ok.dtype.name}")
    text = [d for d in data if isinstance(d, str)]
    tensors = [tensor(d) for d in data if not isinstance(d, str)]
    head = f"Expected '{bool(ok._value) if _concrete(ok) else ok}' to be true. Summarized data: "
    return _require(ok, head + " ".join(text), tensors, 3 if summarize is None else summarize)


# -- static checks -----------------------------------------------------------------------
def _msg(message):
    return f"{message}.  " if message else ""


def assert_rank(x, rank, message=None, name=None):
    """``ValueError`` unless ``x`` has rank ``rank``."""
    x = tensor(x)
    if x.ndim != int(rank):
        raise ValueError(f"{_msg(message)}Tensor  must have rank {int(rank)}.  Received rank "
                         f"{x.ndim}, shape {x.shape}")


def assert_rank_at_least(x, rank, message=None, name=None):
    """``ValueError`` unless ``x`` has rank ``rank`` or more."""
    x = tensor(x)
    if x.ndim < int(rank):
        raise ValueError(f"{_msg(message)}Tensor  must have rank at least {int(rank)}.  "
                         f"Received rank {x.ndim}, shape {x.shape}")


def assert_rank_in(x, ranks, message=None, name=None):
    """``ValueError`` unless the rank of ``x`` is one of ``ranks``."""
    x = tensor(x)
    ranks = tuple(int(r) for r in ranks)
    if x.ndim not in ranks:
        raise ValueError(f"{_msg(message)}Tensor  must have rank in {ranks}.  Received rank "
                         f"{x.ndim}, shape {x.shape}")


def assert_scalar(tensor_, name=None, message=None):
    """``ValueError`` unless ``tensor_`` is a scalar."""
    t = tensor(tensor_)
    if t.ndim != 0:
        raise ValueError(f"{_msg(message)}Expected scalar shape, saw shape: {t.shape}.")


def assert_type(tensor_, tf_type, message=None, name=None):
    """``TypeError`` unless the dtype is ``tf_type``."""
    t = tensor(tensor_)
    want = np.dtype(tf_type)
    if t.dtype != want:
        raise TypeError(f"{_msg(message)}tensor must be of type tf.{want.name}; got "
                        f"tf.{t.dtype.name}")


def assert_integer(x, message=None, name=None):
    """``TypeError`` unless ``x`` has an integer dtype."""
    x = tensor(x)
    if x.dtype.kind not in "iu":
        raise TypeError(f'{_msg(message)}Expected "x" to be integer type.  Found: tensor of '
                        f"dtype {x.dtype.name}")


def assert_same_float_dtype(tensors=None, dtype=None):
    """The one float dtype of ``tensors`` (and ``dtype``); ``ValueError`` if they differ."""
    seen = {np.dtype(t.dtype) for t in (tensors or ())}
    if dtype is not None:
        seen.add(np.dtype(dtype))
    if len(seen) > 1:
        raise ValueError(f"Unexpected dtypes: {sorted(d.name for d in seen)}")
    got = seen.pop() if seen else np.dtype("float32")
    if got.kind != "f":
        raise ValueError(f"Expected floating point type, got {got.name}.")
    return got


def assert_proper_iterable(values):
    """``TypeError`` for a tensor, array, string or bytes (iterable, but not as intended)."""
    if isinstance(values, (Tensor, np.ndarray, str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"Expected argument 'values' to be a 'proper' iterable.  Found: "
                        f"{type(values)}")


def _spec(spec):
    """``(prefix_any, dims)`` of a shape spec: ``...`` or ``'*'`` first allows any leading
    dimensions."""
    dims = list(spec)
    lead = bool(dims) and (dims[0] is Ellipsis or dims[0] in ("*", "..."))
    return lead, dims[1:] if lead else dims


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None):
    """``ValueError`` unless each tensor's shape fits its spec: ints, and names that must
    have one size across all tensors (``[(x, ('N', 3)), (y, ('N',))]``); a leading ``...``
    or ``'*'`` allows any leading dimensions."""
    items = list(shapes.items()) if isinstance(shapes, dict) else list(shapes)
    sizes = {}
    for x, spec in items:
        x = tensor(x)
        lead, dims = _spec(spec)
        shape = tuple(x.shape)
        if len(shape) < len(dims) if lead else len(shape) != len(dims):
            word = "at least " if lead else ""
            raise ValueError(f"{_msg(message)}Tensor  must have rank {word}{len(dims)}.  "
                             f"Received rank {len(shape)}, shape {x.shape}")
        own = shape[len(shape) - len(dims):]
        for i, (d, s) in enumerate(zip(dims, own)):
            axis = len(shape) - len(dims) + i
            where = f"Tensor shape={x.shape} dtype={x.dtype.name} dimension {axis}"
            if isinstance(d, str) and d not in ("*", "."):
                if d not in sizes:
                    sizes[d] = (s, where)
                    continue
                want, by = sizes[d]
                origin = f"Specified by {by.replace('Tensor ', 'tensor ', 1)}."
            elif d is None or d in ("*", "."):
                continue
            else:
                want, origin = int(d), "Specified explicitly."
            if s != want:
                raise ValueError(f"{_msg(message)}{origin}  {where} must have size {want}.  "
                                 f"Received size {s}, shape {x.shape}")


def is_numeric_tensor(tensor_):
    """True for a tensor of a number dtype (bool and strings are not)."""
    return isinstance(tensor_, Tensor) and tensor_.dtype.kind in "iufc"


_LOG_PLACEMENT = [False]


def set_log_device_placement(enabled):
    """Recorded only: tapegrad runs every operation on the CPU, with NumPy."""
    _LOG_PLACEMENT[0] = bool(enabled)


def get_log_device_placement():
    """The flag ``set_log_device_placement`` recorded."""
    return _LOG_PLACEMENT[0]
