"""Neural-network functions, composed from primitives so that every order differentiates."""
import math
import numpy as np

from tapegrad.core.dispatch import PRIMITIVES, bind
from tapegrad.ops import math_ops
from tapegrad.errors import InvalidArgumentError as _InvalidArgumentError
from tapegrad.core.tensor import Tensor
from tapegrad.ops._convert import axis1, tensor
from tapegrad.ops._kinds import require as _require
from tapegrad.ops._convert import cast as _cast
from tapegrad.ops.array_ops import expand_dims as _expand_dims
from tapegrad.ops.array_ops import range as _range
from tapegrad.ops.array_ops import stop_gradient
from tapegrad.ops.special_ops import erfc as _erfc
from tapegrad.primitives import elementwise
from tapegrad.ops import conv_ops as _conv_ops
from tapegrad.ops import pool_ops as _pool_ops
from tapegrad.ops.conv_ops import *  # noqa: F401,F403
from tapegrad.ops.pool_ops import *  # noqa: F401,F403


def relu(features, name=None):
    """max(x, 0); the gradient at 0 is 0.

    >>> import tapegrad as tf
    >>> tf.nn.relu([-1.0, 2.0]).numpy().tolist()
    [0.0, 2.0]
    """
    return bind(elementwise.relu_p, tensor(features))


def relu6(features, name=None):
    """min(max(x, 0), 6); the gradient is 1 strictly between 0 and 6 (0 at both ends, as TF).

    >>> import tapegrad as tf
    >>> tf.nn.relu6([-1.0, 3.0, 9.0]).numpy().tolist()
    [0.0, 3.0, 6.0]
    """
    return bind(elementwise.relu6_p, tensor(features))


def elu(features, name=None):
    """exp(x) - 1 for x < 0, else x (TensorFlow's branch: at 0 and at NaN the linear one)."""
    x = tensor(features)
    _require(x, "f", "Elu")
    return math_ops.where(x < 0, math_ops.expm1(math_ops.minimum(x, 0.0)), x)


def selu(features, name=None):
    """Scaled ELU with the self-normalising constants (the exponential branch for x < 0)."""
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    x = tensor(features)
    _require(x, "f", "Selu")
    return scale * math_ops.where(x < 0, alpha * math_ops.expm1(math_ops.minimum(x, 0.0)), x)


def leaky_relu(features, alpha=0.2, name=None):
    """x for x > 0, else alpha * x; integers are cast to float32, as in TensorFlow.

    >>> import tapegrad as tf
    >>> tf.nn.leaky_relu([-2.0, 1.0]).numpy().tolist()
    [-0.4000000059604645, 1.0]
    """
    x = tensor(features)
    _require(x, "iuf", "LeakyRelu")
    if x.dtype.kind in "iu":
        x = _cast(x, "float32")
    if isinstance(alpha, (int, float)) and not isinstance(alpha, bool) and x.dtype.kind == "f":
        # one primitive: its derivative (TensorFlow's LeakyReluGrad) differentiates to zeros;
        # alpha is a float32 attr in TensorFlow, so float64 tensors see 0.2 as 0.2000000029
        return bind(PRIMITIVES["leaky_relu"], x, alpha=float(np.float32(alpha)))
    return math_ops.where(x > 0, x, x * alpha)


def softplus(features, name=None):
    """log(1 + exp(x))."""
    return math_ops.softplus(features)


def sigmoid(x, name=None):
    """1 / (1 + exp(-x))."""
    return math_ops.sigmoid(x)


def tanh(x, name=None):
    """Hyperbolic tangent (``tf.nn.tanh`` is ``tf.math.tanh``)."""
    return math_ops.tanh(x)


l2_normalize = math_ops.l2_normalize


def swish(features, beta=1.0):
    """x * sigmoid(beta * x), also called SiLU."""
    x = tensor(features)
    return x * math_ops.sigmoid(x * beta) if beta != 1.0 else x * math_ops.sigmoid(x)


silu = swish


def gelu(features, approximate=False, name=None):
    """Gaussian error linear unit; exact (erf) by default, tanh form if ``approximate``."""
    x = tensor(features)
    if x.dtype.kind != "f":
        raise ValueError("`features.dtype` must be a floating point tensor."
                         f"Received:features.dtype={x.dtype}")
    if approximate:
        c = math.sqrt(2 / math.pi)
        return 0.5 * x * (1 + math_ops.tanh(c * (x + 0.044715 * x * x * x)))
    # TensorFlow's form: erfc keeps the left tail (1 + erf(x) would cancel to 0 there)
    return 0.5 * x * _erfc(x * -(1 / math.sqrt(2)))


def softmax(logits, axis=None, name=None):
    """exp(x) / sum(exp(x)) along ``axis`` (default last), computed stably."""
    x = tensor(logits)
    a = axis1(-1 if axis is None else axis, x.ndim, "softmax")
    e = math_ops.exp(x - stop_gradient(math_ops.reduce_max(x, axis=a, keepdims=True)))
    return e / math_ops.reduce_sum(e, axis=a, keepdims=True)


def log_softmax(logits, axis=None, name=None):
    """x - logsumexp(x) along ``axis`` (default last)."""
    x = tensor(logits)
    a = axis1(-1 if axis is None else axis, x.ndim, "log_softmax")
    return x - math_ops.reduce_logsumexp(x, axis=a, keepdims=True)


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Elementwise logistic loss, the stable form max(x, 0) - x*z + log(1 + exp(-|x|))."""
    if labels is None or logits is None:
        raise ValueError("sigmoid_cross_entropy_with_logits needs both labels and logits.")
    x = tensor(logits)
    _require(x, "fc", "Mul")
    z = tensor(labels, x.dtype)
    if tuple(z.shape) != tuple(x.shape):
        raise ValueError(f"logits and labels must have the same shape "
                         f"({tuple(x.shape)} vs {tuple(z.shape)})")
    # TensorFlow's form: selecting with x >= 0 (not relu and abs, whose gradients at 0 are
    # both 0) gives the exact gradient sigmoid(x) - z at x = 0 too
    pos = x >= 0.0
    relu_x = math_ops.where(pos, x, 0.0)
    neg_abs_x = math_ops.where(pos, -x, x)
    return relu_x - x * z + math_ops.log1p(math_ops.exp(neg_abs_x))


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """-sum(labels * log_softmax(logits)) along ``axis``."""
    x = tensor(logits)
    z = tensor(labels, x.dtype)
    if tuple(z.shape) != tuple(x.shape):
        raise ValueError(f"logits and labels must have the same shape "
                         f"({tuple(x.shape)} vs {tuple(z.shape)})")
    a = axis1(axis, x.ndim, "softmax_cross_entropy_with_logits")
    # TensorFlow's sum(z * (logsumexp - x)): a loss of 0 is +0.0 (-sum(z * log_softmax): -0.0)
    lse = math_ops.reduce_logsumexp(x, axis=a, keepdims=True)
    return math_ops.reduce_sum(z * (lse - x), axis=a)


def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """-log_softmax(logits)[..., label] for integer class ``labels`` of shape logits[:-1].

    >>> import tapegrad as tf
    >>> round(float(tf.nn.sparse_softmax_cross_entropy_with_logits(0, [0.0, 0.0])), 6)
    0.693147
    """
    if labels is None or logits is None:
        raise ValueError("sparse_softmax_cross_entropy_with_logits needs labels and logits.")
    x = tensor(logits)
    z = tensor(labels)
    if z.dtype.kind not in "iu":
        raise TypeError(f"labels must be integer class indices, got {z.dtype.name}.")
    if x.ndim == 0 or tuple(z.shape) != tuple(x.shape[:-1]):
        raise ValueError(f"labels shape {tuple(z.shape)} must equal logits shape without its "
                         f"last dimension ({tuple(x.shape)}).")
    depth = x.shape[-1]
    if not z._symbolic:
        zv = z.numpy()
        if zv.size and (zv.min() < 0 or zv.max() >= depth):
            raise _InvalidArgumentError(
                f"Received a label value outside the valid range of [0, {depth}).")
    one_hot = _cast(math_ops.equal(_expand_dims(z, -1), _range(depth, dtype=z.dtype)), x.dtype)
    lse = math_ops.reduce_logsumexp(x, axis=-1, keepdims=True)  # TensorFlow's sign of 0
    return math_ops.reduce_sum(one_hot * (lse - x), axis=-1)


def l2_loss(t, name=None):
    """sum(t ** 2) / 2 (floats only, as TensorFlow's L2Loss)."""
    x = tensor(t)
    _require(x, "f", "L2Loss")
    return math_ops.reduce_sum(x * x) / 2


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """(x - mean) * scale / sqrt(variance + epsilon) + offset, as TensorFlow computes it:
    ``x * inv + (offset - mean * inv)`` with ``inv = scale * rsqrt(variance + epsilon)``
    (``offset`` and ``scale`` may be None).

    >>> import tapegrad as tf
    >>> tf.nn.batch_normalization(tf.constant([1.0, 3.0]), 2.0, 1.0, None, None, 0.0).numpy().tolist()
    [-1.0, 1.0]
    """
    x = tensor(x)
    variance = tensor(variance, x.dtype) if not isinstance(variance, Tensor) else variance
    inv = math_ops.rsqrt(variance + variance_epsilon)
    if scale is not None:
        inv = inv * scale
    shift = offset - mean * inv if offset is not None else -(mean * inv)
    return x * _cast(inv, x.dtype) + _cast(tensor(shift), x.dtype)


def moments(x, axes, shift=None, keepdims=False, name=None):
    """Mean and variance over ``axes``."""
    m = math_ops.reduce_mean(x, axis=axes, keepdims=True)
    v = math_ops.reduce_mean(math_ops.squared_difference(x, m), axis=axes, keepdims=keepdims)
    if not keepdims:
        m = math_ops.reduce_mean(x, axis=axes, keepdims=False)
    return m, v


# The public ops are the functions defined here: `from ... import *` must not re-export helpers
# (NumPy, primitive modules, conversion functions) into tapegrad's namespaces.
__all__ = [_n for _n, _v in list(globals().items())
           if not _n.startswith("_") and callable(_v) and getattr(_v, "__module__", "") == __name__]
__all__ += ["l2_normalize"]  # an alias of tf.math.l2_normalize, as in TensorFlow
__all__ += [_n for _m in (_conv_ops, _pool_ops) for _n in dir(_m)  # convolution and pooling
            if not _n.startswith("_") and getattr(getattr(_m, _n), "__module__", "") == _m.__name__]
