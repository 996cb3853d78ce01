"""``tf.image``'s geometry and intensity functions of augmentation pipelines and
super-resolution metrics: ``rot90``, ``transpose``, ``crop_to_bounding_box``,
``pad_to_bounding_box``, ``resize_with_crop_or_pad``, ``adjust_brightness``,
``adjust_gamma`` and ``psnr``.

Each is composed of reverses, transposes, slices, pads and elementwise operations, so it
differentiates, traces and batches through the primitives. Images are ``[h, w, c]`` or
``[batch, h, w, c]``; bad sizes and offsets raise TensorFlow's ``ValueError`` s.

>>> import tapegrad as tf
>>> img = tf.reshape(tf.range(6.0), [2, 3, 1])          # [[0, 1, 2], [3, 4, 5]]
>>> tf.image.rot90(img)[..., 0].numpy().tolist()          # a quarter turn anticlockwise
[[2.0, 5.0], [1.0, 4.0], [0.0, 3.0]]
>>> tf.image.resize_with_crop_or_pad(img, 4, 2)[..., 0].numpy().tolist()
[[0.0, 0.0], [0.0, 1.0], [3.0, 4.0], [0.0, 0.0]]
>>> round(float(tf.image.psnr(img / 5.0, img / 5.0 + 0.1, max_val=1.0)), 3)
20.0
"""
import numpy as np

from tapegrad.core import dtypes as _dt
from tapegrad.core.tensor import Tensor
from tapegrad.ops import math_ops
from tapegrad.ops._convert import cast, tensor
from tapegrad.ops.array_ops import pad, reverse, transpose as _transpose
from tapegrad.ops.image_ops import convert_image_dtype


def _image(image, allowed=(3, 4), what="must be at least three-dimensional."):
    x = tensor(image)
    if x.ndim < 3 or x.ndim not in allowed:
        raise ValueError(f"'image' (shape {tuple(x.shape)}) {what}")
    return x


def _axes(x):
    """The height and width axes."""
    return (x.ndim - 3, x.ndim - 2)


def transpose(image, name=None):
    """Swaps the height and width axes of an image or a batch of images."""
    x = _image(image)
    perm = list(range(x.ndim))
    h, w = _axes(x)
    perm[h], perm[w] = w, h
    return _transpose(x, perm)


def rot90(image, k=1, name=None):
    """The image turned anticlockwise by ``k`` quarter turns."""
    x = _image(image)
    if isinstance(k, Tensor) and np.dtype(k.dtype).kind not in "iu":
        raise ValueError(f"k: Tensor conversion requested dtype int32 for Tensor with dtype "
                         f"{k.dtype.name}: {k!r}")
    k = int(k) % 4
    h, w = _axes(x)
    if k == 1:
        return transpose(reverse(x, [w]))
    if k == 2:
        return reverse(x, [h, w])
    if k == 3:
        return reverse(transpose(x), [w])
    return x


def _size(x):
    return x.shape[-3], x.shape[-2]


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The ``target_height`` x ``target_width`` window whose top left corner is at
    ``(offset_height, offset_width)``."""
    x = _image(image, what="must have either 3 or 4 dimensions.")
    h, w = _size(x)
    for name, v in (("offset_height", offset_height), ("offset_width", offset_width)):
        if v < 0:
            raise ValueError(f"{name} must be >= 0.")
    for name, v in (("target_height", target_height), ("target_width", target_width)):
        if v <= 0:
            raise ValueError(f"{name} must be > 0.")
    if h < target_height + offset_height:
        raise ValueError("height must be >= target + offset.")
    if w < target_width + offset_width:
        raise ValueError("width must be >= target + offset.")
    return x[..., offset_height:offset_height + target_height,
             offset_width:offset_width + target_width, :]


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The image at ``(offset_height, offset_width)`` in a ``target_height`` x
    ``target_width`` image of zeros."""
    x = _image(image, what="must have either 3 or 4 dimensions.")
    h, w = _size(x)
    after_h, after_w = target_height - offset_height - h, target_width - offset_width - w
    for name, v in (("offset_height", offset_height), ("offset_width", offset_width)):
        if v < 0:
            raise ValueError(f"{name} must be >= 0")
    if after_w < 0:  # (TensorFlow checks the width first)
        raise ValueError("width must be <= target - offset")
    if after_h < 0:
        raise ValueError("height must be <= target - offset")
    paddings = [[0, 0]] * (x.ndim - 3) + [[offset_height, after_h], [offset_width, after_w],
                                          [0, 0]]
    return pad(x, paddings)


def resize_with_crop_or_pad(image, target_height, target_width):
    """The image cropped about its centre, or padded evenly with zeros, to
    ``target_height`` x ``target_width`` (TensorFlow's offsets: the extra row or column of
    an odd difference goes after)."""
    x = _image(image, what="must have either 3 or 4 dimensions.")
    for name, v in (("target_height", target_height), ("target_width", target_width)):
        if v <= 0:
            raise ValueError(f"{name} must be > 0.")
    h, w = _size(x)
    crop_h, crop_w = max((h - target_height) // 2, 0), max((w - target_width) // 2, 0)
    pad_h, pad_w = max((target_height - h) // 2, 0), max((target_width - w) // 2, 0)
    x = crop_to_bounding_box(x, crop_h, crop_w, min(target_height, h), min(target_width, w))
    return pad_to_bounding_box(x, pad_h, pad_w, target_height, target_width)


def _as_float(x):
    # TensorFlow adjusts float16/float32/float64 images as they are, others in float32
    return x if x.dtype in (_dt.float16, _dt.float32, _dt.float64) else \
        convert_image_dtype(x, _dt.float32)


def adjust_brightness(image, delta):
    """``image + delta`` (integer images in float32 on [0, 1], converted back saturated)."""
    x = tensor(image)
    flt = _as_float(x)
    out = flt + cast(tensor(delta), flt.dtype)
    return out if out.dtype == x.dtype else convert_image_dtype(out, x.dtype, saturate=True)


def adjust_gamma(image, gamma=1, gain=1):
    """``gain * image ** gamma`` (integer images in float32 on [0, 1], converted back
    saturated)."""
    x = tensor(image)
    if not hasattr(gamma, "dtype") and gamma < 0:
        raise ValueError("Gamma should be a non-negative real number.")
    flt = _as_float(x)
    out = cast(tensor(gain), flt.dtype) * math_ops.pow(flt, cast(tensor(gamma), flt.dtype))
    return out if out.dtype == x.dtype else convert_image_dtype(out, x.dtype, saturate=True)


def psnr(a, b, max_val, name=None):
    """The peak signal-to-noise ratio of ``a`` against ``b`` in dB, one value per image:
    ``20 log10(max_val) - 10 log10(mse)``, computed in float32 (integer images and
    ``max_val`` converted as TensorFlow converts them)."""
    a, b = tensor(a), tensor(b)
    max_val = cast(tensor(max_val), a.dtype)
    max_val = convert_image_dtype(max_val, _dt.float32)
    a, b = convert_image_dtype(a, _dt.float32), convert_image_dtype(b, _dt.float32)
    mse = math_ops.reduce_mean(math_ops.squared_difference(a, b), [-3, -2, -1])
    ten = tensor(np.float32(10.0))
    return (20 * math_ops.log(max_val) / math_ops.log(ten)
            - np.float32(10 / np.log(10)) * math_ops.log(mse))
