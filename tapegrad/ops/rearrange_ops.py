"""Pixels moved between space and depth, windows of pixels and channels:
``tf.nn.depth_to_space`` (the sub-pixel upsampling of super-resolution networks),
``tf.nn.space_to_depth``, ``tf.image.extract_patches`` (a Vision Transformer's patches) and
``tf.nn.local_response_normalization`` (AlexNet's normalisation across channels).

Each is composed of reshapes, transposes, slices and pads (the normalisation of squares,
sums and a power), so it differentiates, traces and batches through the primitives; the
shapes and errors are TensorFlow's (NHWC images).

>>> import tapegrad as tf
>>> x = tf.reshape(tf.range(8.0), [1, 1, 2, 4])    # two pixels of four channels
>>> tf.nn.depth_to_space(x, 2)[0, :, :, 0].numpy().tolist()
[[0.0, 1.0, 4.0, 5.0], [2.0, 3.0, 6.0, 7.0]]
>>> tf.nn.space_to_depth(tf.nn.depth_to_space(x, 2), 2).numpy().tolist() == x.numpy().tolist()
True
>>> tf.image.extract_patches(tf.reshape(tf.range(9.0), [1, 3, 3, 1]), sizes=[1, 2, 2, 1],
...                          strides=[1, 1, 1, 1], rates=[1, 1, 1, 1], padding="VALID"
...                          )[0, 0, 0].numpy().tolist()
[0.0, 1.0, 3.0, 4.0]
"""
from tapegrad.core import dtypes as _dtypes
from tapegrad.errors import InvalidArgumentError, OutOfRangeError, UnimplementedError
from tapegrad.ops import math_ops
from tapegrad.ops._convert import tensor
from tapegrad.ops.array_ops import pad, reshape, stack, transpose


def _nhwc(x, op, what="Input rank should be: 4 instead of: "):
    if x.ndim != 4:
        raise InvalidArgumentError(f"{what}{x.ndim} [Op:{op}]")
    return x


def _block(block_size, op):
    block_size = int(block_size)
    if block_size < 2:
        raise InvalidArgumentError(f"Value for attr 'block_size' of {block_size} must be at "
                                   f"least minimum 2 [Op:{op}]")
    return block_size


def _format(data_format):
    if data_format != "NHWC":
        raise InvalidArgumentError(f"Only the NHWC data format is supported here, not "
                                   f"{data_format!r}")


def depth_to_space(input, block_size, data_format="NHWC", name=None):
    """Each pixel's channels as a ``block_size`` x ``block_size`` block of pixels:
    ``[b, h, w, c]`` to ``[b, h * block_size, w * block_size, c / block_size**2]``."""
    _format(data_format)
    x = _nhwc(tensor(input), "DepthToSpace")
    bs = _block(block_size, "DepthToSpace")
    b, h, w, c = x.shape
    if c % (bs * bs):
        raise InvalidArgumentError(f"Input depth dimension {c} should be divisible by: "
                                   f"{bs * bs} [Op:DepthToSpace]")
    depth = c // (bs * bs)
    blocks = transpose(reshape(x, [-1, h, w, bs, bs, depth]), [0, 1, 3, 2, 4, 5])
    return reshape(blocks, [-1, h * bs, w * bs, depth])


def space_to_depth(input, block_size, data_format="NHWC", name=None):
    """Each ``block_size`` x ``block_size`` block of pixels as one pixel of their channels:
    the inverse of ``depth_to_space``."""
    _format(data_format)
    x = _nhwc(tensor(input), "SpaceToDepth", "Input rank should be 4 instead of ")
    bs = _block(block_size, "SpaceToDepth")
    b, h, w, c = x.shape
    if h % bs or w % bs:
        raise InvalidArgumentError(f"Image width {w} and height {h} should be divisible by "
                                   f"block_size: {bs} [Op:SpaceToDepth]")
    blocks = transpose(reshape(x, [-1, h // bs, bs, w // bs, bs, c]), [0, 1, 3, 2, 4, 5])
    return reshape(blocks, [-1, h // bs, w // bs, bs * bs * c])


def _four(values, attr):
    values = [int(v) for v in values]
    if len(values) < 4:
        raise InvalidArgumentError(f"Length for attr '{attr}' of {len(values)} must be at "
                                   f"least minimum 4 [Op:ExtractImagePatches]")
    return values


def _out_size(size, k, stride, padding):
    # TensorFlow's windows: VALID keeps those inside, SAME pads to ceil(size / stride)
    if padding == "VALID":
        out = int((size - k + stride) / stride)  # C's division, toward zero
        if out < 0:
            raise InvalidArgumentError(
                f"Computed output size would be negative: {out} [input_size: {size}, "
                f"effective_filter_size: {k}, stride: {stride}] [Op:ExtractImagePatches]")
        return out, 0
    out = -(-size // stride)
    return out, max((out - 1) * stride + k - size, 0)


def extract_patches(images, sizes, strides, rates, padding, name=None):
    """The ``sizes[1]`` x ``sizes[2]`` windows of ``images`` (``[b, h, w, d]``) every
    ``strides`` pixels, their pixels ``rates`` apart, each flattened into the depth of one
    output pixel (row, then column, then channel): ``[b, rows, cols, k_rows*k_cols*d]``.
    ``padding`` "SAME" pads with zeros as TensorFlow does (the extra row or column after)."""
    x = tensor(images)
    if x.ndim != 4:
        raise InvalidArgumentError(f"input must be 4-dimensional{list(x.shape)} "
                                   "[Op:ExtractImagePatches]")
    ks, st, rt = _four(sizes, "ksizes"), _four(strides, "strides"), _four(rates, "rates")
    if padding not in ("SAME", "VALID"):
        raise InvalidArgumentError(f"Value for attr 'padding' of \"{padding}\" is not in the "
                                   "list of allowed values: \"SAME\", \"VALID\"")
    if ks[0] != 1 or ks[3] != 1 or st[0] != 1 or st[3] != 1 or rt[0] != 1 or rt[3] != 1:
        raise UnimplementedError("Only support ksizes across space. [Op:ExtractImagePatches]")
    if min(ks + st + rt) < 1:
        raise OutOfRangeError("ksizes is out of range. [Op:ExtractImagePatches]")
    _, h, w, d = x.shape
    eff = [ks[i] + (ks[i] - 1) * (rt[i] - 1) for i in (1, 2)]
    (rows, pad_r), (cols, pad_c) = (_out_size(h, eff[0], st[1], padding),
                                    _out_size(w, eff[1], st[2], padding))
    if pad_r or pad_c:
        x = pad(x, [[0, 0], [pad_r // 2, pad_r - pad_r // 2],
                    [pad_c // 2, pad_c - pad_c // 2], [0, 0]])
    if rows == 0 or cols == 0:
        return reshape(x[:, :0, :0, :], [x.shape[0], rows, cols, ks[1] * ks[2] * d])
    windows = [x[:, i * rt[1]:i * rt[1] + (rows - 1) * st[1] + 1:st[1],
                 j * rt[2]:j * rt[2] + (cols - 1) * st[2] + 1:st[2], :]
               for i in range(ks[1]) for j in range(ks[2])]
    return reshape(stack(windows, axis=3), [-1, rows, cols, ks[1] * ks[2] * d])


def local_response_normalization(input, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5,
                                 name=None):
    """``input / (bias + alpha * sqr_sum) ** beta``, ``sqr_sum`` the sum of the squares of
    the channels within ``depth_radius`` of each channel (TensorFlow's LRN, NHWC)."""
    x = tensor(input)
    if x.dtype not in (_dtypes.float32, _dtypes.float16):
        raise InvalidArgumentError(f"Value for attr 'T' of {x.dtype.name} is not in the list "
                                   "of allowed values: half, bfloat16, float [Op:LRN]")
    if x.ndim != 4:
        raise InvalidArgumentError("in must be 4-dimensional [Op:LRN]")
    return _lrn(x, depth_radius, bias, alpha, beta)


def _lrn(x, depth_radius, bias, alpha, beta):
    # (any floating dtype: the derivative checks run it in float64, which TF's LRN refuses)
    r, depth = int(depth_radius), x.shape[3]
    squares = pad(math_ops.square(x), [[0, 0], [0, 0], [0, 0], [r, r]])
    sqr_sum = squares[..., 0:depth]
    for k in range(1, 2 * r + 1):
        sqr_sum = sqr_sum + squares[..., k:k + depth]
    scale = tensor(bias, x.dtype) + tensor(alpha, x.dtype) * sqr_sum
    return x / math_ops.pow(scale, tensor(beta, x.dtype))


lrn = local_response_normalization
