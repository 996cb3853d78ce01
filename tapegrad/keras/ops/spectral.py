"""More of ``keras.ops`` with Keras 3's values and dtypes (TensorFlow backend): the FFTs on
``(real, imag)`` pairs, ``qr`` and ``svd``, ``erfinv``, ``i0``, ``in_top_k``, ``fmax`` /
``fmin`` / ``fabs`` / ``ldexp``, the NaN-aware ``nanargmax`` / ``nanargmin`` / ``nancumsum`` /
``nancumprod``, ``dsplit``, the segment minimum and product, ``cdist`` and
``extract_sequences``.

>>> from tapegrad.keras import ops
>>> re, im = ops.fft(([1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]))
>>> re.numpy().tolist(), int(ops.nanargmax([1.0, float("nan"), 3.0]))
([1.0, 1.0, 1.0, 1.0], 2)
"""
from tapegrad import linalg as _linalg
from tapegrad.keras import _tf as tf
from tapegrad.keras import backend
from tapegrad.keras.ops.arrays import split
from tapegrad.keras.ops.extra import _float, _t
from tapegrad.keras.ops.more_numeric import cumprod, nan_to_num
from tapegrad.keras.ops.numeric import argmax, argmin, cast, cumsum, result_type
from tapegrad.ops import fft_ops as _fft_ops
from tapegrad.ops import signal_ops as _signal
from tapegrad.ops.elementwise_ops import complex as _complex

__all__ = ["fft", "fft2", "ifft2", "rfft", "irfft", "qr", "svd", "erfinv", "i0", "in_top_k",
           "fabs", "fmax", "fmin", "ldexp", "nanargmax", "nanargmin", "nancumsum",
           "nancumprod", "dsplit", "segment_min", "segment_prod", "cdist",
           "extract_sequences", "nonzero"]


# ---- FFTs: Keras passes complex numbers as (real, imag) pairs of float tensors ----------
def _complex_pair(x):
    # Keras's own checks, with its error class (ValueError for each)
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        raise ValueError("Input `x` should be a tuple of two tensors - real and imaginary."
                         f"Received: x={x}")
    real, imag = _t(x[0]), _t(x[1])
    if real.shape != imag.shape:
        raise ValueError("Input `x` should be a tuple of two tensors - real and imaginary. "
                         "Both the real and imaginary parts should have the same shape. "
                         f"Received: x[0].shape = {real.shape}, x[1].shape = {imag.shape}")
    if real.dtype.kind != "f" or imag.dtype.kind != "f":
        raise ValueError(f"At least one tensor in input `x` is not of type float.Received: x={x}.")
    return _complex(real, imag)


def _pair(z):
    return tf.math.real(z), tf.math.imag(z)


def fft(x):
    """The FFT along the last axis of ``x = (real, imag)``; returns ``(real, imag)``.

    >>> [v.numpy().tolist() for v in fft(([1.0, 2.0], [0.0, 0.0]))]
    [[3.0, -1.0], [0.0, 0.0]]
    """
    return _pair(_fft_ops.fft(_complex_pair(x)))


def fft2(x):
    """The 2-D FFT over the last two axes of ``x = (real, imag)``; returns ``(real, imag)``.

    >>> fft2(([[1.0, 1.0], [1.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]]))[0].numpy().tolist()
    [[4.0, 0.0], [0.0, 0.0]]
    """
    return _pair(_fft_ops.fft2d(_complex_pair(x)))


def ifft2(x):
    """The inverse 2-D FFT of ``x = (real, imag)`` (as Keras: the conjugate's FFT, scaled).

    >>> ifft2(([[4.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]))[0].numpy().tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    real, imag = _t(x[0]), _t(x[1])
    re, im = fft2((real, -imag))
    hw = tf.cast(real.shape[-2] * real.shape[-1], real.dtype)
    return re / hw, -im / hw


def rfft(x, fft_length=None):
    """The FFT of a real signal along its last axis: the ``fft_length // 2 + 1`` first terms.

    >>> [v.numpy().tolist() for v in rfft([1.0, 2.0, 3.0, 4.0])]
    [[10.0, -2.0, -2.0], [0.0, 2.0, 0.0]]
    """
    return _pair(_fft_ops.rfft(_t(x), None if fft_length is None else [fft_length]))


def irfft(x, fft_length=None):
    """The real signal whose ``rfft`` is ``x = (real, imag)``.

    >>> irfft(([10.0, -2.0, -2.0], [0.0, 2.0, 0.0])).numpy().tolist()
    [1.0, 2.0, 3.0, 4.0]
    """
    return _fft_ops.irfft(_complex_pair(x), None if fft_length is None else [fft_length])


# ---- decompositions ----------------------------------------------------------------------
def qr(x, mode="reduced"):
    """``(q, r)`` with ``x = q @ r``; ``mode`` is ``"reduced"`` or ``"complete"``.

    >>> [tuple(v.shape) for v in qr([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])]
    [(3, 2), (2, 2)]
    """
    if mode not in {"reduced", "complete"}:
        raise ValueError("`mode` argument value not supported. Expected one of "
                         f"{{'reduced', 'complete'}}. Received: mode={mode}")
    return tuple(_linalg.qr(_t(x), full_matrices=mode == "complete"))


def svd(x, full_matrices=True, compute_uv=True):
    """``(u, s, vh)`` with ``x = u @ diag(s) @ vh`` (NumPy's order), or ``s`` alone.

    >>> svd([[3.0, 0.0], [0.0, 4.0]], compute_uv=False).numpy().tolist()
    [4.0, 3.0]
    """
    x = _t(x)
    if not compute_uv:
        return _linalg.svd(x, full_matrices=full_matrices, compute_uv=False)
    s, u, v = _linalg.svd(x, full_matrices=full_matrices, compute_uv=True)
    return u, s, _linalg.adjoint(v)


# ---- elementwise -------------------------------------------------------------------------
def erfinv(x):
    """The inverse error function (``float16`` computes in float32); integers are refused
    with InvalidArgumentError as Keras's TensorFlow backend does.

    >>> round(float(erfinv(0.5)), 6)
    0.476936
    """
    x = _t(x)
    if x.dtype.name in ("float16", "bfloat16"):
        return tf.cast(tf.math.erfinv(tf.cast(x, "float32")), x.dtype)
    return tf.math.erfinv(x)


def i0(x):
    """The modified Bessel function of order 0; ``int64`` computes in float64.

    >>> float(i0(0.0))
    1.0
    """
    x = _t(x)
    name = x.dtype.name
    dtype = ("float64" if name in ("int64", "float64")
             else name if name in ("float16", "bfloat16") else backend.floatx())
    return tf.math.bessel_i0(tf.cast(x, dtype))


def fabs(x):
    """The absolute value as a float (integers and booleans in ``floatx``).

    >>> fabs([-2, 3]).numpy().tolist()
    [2.0, 3.0]
    """
    x = _t(x)
    if x.dtype.kind == "c":
        raise TypeError("ops.fabs does not support complex inputs. "
                        f"Received: input.dtype={x.dtype}")
    return tf.abs(_float(x))


def _fpair(x1, x2):
    d = result_type(x1, x2)
    return cast(x1, d), cast(x2, d)


def fmax(x1, x2):
    """The elementwise maximum that ignores a NaN when the other value is not one.

    >>> fmax([1.0, float("nan")], [float("nan"), 2.0]).numpy().tolist()
    [1.0, 2.0]
    """
    return _fpick(x1, x2, tf.maximum)


def fmin(x1, x2):
    """The elementwise minimum that ignores a NaN when the other value is not one.

    >>> fmin([1.0, float("nan")], [float("nan"), 2.0]).numpy().tolist()
    [1.0, 2.0]
    """
    return _fpick(x1, x2, tf.minimum)


def _fpick(x1, x2, pick):
    a, b = _fpair(x1, x2)
    res = pick(a, b)
    if a.dtype.kind != "f":
        return res
    # zeros_like(res) broadcasts each side to the result's shape without carrying a NaN in
    na, nb, z = tf.math.is_nan(a), tf.math.is_nan(b), tf.zeros_like(res)
    res = tf.where(tf.logical_and(na, tf.logical_not(nb)), b + z, res)
    return tf.where(tf.logical_and(nb, tf.logical_not(na)), a + z, res)


def ldexp(x1, x2):
    """x1 * 2 ** x2, with an integer exponent (Keras raises TypeError otherwise).

    >>> ldexp([1.0, 3.0], [2, -1]).numpy().tolist()
    [4.0, 1.5]
    """
    x1, x2 = _t(x1), _t(x2)
    dtype = result_type(x1, x2, 1.0)
    if x2.dtype.kind not in "iu":
        raise TypeError(f"ldexp exponent must be an integer type. Received: x2 dtype={x2.dtype}")
    a = tf.cast(x1, dtype)
    res = a * tf.pow(tf.constant(2.0, a.dtype), tf.cast(x2, a.dtype))
    return tf.where(tf.logical_or(tf.math.is_inf(a), tf.equal(a, 0)), a + tf.zeros_like(res), res)


# ---- NaN-aware ---------------------------------------------------------------------------
def _nanarg(x, axis, keepdims, arg, fill):
    x = _t(x)
    if x.dtype.kind != "f":
        return arg(x, axis=axis, keepdims=keepdims)
    nan = tf.math.is_nan(x)
    idx = arg(tf.where(nan, tf.fill(x.shape, tf.constant(fill, x.dtype)), x),
              axis=axis, keepdims=keepdims)
    allnan = tf.reduce_all(nan, axis=axis, keepdims=keepdims)
    return tf.where(allnan, tf.constant(-1, idx.dtype), idx)


def nanargmax(x, axis=None, keepdims=False):
    """The index of the largest value ignoring NaNs; -1 where all are NaN.

    >>> nanargmax([[float("nan"), 1.0], [float("nan"), float("nan")]], axis=1).numpy().tolist()
    [1, -1]
    """
    return _nanarg(x, axis, keepdims, argmax, float("-inf"))


def nanargmin(x, axis=None, keepdims=False):
    """The index of the smallest value ignoring NaNs; -1 where all are NaN.

    >>> int(nanargmin([2.0, float("nan"), -1.0]))
    2
    """
    return _nanarg(x, axis, keepdims, argmin, float("inf"))


def nancumsum(x, axis=None, dtype=None):
    """The cumulative sum with NaNs counted as 0 (Keras also maps infinities to the finite
    extremes first, as ``nan_to_num``).

    >>> nancumsum([1.0, float("nan"), 2.0]).numpy().tolist()
    [1.0, 1.0, 3.0]
    """
    return cumsum(nan_to_num(x), axis=axis, dtype=dtype)


def nancumprod(x, axis=None, dtype=None):
    """The cumulative product with NaNs counted as 1.

    >>> nancumprod([2.0, float("nan"), 3.0]).numpy().tolist()
    [2.0, 2.0, 6.0]
    """
    return cumprod(nan_to_num(x, nan=1.0), axis=axis, dtype=dtype)


def dsplit(x, indices_or_sections):
    """``split`` along the third axis.

    >>> [tuple(p.shape) for p in dsplit([[[0.0, 0.0]]], 2)]
    [(1, 1, 1), (1, 1, 1)]
    """
    return split(x, indices_or_sections, axis=2)


# ---- segments, distances, frames ---------------------------------------------------------
def _segment(data, segment_ids, num_segments, sorted, fsorted, funsorted):  # noqa: A002
    data, segment_ids = _t(data), _t(segment_ids)
    if sorted:
        if num_segments is not None:
            raise ValueError("Argument `num_segments` cannot be set when sorted is True when "
                             f"using the tensorflow backend.Received: num_segments="
                             f"{num_segments}, sorted={sorted}.")
        return fsorted(data, segment_ids)
    if num_segments is None:
        num_segments = int(tf.reduce_max(segment_ids)) + 1
    return funsorted(data, segment_ids, num_segments)


def segment_min(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    """The minimum of each segment (empty segments hold the dtype's largest value).

    >>> segment_min([3.0, 1.0, 2.0], [0, 0, 1]).numpy().tolist()
    [1.0, 2.0]
    """
    return _segment(data, segment_ids, num_segments, sorted, tf.math.segment_min,
                    tf.math.unsorted_segment_min)


def segment_prod(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    """The product of each segment (empty segments hold 1).

    >>> segment_prod([3.0, 1.0, 2.0], [0, 0, 1]).numpy().tolist()
    [3.0, 2.0]
    """
    return _segment(data, segment_ids, num_segments, sorted, tf.math.segment_prod,
                    tf.math.unsorted_segment_prod)


def cdist(x, y):
    """Euclidean distances between the rows of ``x`` and those of ``y`` (batched).

    >>> cdist([[0.0, 0.0]], [[3.0, 4.0], [0.0, 1.0]]).numpy().tolist()
    [[5.0, 1.0]]
    """
    x, y = _t(x), _t(y)
    if x.ndim < 2 or y.ndim < 2:
        raise ValueError("`cdist` inputs must have rank >= 2")
    if x.shape[-1] != y.shape[-1]:
        raise ValueError("Last dimension of inputs to `cdist` must match")
    diff = tf.expand_dims(x, -2) - tf.expand_dims(y, -3)
    return tf.sqrt(tf.reduce_sum(tf.square(diff), axis=-1))


def extract_sequences(x, sequence_length, sequence_stride):
    """The frames of length ``sequence_length`` every ``sequence_stride`` along the last axis.

    >>> extract_sequences([1.0, 2.0, 3.0, 4.0], 2, 2).numpy().tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    return _signal.frame(_t(x), sequence_length, sequence_stride, axis=-1, pad_end=False)


def in_top_k(targets, predictions, k):
    """Whether each ``targets[i]`` is among the ``k`` largest of ``predictions[i]``.

    >>> in_top_k([1, 0], [[0.1, 0.9], [0.2, 0.8]], 1).numpy().tolist()
    [True, False]
    """
    return tf.math.in_top_k(_t(targets), _t(predictions), k)


def nonzero(x):
    """The indices of the nonzero elements, one ``int32`` tensor per axis (eager: the
    result's length depends on the values, as in Keras's TensorFlow backend).

    >>> [v.numpy().tolist() for v in nonzero([[1, 0], [0, 3]])]
    [[0, 1], [0, 1]]
    """
    x = _t(x)
    idx = tf.where(tf.cast(x, "bool"))
    return tuple(tf.cast(v, "int32") for v in tf.unstack(idx, x.ndim, axis=1))
