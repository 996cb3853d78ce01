"""``tf.image``: resize (bilinear, nearest), adjust_contrast, per_image_standardization,
convert_image_dtype, flips, rgb_to_grayscale, central_crop.

``resize`` follows TensorFlow 2: half-pixel centres, no corner alignment. It is composed of
``gather`` along the two image axes and the lerp TensorFlow computes (in its order, with
its float32 weights), so it differentiates, traces and batches through the primitives, and
a NaN or inf reaches only the outputs that read it, as in TensorFlow.
"""
import numpy as np

from tapegrad.core import dtypes as _dt
from tapegrad.core.tensor import Tensor
from tapegrad.errors import InvalidArgumentError, UnimplementedError
from tapegrad.ops import math_ops
from tapegrad.ops._convert import cast, tensor
from tapegrad.ops.array_ops import concat, expand_dims, gather, reverse, squeeze

_wrap = Tensor._wrap


class ResizeMethod:
    """The method names ``tf.image.resize`` takes (tapegrad has BILINEAR and
    NEAREST_NEIGHBOR)."""

    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


_UNIMPLEMENTED = {"bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic"}


def _batched(images, what):
    x = tensor(images)
    if x.ndim not in (3, 4):
        raise ValueError(f"'{what}' must have either 3 or 4 dimensions.")
    return (x, False) if x.ndim == 4 else (expand_dims(x, 0), True)


def _size(size):
    s = size._value if isinstance(size, Tensor) else np.asarray(size)
    if s.shape != (2,) or s.dtype.kind not in "iu":
        raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
    h, w = int(s[0]), int(s[1])
    if h <= 0 or w <= 0:
        raise InvalidArgumentError(f"output dimensions must be positive, got {[h, w]}")
    return h, w


def _bilinear_weights(n_in, n_out):
    """TensorFlow's half-pixel source coordinate per output index, in float32."""
    scale = np.float32(n_in) / np.float32(n_out)
    src = (np.arange(n_out, dtype=np.float32) + np.float32(0.5)) * scale - np.float32(0.5)
    floor = np.floor(src)
    lo = np.maximum(floor, 0).astype(np.int64)
    hi = np.minimum(np.ceil(src), n_in - 1).astype(np.int64)
    return lo, np.maximum(hi, 0), (src - floor).astype(np.float32)


def _nearest_index(n_in, n_out):
    scale = np.float32(n_in) / np.float32(n_out)
    src = np.floor((np.arange(n_out, dtype=np.float32) + np.float32(0.5)) * scale)
    return np.clip(src.astype(np.int64), 0, n_in - 1)


def resize(images, size, method=ResizeMethod.BILINEAR, preserve_aspect_ratio=False,
           antialias=False, name=None):
    """Resize ``images`` ([batch,] height, width, channels) to ``size`` = [height, width].

    The result is float32 for bilinear (float64 stays float64, where TensorFlow gives
    float32); ``nearest`` keeps the dtype.

    >>> import tapegrad as tf
    >>> img = tf.reshape(tf.range(4.0), [2, 2, 1])
    >>> tf.image.resize(img, [4, 4])[..., 0].numpy()[0].tolist()
    [0.0, 0.25, 0.75, 1.0]
    """
    method = str(method).lower()
    if method in _UNIMPLEMENTED:
        raise UnimplementedError(f"tf.image.resize: method '{method}' is not implemented in "
                                 "tapegrad (bilinear and nearest are).")
    if method not in ("bilinear", "nearest"):
        raise ValueError(f"Resize method is not implemented: {method}")
    if antialias:
        raise UnimplementedError("tf.image.resize: antialias=True is not implemented.")
    x, unbatched = _batched(images, "images")
    h_in, w_in = int(x.shape[1]), int(x.shape[2])
    h, w = _size(size)
    if preserve_aspect_ratio:
        f = min(np.float32(h) / np.float32(h_in), np.float32(w) / np.float32(w_in))
        h = int(np.round(np.float32(f) * np.float32(h_in)))
        w = int(np.round(np.float32(f) * np.float32(w_in)))
    if method == "nearest":
        out = gather(gather(x, _nearest_index(h_in, h), axis=1), _nearest_index(w_in, w),
                     axis=2)
    else:
        if x.dtype != _dt.float64 and x.dtype != _dt.float32:
            x = cast(x, _dt.float32)
        dt = x.dtype
        y_lo, y_hi, y_lerp = _bilinear_weights(h_in, h)
        x_lo, x_hi, x_lerp = _bilinear_weights(w_in, w)
        xl = _wrap(x_lerp.astype(dt)[:, None])
        yl = _wrap(y_lerp.astype(dt)[:, None, None])
        top_rows, bottom_rows = gather(x, y_lo, axis=1), gather(x, y_hi, axis=1)
        tl, tr = gather(top_rows, x_lo, axis=2), gather(top_rows, x_hi, axis=2)
        bl, br = gather(bottom_rows, x_lo, axis=2), gather(bottom_rows, x_hi, axis=2)
        top = tl + (tr - tl) * xl
        bottom = bl + (br - bl) * xl
        out = top + (bottom - top) * yl
    return squeeze(out, [0]) if unbatched else out


def _convert_to_float(x):
    """``tf.image.convert_image_dtype`` to float32: integers scale to [0, 1]."""
    if x.dtype.kind == "f":
        return x, None
    if x.dtype.kind not in "iu":
        raise TypeError(f"image ops: unsupported image dtype {x.dtype.name}")
    top = np.iinfo(x.dtype).max
    return cast(x, _dt.float32) * np.float32(1.0 / top), x.dtype


def _convert_back(x, dtype):
    """convert_image_dtype from float back to ``dtype``: scale by max + 0.5, saturate."""
    if dtype is None:
        return x
    info = np.iinfo(dtype)
    scaled = math_ops.clip_by_value(x * np.float32(info.max + 0.5), float(info.min), float(info.max))
    return cast(scaled, dtype)


def adjust_contrast(images, contrast_factor):
    """``(x - mean) * contrast_factor + mean``, the mean taken per channel over each image.

    >>> import tapegrad as tf
    >>> tf.image.adjust_contrast(tf.constant([[[1.0], [3.0]]]), 2.0).numpy().ravel().tolist()
    [0.0, 4.0]
    """
    x = tensor(images)
    if x.ndim < 3:
        raise ValueError(f"'images' must be at least three-dimensional, got shape "
                         f"{tuple(x.shape)}.")
    xf, orig = _convert_to_float(x)
    mean = math_ops.reduce_mean(xf, axis=[-3, -2], keepdims=True)
    out = (xf - mean) * math_ops.cast(tensor(contrast_factor), xf.dtype) + mean
    return _convert_back(out, orig)


def per_image_standardization(image):
    """Scale each image to mean 0 and variance 1: ``(x - mean) / max(std, 1/sqrt(N))``
    over its last three axes (N of them elements). Integer images become float32.

    >>> import tapegrad as tf
    >>> y = tf.image.per_image_standardization(tf.constant([[[1.0], [3.0]]]))
    >>> y.numpy().ravel().tolist()
    [-1.0, 1.0]
    """
    x = tensor(image)
    if x.ndim < 3:
        raise ValueError(f"'image' must be at least three-dimensional, got shape "
                         f"{tuple(x.shape)}.")
    if x.dtype.kind != "f":
        x = cast(x, _dt.float32)
    n = int(np.prod(x.shape[-3:]))
    mean = math_ops.reduce_mean(x, axis=[-3, -2, -1], keepdims=True)
    std = math_ops.reduce_std(x, axis=[-3, -2, -1], keepdims=True)
    floor = _wrap(np.asarray(1, x.dtype) / np.sqrt(np.asarray(n, x.dtype)))
    return math_ops.divide_no_nan(x - mean, math_ops.maximum(std, floor))


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """Convert between float images in [0, 1] and integer images in [0, MAX], as
    TensorFlow: int to float scales by 1/MAX; float to int scales by MAX + 0.5 and casts
    (out-of-range values always saturate here). Integer to integer is not implemented.

    >>> import tapegrad as tf
    >>> tf.image.convert_image_dtype(tf.constant([0, 255], tf.uint8), tf.float32).numpy().tolist()
    [0.0, 1.0]
    """
    x, dt = tensor(image), _dt.as_dtype(dtype)
    if x.dtype == dt:
        return x
    if x.dtype.kind == "f" and dt.kind == "f":
        return cast(x, dt)
    if x.dtype.kind in "iu" and dt.kind in "iu":
        raise UnimplementedError("convert_image_dtype between integer dtypes is not "
                                 "implemented.")
    if x.dtype.kind in "iu":
        return cast(x, dt) * (1.0 / np.iinfo(x.dtype).max)
    return _convert_back(x, dt)


def flip_left_right(image):
    """Reverse the width axis of an image (or each image of a batch)."""
    _batched(image, "image")
    return reverse(tensor(image), [-2])


def flip_up_down(image):
    """Reverse the height axis of an image (or each image of a batch)."""
    _batched(image, "image")
    return reverse(tensor(image), [-3])


def _random_flip(image, seed, axis):
    from tapegrad.ops.random_ops import uniform
    x = tensor(image)
    _batched(x, "image")
    n = x.shape[0] if x.ndim == 4 else 1
    flip = math_ops.less(uniform([n] + [1] * 3, seed=seed), 0.5)
    flipped = reverse(x, [axis])
    out = math_ops.where(flip, flipped if x.ndim == 4 else expand_dims(flipped, 0),
                  x if x.ndim == 4 else expand_dims(x, 0))
    return out if x.ndim == 4 else squeeze(out, [0])


def random_flip_left_right(image, seed=None):
    """Flip each image left-right with probability 1/2 (reproducible after
    ``tf.random.set_seed``; not TensorFlow's draws)."""
    return _random_flip(image, seed, -2)


def random_flip_up_down(image, seed=None):
    """Flip each image up-down with probability 1/2."""
    return _random_flip(image, seed, -3)


def rgb_to_grayscale(images, name=None):
    """Luma with TensorFlow's weights (0.2989, 0.5870, 0.1140); keeps the dtype and a last
    axis of size 1."""
    x = tensor(images)
    if x.ndim < 1 or x.shape[-1] != 3:
        raise ValueError(f"Dimension must be 3 but is {x.shape[-1] if x.ndim else 0} for "
                         "rgb_to_grayscale (the last axis holds R, G, B).")
    xf, orig = _convert_to_float(x)
    w = _wrap(np.asarray([0.2989, 0.5870, 0.1140], xf.dtype))
    gray = expand_dims(math_ops.reduce_sum(xf * w, axis=-1), -1)
    return _convert_back(gray, orig)


def grayscale_to_rgb(images, name=None):
    """Repeat the single channel three times."""
    x = tensor(images)
    if x.ndim < 1 or x.shape[-1] != 1:
        raise ValueError("grayscale_to_rgb: the last axis must have size 1.")
    return concat([x, x, x], axis=-1)


def central_crop(image, central_fraction):
    """The central ``central_fraction`` of each image's height and width (TensorFlow's
    rounding of the border)."""
    x, unbatched = _batched(image, "image")
    f = float(central_fraction)
    if not 0.0 < f <= 1.0:
        raise ValueError("central_fraction must be within (0, 1]")
    if f == 1.0:
        return tensor(image)
    h, w = int(x.shape[1]), int(x.shape[2])
    top, left = int((h - h * f) / 2), int((w - w * f) / 2)
    out = x[:, top:h - top, left:w - left, :]
    return squeeze(out, [0]) if unbatched else out
