"""``tf.signal``: frames, windows, the short-time Fourier transform, DCTs and mel
filterbanks, as the audio tutorials use them (``tf.abs(tf.signal.stft(...))``).

The STFT frames the signal (a gather) and transforms each frame with the ``rfft``
primitive (``numpy.fft``, ``ops/fft_ops.py``). A DCT is a product with a constant matrix
of cosines built once per size in float64 and rounded to the input's dtype, so its
derivatives of any order come from ``matmul``'s rules.

>>> import tapegrad as tf
>>> tf.signal.rfft(tf.constant([1.0, 2.0, 3.0, 4.0])).numpy()
array([10.+0.j, -2.+2.j, -2.+0.j], dtype=complex64)
"""
import functools
import math

import numpy as np

from tapegrad.core import dtypes as _dt
from tapegrad.core.tensor import Tensor, convert_to_tensor
from tapegrad.errors import InvalidArgumentError
from tapegrad.ops.fft_ops import irfft, rfft  # noqa: F401  (tf.signal's, stft's)
from tapegrad.ops.indexing_ops import gather
from tapegrad.ops.linalg_ops import tensordot
from tapegrad.ops.reduction_ops import reduce_sum
from tapegrad.ops.shape_ops import cast, pad, reshape, tile


def _as_tensor(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


def _fit_last(x, n):
    """``x`` cropped or zero-padded along its last axis to length ``n``."""
    m = x.shape[-1]
    if m > n:
        return x[..., :n]
    if m < n:
        return pad(x, [[0, 0]] * (x.ndim - 1) + [[0, n - m]])
    return x


def _on_last(x, matrix):
    """``x``'s last axis times ``matrix`` (a NumPy constant in ``x``'s dtype)."""
    return tensordot(x, convert_to_tensor(matrix.astype(np.dtype(x.dtype.name))), axes=1)


def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    """Frames of ``frame_length`` samples every ``frame_step`` along ``axis``: that axis
    becomes ``[frames, frame_length]``. ``pad_end`` pads with ``pad_value`` so that every
    sample starts a frame's worth of steps.

    >>> import tapegrad as tf
    >>> tf.signal.frame(tf.range(6), 3, 2, pad_end=True).numpy().tolist()
    [[0, 1, 2], [2, 3, 4], [4, 5, 0]]
    """
    x = _as_tensor(signal)
    axis = axis % x.ndim
    length, step = int(frame_length), int(frame_step)
    if step == 0:
        raise InvalidArgumentError("Integer division by zero [Op:FloorDiv]")
    n = x.shape[axis]
    if pad_end:
        frames = -(-n // step)
        extra = max(0, (frames - 1) * step + length - n)
        widths = [[0, 0]] * x.ndim
        widths[axis] = [0, extra]
        x = pad(x, widths, constant_values=pad_value)
    else:
        frames = max(0, 1 + (n - length) // step)
    index = np.arange(frames)[:, None] * step + np.arange(length)[None, :]
    return gather(x, index.astype(np.int32), axis=axis)


def _window(window_length, periodic, dtype, a, b):
    dtype = _dt.as_dtype(dtype)
    if dtype.kind != "f":
        raise ValueError(f"dtype must be a floating point type. Found <dtype: '{dtype.name}'>")
    length = int(window_length)
    if length == 1:
        return convert_to_tensor(np.ones(1, dtype))
    # TensorFlow's formula, in the window's dtype: periodic only changes even lengths
    n = dtype.type(length + int(bool(periodic)) * (1 - length % 2) - 1)
    arg = dtype.type(2 * np.pi) * np.arange(length, dtype=dtype) / n
    return convert_to_tensor((dtype.type(a) - dtype.type(b) * np.cos(arg)).astype(dtype))


def hann_window(window_length, periodic=True, dtype=_dt.float32, name=None):
    """``0.5 - 0.5 cos(2 pi n / N)``; ``N`` is the length (periodic, even lengths) or the
    length minus one.

    >>> import tapegrad as tf
    >>> tf.signal.hann_window(4).numpy()
    array([0. , 0.5, 1. , 0.5], dtype=float32)
    """
    return _window(window_length, periodic, dtype, 0.5, 0.5)


def hamming_window(window_length, periodic=True, dtype=_dt.float32, name=None):
    """``0.54 - 0.46 cos(2 pi n / N)``, ``N`` as for ``hann_window``."""
    return _window(window_length, periodic, dtype, 0.54, 0.46)


def stft(signals, frame_length, frame_step, fft_length=None, window_fn=hann_window,
         pad_end=False, name=None):
    """The short-time Fourier transform over the last axis: frames, each times
    ``window_fn(frame_length)`` and transformed by ``rfft`` of ``fft_length`` (the smallest
    power of two holding a frame by default): ``[..., frames, fft_length // 2 + 1]``.

    >>> import tapegrad as tf
    >>> tf.signal.stft(tf.zeros([50]), frame_length=15, frame_step=8).shape
    TensorShape([5, 9])
    """
    x = _as_tensor(signals)
    if fft_length is None:
        fft_length = 1 << max(0, int(frame_length) - 1).bit_length()
    framed = frame(x, frame_length, frame_step, pad_end=pad_end)
    if window_fn is not None:
        framed = framed * window_fn(frame_length, dtype=framed.dtype)
    return rfft(framed, [fft_length])


def overlap_and_add(signal, frame_step, name=None):
    """Frames ``[..., frames, frame_length]`` added back together, ``frame_step`` apart:
    ``[..., (frames - 1) * frame_step + frame_length]`` (the inverse of ``frame`` up to the
    overlaps' sum).

    >>> import tapegrad as tf
    >>> tf.signal.overlap_and_add(tf.ones([3, 4]), 2).numpy().tolist()
    [1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 1.0, 1.0]
    """
    x = _as_tensor(signal)
    if x.ndim < 2:
        raise ValueError(f"Shape {tuple(x.shape)} must have rank at least 2")
    step = int(frame_step)
    if step <= 0:  # TensorFlow fails in a pad of negative size
        raise InvalidArgumentError(f"frame_step must be positive. Got: {step}")
    frames, length = x.shape[-2], x.shape[-1]
    lead = tuple(x.shape[:-2])
    out_length = max(0, (frames - 1) * step + length)
    # each frame as k blocks of frame_step samples; block j of frame f lands in block f + j
    k = -(-length // step)
    x = pad(x, [[0, 0]] * (x.ndim - 1) + [[0, k * step - length]])
    blocks = reshape(x, lead + (frames, k, step))
    total = None
    for j in range(k):
        part = pad(blocks[..., j, :], [[0, 0]] * len(lead) + [[j, k - 1 - j], [0, 0]])
        total = part if total is None else total + part
    return reshape(total, lead + ((frames + k - 1) * step,))[..., :out_length]


def inverse_stft(stfts, frame_length, frame_step, fft_length=None,
                 window_fn=hann_window, name=None):
    """The signal of ``stft``'s frames: each frame's ``irfft`` (cropped or zero-padded to
    ``frame_length``) times ``window_fn(frame_length)``, overlapped and added. With
    ``window_fn=tf.signal.inverse_stft_window_fn(frame_step)`` it inverts ``stft``'s Hann
    window where frames overlap fully.

    >>> import numpy as np
    >>> import tapegrad as tf
    >>> x = tf.constant(np.random.default_rng(1).normal(size=64).astype(np.float32))
    >>> s = tf.signal.stft(x, 16, 4)
    >>> y = tf.signal.inverse_stft(s, 16, 4,
    ...                            window_fn=tf.signal.inverse_stft_window_fn(4))
    >>> bool(tf.reduce_max(tf.abs(y[12:-12] - x[12:52])) < 1e-5)
    True
    """
    s = _as_tensor(stfts)
    if s.ndim < 2:
        raise ValueError(f"Shape {tuple(s.shape)} must have rank at least 2")
    frame_length = int(frame_length)
    if fft_length is None:
        fft_length = 1 << max(0, frame_length - 1).bit_length()
    frames = irfft(s, [int(fft_length)])
    frames = _fit_last(frames, frame_length)
    if window_fn is not None:
        frames = frames * window_fn(frame_length, dtype=frames.dtype)
    return overlap_and_add(frames, frame_step)


def inverse_stft_window_fn(frame_step, forward_window_fn=hann_window, name=None):
    """A ``window_fn`` for ``inverse_stft`` that undoes ``stft``'s ``forward_window_fn``:
    the forward window over the sum of its squares at each overlap (Griffin and Lim's
    equation 7), as TensorFlow computes it.

    >>> import tapegrad as tf
    >>> tf.signal.inverse_stft_window_fn(2)(4, tf.float32).numpy()
    array([0., 1., 1., 1.], dtype=float32)
    """
    step = int(frame_step)

    def inverse_stft_window_fn_inner(frame_length, dtype):
        frame_length = int(frame_length)
        forward = forward_window_fn(frame_length, dtype=dtype)
        overlaps = -(-frame_length // step)
        denom = pad(forward * forward, [[0, overlaps * step - frame_length]])
        denom = reduce_sum(reshape(denom, (overlaps, step)), 0, keepdims=True)
        denom = reshape(tile(denom, [overlaps, 1]), (overlaps * step,))
        return forward / denom[:frame_length]
    return inverse_stft_window_fn_inner


def _hertz_to_mel(f):
    return 1127.0 * np.log(1.0 + f / 700.0)


def linear_to_mel_weight_matrix(num_mel_bins=20, num_spectrogram_bins=129, sample_rate=8000,
                                lower_edge_hertz=125.0, upper_edge_hertz=3800.0,
                                dtype=_dt.float32, name=None):
    """``[num_spectrogram_bins, num_mel_bins]`` triangular mel filters (HTK's mel scale);
    ``spectrogram @ matrix`` gives mel energies. The DC bin gets no weight.

    >>> import tapegrad as tf
    >>> tf.signal.linear_to_mel_weight_matrix(4, 9, 8000, 100.0, 3000.0).shape
    TensorShape([9, 4])
    """
    if num_mel_bins <= 0:
        raise ValueError(f"num_mel_bins must be positive. Got: {num_mel_bins}")
    if lower_edge_hertz < 0.0:
        raise ValueError(f"lower_edge_hertz must be non-negative. Got: {lower_edge_hertz}")
    if lower_edge_hertz >= upper_edge_hertz:
        raise ValueError(f"lower_edge_hertz {lower_edge_hertz:.1f} >= upper_edge_hertz "
                         f"{upper_edge_hertz:.1f}")
    if sample_rate <= 0.0:
        raise ValueError(f"sample_rate must be positive. Got: {sample_rate}")
    if upper_edge_hertz > sample_rate / 2:
        raise ValueError("upper_edge_hertz must not be larger than the Nyquist frequency "
                         f"(sample_rate / 2). Got {upper_edge_hertz} for sample_rate: "
                         f"{sample_rate}")
    dtype = _dt.as_dtype(dtype)
    linear = np.linspace(0.0, sample_rate / 2.0, num_spectrogram_bins)[1:]
    bins_mel = _hertz_to_mel(linear)[:, None]
    edges = np.linspace(_hertz_to_mel(lower_edge_hertz), _hertz_to_mel(upper_edge_hertz),
                        num_mel_bins + 2)
    lower, center, upper = edges[:-2], edges[1:-1], edges[2:]
    weights = np.maximum(0.0, np.minimum((bins_mel - lower) / (center - lower),
                                         (upper - bins_mel) / (upper - center)))
    weights = np.concatenate([np.zeros((1, num_mel_bins)), weights])[:num_spectrogram_bins]
    return convert_to_tensor(weights.astype(dtype))


@functools.lru_cache(maxsize=64)
def _dct_matrix(kind, n, ortho):
    """``M`` with ``dct(x) = x @ M`` (TensorFlow's unnormalised scaling, or orthonormal)."""
    i = np.arange(n)[:, None]  # input index
    k = np.arange(n)[None, :]  # output index
    if kind == 1:
        m = 2 * np.cos(np.pi * i * k / (n - 1))
        m[0, :] = 1.0
        m[-1, :] = (-1.0) ** np.arange(n)
    elif kind == 2:
        m = 2 * np.cos(np.pi * k * (2 * i + 1) / (2 * n))
        if ortho:
            m *= np.where(k == 0, np.sqrt(1 / (4 * n)), np.sqrt(1 / (2 * n)))
    elif kind == 3:
        m = 2 * np.cos(np.pi * i * (2 * k + 1) / (2 * n))
        m[0, :] = 1.0
        if ortho:
            m *= np.where(i == 0, np.sqrt(1 / n), np.sqrt(1 / (2 * n)))
    else:
        m = 2 * np.cos(np.pi * (2 * i + 1) * (2 * k + 1) / (4 * n))
        if ortho:
            m *= np.sqrt(1 / (2 * n))
    return m


def dct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002
    """The discrete cosine transform of type I-IV over the last axis (``n`` crops or
    zero-pads it); ``norm='ortho'`` scales types II-IV to orthonormal.

    >>> import tapegrad as tf
    >>> tf.signal.dct(tf.constant([1.0, 2.0, 3.0, 4.0]), type=1).numpy()
    array([15., -4.,  0., -1.], dtype=float32)
    """
    if type not in (1, 2, 3, 4):
        raise ValueError("Types I, II, III and IV (I)DCT are supported.")
    if type == 1 and norm == "ortho":
        raise ValueError("Normalization is not supported for the Type-I DCT.")
    if n is not None and n < 1:
        raise ValueError("n should be a positive integer or None")
    if axis != -1:
        raise NotImplementedError(f"axis must be -1. Got: {axis}")
    if norm not in (None, "ortho"):
        raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")
    x = _as_tensor(input)
    if n is not None:
        x = _fit_last(x, n)
    size = x.shape[-1]
    if type == 1 and size < 2:
        raise ValueError("Type-I DCT requires the dimension to be greater than one.")
    return _on_last(x, _dct_matrix(type, size, norm == "ortho"))


def idct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002
    """The inverse of ``dct`` up to TensorFlow's scaling: type II's inverse is type III."""
    inverse = {1: 1, 2: 3, 3: 2, 4: 4}.get(type, type)
    return dct(input, type=inverse, n=n, axis=axis, norm=norm)


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms, name=None):
    """MFCCs: the type-II DCT of log-mel spectrograms over their last axis, scaled by
    ``1 / sqrt(2 * num_mel_bins)`` (TensorFlow's scaling; keep the first few)."""
    x = _as_tensor(log_mel_spectrograms)
    if x.dtype.kind != "f":
        raise ValueError(f"dtype must be a floating point type. Found <dtype: '{x.dtype.name}'>")
    return dct(x, type=2) * cast(convert_to_tensor(1.0 / math.sqrt(2.0 * x.shape[-1])), x.dtype)
