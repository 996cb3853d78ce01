"""``keras.ops``' ``stft`` and ``istft`` over tapegrad's ``tf.signal``, with Keras 3's
arguments: frames of ``sequence_length`` samples ``sequence_stride`` apart, windowed
(``"hann"``, ``"hamming"``, an array, or None), centred by reflection padding, and the
spectrum as a ``(real, imag)`` pair.

>>> import numpy as np
>>> from tapegrad.keras import ops
>>> x = np.sin(np.arange(32, dtype="float32"))
>>> real, imag = ops.stft(x, 8, 4, 8)
>>> tuple(real.shape), bool(np.allclose(ops.istft((real, imag), 8, 4, 8), x, atol=1e-5))
((9, 5), True)
"""
from tapegrad.keras import _tf as tf
from tapegrad.keras.ops.extra import _t
from tapegrad.keras.ops.spectral import _complex_pair
from tapegrad.ops import signal_ops as _signal

__all__ = ["stft", "istft"]


def _check_stride(sequence_stride):
    if not isinstance(sequence_stride, int) or sequence_stride <= 0:
        raise ValueError("`sequence_stride` must be a positive integer. Received: "
                         f"sequence_stride={sequence_stride}")


def _check_window(window):
    if isinstance(window, str) and window not in ("hann", "hamming"):
        raise ValueError('If a string is passed to `window`, it must be one of `"hann"`, '
                         f'`"hamming"`. Received: window={window}')


def _window(window, sequence_length, fft_length, dtype):
    """The window as a function of ``fft_length`` samples: the ``sequence_length`` window
    zero-padded on both sides (None for no window)."""
    if window is None:
        return None
    if isinstance(window, str):
        make = _signal.hann_window if window == "hann" else _signal.hamming_window
        w = make(sequence_length, periodic=True, dtype=dtype)
    else:
        w = tf.cast(_t(window), dtype)
    if w.ndim != 1 or w.shape[-1] != sequence_length:
        raise ValueError("The shape of `window` must be equal to [sequence_length]."
                         f"Received: window shape={tuple(w.shape)}")
    left = (fft_length - sequence_length) // 2
    w = tf.pad(w, [[left, fft_length - sequence_length - left]])
    return lambda frame_length, dtype=None: w


def stft(x, sequence_length, sequence_stride, fft_length, window="hann", center=True):
    """The short-time Fourier transform along the last axis of the float32 or float64
    ``x``: ``(real, imag)`` of shape ``(..., frames, fft_length // 2 + 1)``."""
    _check_stride(sequence_stride)
    x = _t(x)
    if x.dtype.name not in ("float32", "float64"):
        raise TypeError("Invalid input type. Expected `float32` or `float64`. Received: "
                        f"input type={x.dtype.name}")
    if fft_length < sequence_length:
        raise ValueError("`fft_length` must equal or larger than `sequence_length`. "
                         f"Received: sequence_length={sequence_length}, "
                         f"fft_length={fft_length}")
    _check_window(window)
    if center:
        half = fft_length // 2
        x = tf.pad(x, [[0, 0]] * (x.ndim - 1) + [[half, half]], mode="REFLECT")
    window_fn = _window(window, sequence_length, fft_length, x.dtype)
    z = _signal.stft(x, fft_length, sequence_stride, fft_length, window_fn=window_fn)
    return tf.math.real(z), tf.math.imag(z)


def istft(x, sequence_length, sequence_stride, fft_length, length=None, window="hann",
          center=True):
    """The inverse of ``stft`` from its ``(real, imag)`` pair: overlap-added frames under
    the window that undoes ``window``'s overlaps, the centring padding cut off, ``length``
    samples if given."""
    _check_stride(sequence_stride)
    z = _complex_pair(x)
    _check_window(window)
    dtype = tf.math.real(z).dtype
    forward = _window(window, sequence_length, fft_length, dtype)
    window_fn = (None if forward is None
                 else _signal.inverse_stft_window_fn(sequence_stride, forward))
    y = _signal.inverse_stft(z, fft_length, sequence_stride, fft_length, window_fn=window_fn)
    start = fft_length // 2 if center else 0
    if length is not None:
        return y[..., start:start + length]
    if center:
        return y[..., start:y.shape[-1] - fft_length // 2]
    return y[..., :fft_length + sequence_stride * (z.shape[-2] - 1)]
