"""``keras.ops.image`` (only there, as in Keras, not in ``keras.ops``): the colour
conversions and Sobel edges of Keras 3's TensorFlow backend, ``rgb_to_grayscale``,
``rgb_to_hsv``, ``hsv_to_rgb`` and ``sobel_edges``, of images ``(H, W, C)`` or
``(N, H, W, C)`` (channels first with ``data_format``). Keras's other image functions
(resize, affine_transform, ...) are not here yet.

>>> from tapegrad.keras import ops
>>> ops.image.rgb_to_hsv([[[1.0, 0.0, 0.0]]]).numpy().tolist()
[[[0.0, 1.0, 1.0]]]
"""
from tapegrad.image import sobel_edges as _sobel_edges
from tapegrad.keras import _tf as tf
from tapegrad.keras import backend
from tapegrad.keras.ops.extra import _t
from tapegrad.keras.ops.numeric import result_type
from tapegrad.keras.symbolic_ops import accepts_keras_tensors

__all__ = ["rgb_to_grayscale", "rgb_to_hsv", "hsv_to_rgb", "sobel_edges"]


def _images(images, data_format, floats=False):
    x = _t(images)
    if x.ndim not in (3, 4):
        raise ValueError("Invalid images rank: expected rank 3 (single image) or rank 4 (batch "
                         f"of images). Received input with shape: images.shape={tuple(x.shape)}")
    if floats and x.dtype.kind != "f":
        raise ValueError(f"Invalid images dtype: expected float dtype. Received: "
                         f"images.dtype={x.dtype.name}")
    first = backend.standardize_data_format(data_format) == "channels_first"
    return x, first


def _to_last(x, first):
    if not first:
        return x
    return tf.transpose(x, [0, 2, 3, 1] if x.ndim == 4 else [1, 2, 0])


def _to_first(x, first):
    if not first:
        return x
    return tf.transpose(x, [0, 3, 1, 2] if x.ndim == 4 else [2, 0, 1])


def rgb_to_grayscale(images, data_format=None):
    """0.2989 R + 0.5870 G + 0.1140 B as one channel, in the images' dtype (one channel
    stays as it is).

    >>> rgb_to_grayscale([[[1.0, 1.0, 1.0]]]).numpy().astype(float).round(4).tolist()
    [[[0.9999]]]
    """
    x, first = _images(images, data_format)
    axis = -3 if first else -1
    if x.shape[axis] not in (1, 3):
        raise ValueError("Invalid channel size: expected 3 (RGB) or 1 (Grayscale). Received "
                         f"input with shape: images.shape={tuple(x.shape)}")
    if x.shape[axis] == 1:
        return tf.identity(x)
    y = tf.cast(x, result_type(x, 1.0))
    weights = tf.constant([0.2989, 0.5870, 0.1140], y.dtype)
    gray = tf.tensordot(y, weights, [[y.ndim + axis], [0]])
    return tf.cast(tf.expand_dims(gray, axis), x.dtype)


def rgb_to_hsv(images, data_format=None):
    """Hue, saturation and value of RGB images in [0, 1] (hue in turns, 0 where the
    colour is grey; saturation 0 where it is black), as ``tf.image.rgb_to_hsv``.

    >>> rgb_to_hsv([[[0.0, 0.5, 1.0]]]).numpy().astype(float).round(4).tolist()
    [[[0.5833, 1.0, 1.0]]]
    """
    x, first = _images(images, data_format, floats=True)
    r, g, b = tf.unstack(_to_last(x, first), axis=-1)
    value = tf.maximum(tf.maximum(r, g), b)
    delta = value - tf.minimum(tf.minimum(r, g), b)
    zero, one = tf.zeros_like(value), tf.ones_like(value)
    saturation = tf.where(value > 0, delta / tf.where(value > 0, value, one), zero)
    safe = tf.where(delta > 0, delta, one)
    hue = tf.where(value == r, (g - b) / safe,
                   tf.where(value == g, 2.0 + (b - r) / safe, 4.0 + (r - g) / safe))
    hue = hue / 6.0
    hue = tf.where(delta > 0, tf.where(hue < 0, hue + 1.0, hue), zero)
    return _to_first(tf.stack([hue, saturation, value], axis=-1), first)


def hsv_to_rgb(images, data_format=None):
    """RGB of HSV images (the inverse of ``rgb_to_hsv``), as ``tf.image.hsv_to_rgb``.

    >>> hsv_to_rgb([[[0.5, 1.0, 1.0]]]).numpy().tolist()
    [[[0.0, 1.0, 1.0]]]
    """
    x, first = _images(images, data_format, floats=True)
    h, s, v = tf.unstack(_to_last(x, first), axis=-1)
    sector = h * 6.0
    zero, one = tf.zeros_like(h), tf.ones_like(h)
    red = tf.clip_by_value(tf.abs(sector - 3.0) - 1.0, zero, one)
    green = tf.clip_by_value(2.0 - tf.abs(sector - 2.0), zero, one)
    blue = tf.clip_by_value(2.0 - tf.abs(sector - 4.0), zero, one)
    rgb = [v * ((1.0 - s) + s * c) for c in (red, green, blue)]
    return _to_first(tf.stack(rgb, axis=-1), first)


def sobel_edges(images, data_format=None):
    """The vertical and horizontal Sobel responses of a batch of images, stacked last:
    ``(N, H, W, C, 2)`` (``(N, C, H, W, 2)`` channels first), as ``tf.image.sobel_edges``."""
    x, first = _images(images, data_format)
    edges = _sobel_edges(_to_last(x, first))
    return tf.transpose(edges, [0, 3, 1, 2, 4]) if first else edges


# each also builds a functional-API node from KerasTensors, as keras.ops' functions do
for _name in __all__:
    globals()[_name] = accepts_keras_tensors(globals()[_name])
