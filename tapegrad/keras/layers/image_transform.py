"""The projective image transform of Keras's RandomRotation, RandomZoom and
RandomTranslation: TensorFlow's ``ImageProjectiveTransformV3`` rule, composed of tapegrad
ops so that it traces (the random parameters are tensors inside ``tf.function``) and
differentiates with respect to the images.

Each transform is 8 numbers ``[a0, a1, a2, b0, b1, b2, c0, c1]`` that map an *output*
pixel ``(x, y)`` to the *input* point ``((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k)``
with ``k = c0 x + c1 y + 1`` (``k == 0``: the fill value). A point outside the image is
first mapped inside by the fill mode (TensorFlow's rules, in float32, including its
``wrap``, which is exact only for shifts shorter than the image); then it is read by
``nearest`` (rounding half away from zero) or ``bilinear`` interpolation, where a
neighbour outside the image reads ``fill_value``. The arithmetic is float32 in
TensorFlow's order, so the values are TensorFlow's.

>>> import numpy as np
>>> from tapegrad.keras.layers.image_transform import projective_transform
>>> img = np.arange(4.0, dtype="float32").reshape(1, 1, 4, 1)
>>> shift_right = np.array([[1, 0, -1, 0, 1, 0, 0, 0]], "float32")
>>> projective_transform(img, shift_right, fill_mode="constant")[0, 0, :, 0].numpy().tolist()
[0.0, 0.0, 1.0, 2.0]
"""
import math

import numpy as np

from tapegrad.keras import _tf as tf

FILL_MODES = ("reflect", "wrap", "constant", "nearest")
INTERPOLATIONS = ("nearest", "bilinear")

_f32 = np.float32


def _map_reflect(c, n):
    # [abcd] -> [dcba|abcd|dcba]: the edge pixel repeats (np.pad's 'symmetric')
    sz2 = _f32(2 * n)
    t = sz2 * tf.floor(-c / sz2) + c
    low = tf.where(t < -n, t + sz2, -t - _f32(1))
    t = c - sz2 * tf.floor(c / sz2)
    high = tf.where(t >= n, sz2 - t - _f32(1), t)
    return tf.where(c < 0, low, tf.where(c > n - 1, high, c))


def _map_wrap(c, n):
    # TensorFlow's rule: it divides by n - 1 and shifts by multiples of n
    sz, length = _f32(n - 1), _f32(n)
    low = c + length * (tf.floor(-c / sz) + _f32(1))
    high = c - length * tf.floor(c / sz)
    return tf.where(c < 0, low, tf.where(c > n - 1, high, c))


def _map_coordinate(c, n, fill_mode):
    """The input coordinate TensorFlow reads for ``c`` on an axis of length ``n``."""
    if fill_mode == "constant":
        return c
    if n <= 1:
        mapped = tf.where(tf.logical_or(c < 0, c > n - 1), tf.zeros_like(c), c)
    elif fill_mode == "reflect":
        mapped = _map_reflect(c, n)
    elif fill_mode == "wrap":
        mapped = _map_wrap(c, n)
    else:
        mapped = c
    return tf.clip_by_value(mapped, _f32(0), _f32(n - 1))


def _round_half_away(c):
    # std::round; floor(|c| + 0.5) would round 0.49999997 up in float32
    r = tf.floor(c)
    d = c - r
    up = tf.where(c >= 0, d >= _f32(0.5), d > _f32(0.5))
    return r + tf.cast(up, tf.float32)


class _Reader:
    """Reads pixels of ``flat`` ([batch * h * w, channels]) at integral float
    coordinates, ``fill`` where they fall outside the image."""

    def __init__(self, flat, batch, h, w, fill):
        self.flat, self.h, self.w, self.fill = flat, h, w, fill
        self.base = tf.constant(
            (np.arange(batch, dtype=np.int64) * (h * w)).reshape(batch, 1, 1))

    def __call__(self, yi, xi):
        inside = tf.logical_and(tf.logical_and(yi >= 0, yi < self.h),
                                tf.logical_and(xi >= 0, xi < self.w))
        zero = tf.zeros_like(yi)
        y = tf.cast(tf.where(inside, yi, zero), tf.int64)
        x = tf.cast(tf.where(inside, xi, zero), tf.int64)
        values = tf.gather(self.flat, self.base + y * self.w + x)
        return tf.where(tf.expand_dims(inside, -1), values, self.fill)


def projective_transform(images, transforms, interpolation="bilinear",
                         fill_mode="constant", fill_value=0.0,
                         data_format="channels_last"):
    """Transform a batch of images ([batch, h, w, c], or channels first) by one
    transform per image ([batch, 8], or [1, 8] for all), as TensorFlow's
    ``ImageProjectiveTransformV3`` with the output the size of the input.

    Float images are interpolated in float32 (TensorFlow's kernel does that for every
    dtype) and returned in their dtype.

    >>> import numpy as np
    >>> img = np.arange(4.0, dtype="float32").reshape(1, 2, 2, 1)
    >>> flip = np.array([[-1, 0, 1, 0, 1, 0, 0, 0]], "float32")
    >>> projective_transform(img, flip)[0, :, :, 0].numpy().tolist()
    [[1.0, 0.0], [3.0, 2.0]]
    """
    if interpolation not in INTERPOLATIONS:
        raise ValueError("Invalid value for argument `interpolation`. Expected of one "
                         f"{INTERPOLATIONS}. Received: interpolation={interpolation}")
    if fill_mode not in FILL_MODES:
        raise ValueError("Invalid value for argument `fill_mode`. Expected of one "
                         f"{FILL_MODES}. Received: fill_mode={fill_mode}")
    x = tf.convert_to_tensor(images)
    if len(x.shape) != 4:
        raise ValueError("Invalid images rank: expected rank 4 (batch of images). "
                         f"Received input with shape: images.shape={tuple(x.shape)}")
    if data_format == "channels_first":
        x = tf.transpose(x, [0, 2, 3, 1])
    dtype = x.dtype
    if dtype.kind != "f":
        raise TypeError(f"projective_transform: float images expected, got {dtype.name}")
    if dtype != tf.float32:
        x = tf.cast(x, tf.float32)
    batch, h, w, channels = (int(d) for d in x.shape)
    t = tf.cast(tf.convert_to_tensor(transforms), tf.float32)
    if len(t.shape) != 2 or int(t.shape[1]) != 8 or int(t.shape[0]) not in (1, batch):
        raise ValueError("transforms must have shape [batch, 8] or [1, 8]. "
                         f"Received: transforms.shape={tuple(t.shape)}")
    t = tf.broadcast_to(tf.reshape(t, [-1, 8, 1, 1]), [batch, 8, 1, 1])
    a0, a1, a2, b0, b1, b2, c0, c1 = (t[:, i] for i in range(8))
    xs = tf.constant(np.arange(w, dtype=np.float32).reshape(1, 1, w))
    ys = tf.constant(np.arange(h, dtype=np.float32).reshape(1, h, 1))
    k = c0 * xs + c1 * ys + _f32(1)
    in_x = _map_coordinate((a0 * xs + a1 * ys + a2) / k, w, fill_mode)
    in_y = _map_coordinate((b0 * xs + b1 * ys + b2) / k, h, fill_mode)
    fill = tf.cast(fill_value, tf.float32)
    read = _Reader(tf.reshape(x, [batch * h * w, channels]), batch, h, w, fill)
    if interpolation == "nearest":
        out = read(_round_half_away(in_y), _round_half_away(in_x))
    else:
        y0, x0 = tf.floor(in_y), tf.floor(in_x)
        y1, x1 = y0 + _f32(1), x0 + _f32(1)
        wx0, wx1 = tf.expand_dims(x1 - in_x, -1), tf.expand_dims(in_x - x0, -1)
        wy0, wy1 = tf.expand_dims(y1 - in_y, -1), tf.expand_dims(in_y - y0, -1)
        top = wx0 * read(y0, x0) + wx1 * read(y0, x1)
        bottom = wx0 * read(y1, x0) + wx1 * read(y1, x1)
        out = wy0 * top + wy1 * bottom
    out = tf.where(tf.expand_dims(tf.equal(k, _f32(0)), -1), fill, out)
    if out.dtype != dtype:
        out = tf.cast(out, dtype)
    if data_format == "channels_first":
        out = tf.transpose(out, [0, 3, 1, 2])
    return out


def rotation_matrix(angle, height, width):
    """Keras's transforms rotating each image by ``angle`` (degrees, a [batch] float32
    tensor; positive is counter-clockwise) about its centre: output -> input."""
    theta = angle * tf.constant(_f32(math.pi / 180.0))
    cx = _f32(0.5) * (_f32(width) - _f32(1))
    cy = _f32(0.5) * (_f32(height) - _f32(1))
    cos, sin = tf.cos(theta), tf.sin(theta)
    a0, a1, b0, b1 = cos, -sin, sin, cos
    a2 = cx - cx * a0 - cy * a1
    b2 = cy - cx * b0 - cy * b1
    zero = tf.zeros_like(cos)
    return tf.stack([a0, a1, a2, b0, b1, b2, zero, zero], axis=1)


def zoom_matrix(height_zoom, width_zoom, height, width):
    """Keras's zoom transforms: ``zoom`` > 1 shows more of the image (zooms out)."""
    x_offset = (_f32(width) - _f32(1)) / _f32(2) * (_f32(1) - width_zoom)
    y_offset = (_f32(height) - _f32(1)) / _f32(2) * (_f32(1) - height_zoom)
    zero = tf.zeros_like(width_zoom)
    return tf.stack([width_zoom, zero, x_offset, zero, height_zoom, y_offset, zero, zero],
                    axis=1)


def translation_matrix(dx, dy):
    """Transforms moving each image by ``dx`` pixels right and ``dy`` down."""
    zero, one = tf.zeros_like(dx), tf.ones_like(dx)
    return tf.stack([one, zero, -dx, zero, one, -dy, zero, zero], axis=1)
