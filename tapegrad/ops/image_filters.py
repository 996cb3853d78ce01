"""``tf.image``'s difference filters: ``total_variation`` (the smoothness term of neural
style transfer), ``image_gradients`` and ``sobel_edges``, composed of slices, so they
differentiate, trace and batch through the primitives.

>>> import tapegrad as tf
>>> img = tf.reshape(tf.range(4.0), [1, 2, 2, 1])   # [[0, 1], [2, 3]]
>>> tf.image.total_variation(img).numpy().tolist()   # |2-0|+|3-1| + |1-0|+|3-2|
[6.0]
"""
from tapegrad.ops import math_ops
from tapegrad.ops._convert import tensor
from tapegrad.ops.array_ops import concat, pad, reshape, stack, zeros_like


def _rank(images, allowed, what):
    x = tensor(images)
    if x.ndim not in allowed:
        raise ValueError("'images' must be either 3 or 4-dimensional." if what == "tv" else
                         f"{what} expects a 4-D tensor [batch_size, h, w, d], "
                         f"not {x.ndim}-D.")
    return x


def total_variation(images, name=None):
    """The sum of the absolute differences of neighbouring pixels, down and across: one
    value per image of a batch (4-D), a scalar for one image (3-D)."""
    x = _rank(images, (3, 4), "tv")
    if x.ndim == 3:
        down, across = x[1:, :, :] - x[:-1, :, :], x[:, 1:, :] - x[:, :-1, :]
        axis = None
    else:
        down, across = x[:, 1:, :, :] - x[:, :-1, :, :], x[:, :, 1:, :] - x[:, :, :-1, :]
        axis = [1, 2, 3]
    return (math_ops.reduce_sum(math_ops.abs(down), axis=axis)
            + math_ops.reduce_sum(math_ops.abs(across), axis=axis))


def image_gradients(image):
    """``(dy, dx)``: each pixel's difference with the one below and the one to its right,
    zero in the last row (dy) and the last column (dx), as TensorFlow pads them."""
    x = _rank(image, (4,), "image_gradients")
    dy = x[:, 1:, :, :] - x[:, :-1, :, :]
    dx = x[:, :, 1:, :] - x[:, :, :-1, :]
    dy = concat([dy, zeros_like(x[:, :1, :, :])], 1)
    dx = concat([dx, zeros_like(x[:, :, :1, :])], 2)
    return dy, dx


# TensorFlow's two kernels (rows: the vertical then the horizontal Sobel filter), applied
# as a cross-correlation to the image padded by reflection
_SOBEL = (((-1, -2, -1), (0, 0, 0), (1, 2, 1)), ((-1, 0, 1), (-2, 0, 2), (-1, 0, 1)))


def sobel_edges(image):
    """The Sobel filters' responses, shape ``image.shape + (2,)``: ``[..., 0]`` the
    vertical derivative (dy), ``[..., 1]`` the horizontal one (dx), of each channel."""
    x = _rank(image, (4,), "sobel_edges")
    if x.dtype.kind not in "fc":
        x = math_ops.cast(x, "float32")
    h, w = x.shape[1], x.shape[2]
    p = pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    outs = []
    for kernel in _SOBEL:
        acc = None
        for a, row in enumerate(kernel):
            for b, k in enumerate(row):
                if k:
                    term = p[:, a:a + h, b:b + w, :] * float(k)
                    acc = term if acc is None else acc + term
        outs.append(acc)
    return reshape(stack(outs, axis=-1), list(x.shape) + [2])
