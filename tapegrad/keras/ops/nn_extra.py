"""``keras.ops``' ``depth_to_space``, ``space_to_depth`` and ``rms_normalization`` (Keras 3's
TensorFlow backend), as reshapes and transposes so that they differentiate and trace.

>>> from tapegrad.keras import ops
>>> tuple(ops.depth_to_space(ops.ones((1, 2, 2, 8)), 2).shape)
(1, 4, 4, 2)
"""
from tapegrad.errors import InvalidArgumentError
from tapegrad.keras import _tf as tf
from tapegrad.keras import backend
from tapegrad.keras.ops.extra import _t

__all__ = ["depth_to_space", "space_to_depth", "rms_normalization"]


def _nhwc(x, block_size, data_format, op):
    if block_size < 2:
        raise ValueError(f"`block_size` must be at least 2. Received: block_size={block_size}")
    x = _t(x)
    if x.ndim != 4:
        raise InvalidArgumentError(f"input rank should be 4 instead of {x.ndim} [Op:{op}]")
    # NCHW goes through NHWC, as Keras does (TensorFlow has no NCHW kernel on CPUs)
    return tf.transpose(x, [0, 2, 3, 1]) if data_format == "channels_first" else x


def _back(x, data_format):
    return tf.transpose(x, [0, 3, 1, 2]) if data_format == "channels_first" else x


def depth_to_space(x, block_size, data_format="channels_last"):
    """Moves ``block_size ** 2`` channel groups into ``block_size`` x ``block_size`` pixel
    blocks (TensorFlow's DCR order: the channel index is (row, column, channel)).

    >>> depth_to_space([[[[1.0, 2.0, 3.0, 4.0]]]], 2).numpy().reshape(-1).tolist()
    [1.0, 2.0, 3.0, 4.0]
    """
    x = _nhwc(x, block_size, data_format, "DepthToSpace")
    n, h, w, c = x.shape
    if c % (block_size * block_size):
        raise InvalidArgumentError(f"Input depth dimension {c} should be divisible by: "
                                   f"{block_size * block_size} [Op:DepthToSpace]")
    c2 = c // (block_size * block_size)
    y = tf.reshape(x, [n, h, w, block_size, block_size, c2])
    y = tf.reshape(tf.transpose(y, [0, 1, 3, 2, 4, 5]), [n, h * block_size, w * block_size, c2])
    return _back(y, data_format)


def space_to_depth(x, block_size, data_format="channels_last"):
    """The inverse of ``depth_to_space``: each pixel block becomes channels.

    >>> space_to_depth([[[[1.0], [2.0]], [[3.0], [4.0]]]], 2).numpy().reshape(-1).tolist()
    [1.0, 2.0, 3.0, 4.0]
    """
    x = _nhwc(x, block_size, data_format, "SpaceToDepth")
    n, h, w, c = x.shape
    if h % block_size or w % block_size:
        raise InvalidArgumentError(f"Image width {w} and height {h} should be divisible by "
                                   f"block_size: {block_size} [Op:SpaceToDepth]")
    y = tf.reshape(x, [n, h // block_size, block_size, w // block_size, block_size, c])
    y = tf.reshape(tf.transpose(y, [0, 1, 3, 2, 4, 5]),
                   [n, h // block_size, w // block_size, block_size * block_size * c])
    return _back(y, data_format)


def rms_normalization(x, scale=None, axis=-1, epsilon=None):
    """x / sqrt(mean(x ** 2 over ``axis``) + epsilon), times ``scale``; computes in at least
    float32 and returns ``x``'s dtype.

    >>> [round(float(v), 4) for v in rms_normalization([3.0, 4.0], epsilon=0.0)]
    [0.8485, 1.1314]
    """
    epsilon = backend.epsilon() if epsilon is None else epsilon
    x = _t(x)
    original = x.dtype
    # Keras's result_type(x.dtype, "float32"): float64 stays, all else is float32
    x = tf.cast(x, "float64" if x.dtype.name == "float64" else "float32")
    if x.ndim == 0:
        x = tf.expand_dims(x, 0)
    axis = sorted(axis) if isinstance(axis, (tuple, list)) else axis
    ms = tf.reduce_mean(tf.square(x), axis=axis, keepdims=True)
    out = x * tf.math.rsqrt(ms + tf.constant(epsilon, x.dtype))
    if scale is not None:
        out = out * tf.cast(_t(scale), x.dtype)
    return tf.cast(out, original)
