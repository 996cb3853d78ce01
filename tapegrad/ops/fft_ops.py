"""``tf.signal``'s Fourier transforms: ``fft``/``ifft`` (1-3D, complex), ``rfft``/``irfft``
(1-3D, real signals) and ``fftshift``/``ifftshift``, on the FFT primitives
(``primitives/fft.py``, backed by ``numpy.fft``).

The real transforms crop or zero-pad the input to ``fft_length`` here (``fft_length // 2
+ 1`` bins on the last axis for the inverse), so the primitives see exact sizes and their
gradients are the true ones. TensorFlow 2.21's own gradient of a cropping ``rfft`` or
``irfft`` fails with a shape error ("Incompatible shapes"); tapegrad gives the gradient.

>>> import tapegrad as tf
>>> tf.signal.fft(tf.constant([1.0 + 0j, 2.0, 3.0, 4.0])).numpy()
array([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])
"""
import numpy as np

from tapegrad.core import dtypes as _dt
from tapegrad.core.tensor import Tensor, convert_to_tensor
from tapegrad.errors import InvalidArgumentError
from tapegrad.ops.gather_ops import roll
from tapegrad.ops.shape_ops import pad
from tapegrad.primitives import fft as _fft

_COMPLEX_OF = {"float32": _dt.complex64, "float64": _dt.complex128}
_REAL_OF = {"complex64": _dt.float32, "complex128": _dt.float64}


def _as_tensor(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


def _lengths(fft_length, rank, default):
    """``fft_length`` as TensorFlow takes it: None, or ``rank`` ints in a list or tensor."""
    if fft_length is None:
        return tuple(default)
    if isinstance(fft_length, Tensor):
        fft_length = fft_length.numpy()
    if isinstance(fft_length, (int, np.integer)):
        raise TypeError(f"'{type(fft_length).__name__}' object is not iterable")
    lengths = tuple(int(v) for v in np.asarray(fft_length).reshape(-1))
    if len(lengths) != rank:
        raise InvalidArgumentError(f"fft_length must have shape [{rank}]")
    return lengths


def fit_last(x, sizes):
    """``x`` cropped or zero-padded along its last ``len(sizes)`` axes to ``sizes``."""
    rank = len(sizes)
    have = tuple(x.shape[-rank:])
    if have == tuple(sizes):
        return x
    if any(h > s for h, s in zip(have, sizes)):
        x = x[(Ellipsis,) + tuple(slice(0, s) for s in sizes)]
    widths = [[0, max(0, s - h)] for h, s in zip(have, sizes)]
    if any(w[1] for w in widths):
        x = pad(x, [[0, 0]] * (x.ndim - rank) + widths)
    return x


# TensorFlow's names of dtypes in its op-definition errors
_TF_NAME = {"float16": "half", "float32": "float", "float64": "double"}


def _check_complex(x, op):
    if x.dtype.name not in _REAL_OF:
        raise InvalidArgumentError(
            f"Value for attr 'Tcomplex' of {_TF_NAME.get(x.dtype.name, x.dtype.name)} is "
            "not in the list of allowed "
            f"values: complex64, complex128 [Op:{op}]")
    return x


def _check_rank(x, rank, op):
    if x.ndim < rank:
        raise InvalidArgumentError(f"Input must have rank of at least {rank} but got: "
                                   f"{list(x.shape)} [Op:{op}]")


def _complex_transform(input, rank, inverse, op):  # noqa: A002
    x = _check_complex(_as_tensor(input), op)
    _check_rank(x, rank, op)
    return _fft.fft(x, rank, inverse)


def fft(input, name=None):  # noqa: A002
    """The DFT over the last axis of a complex tensor.

    >>> import tapegrad as tf
    >>> tf.signal.fft(tf.constant([1.0 + 1j, 1.0 - 1j])).numpy()
    array([2.+0.j, 0.+2.j])
    """
    return _complex_transform(input, 1, False, "FFT")


def ifft(input, name=None):  # noqa: A002
    """The inverse DFT over the last axis (scaled by ``1 / n``): ``ifft(fft(x)) == x``.

    >>> import tapegrad as tf
    >>> tf.signal.ifft(tf.constant([2.0 + 0j, 2j])).numpy()
    array([1.+1.j, 1.-1.j])
    """
    return _complex_transform(input, 1, True, "IFFT")


def fft2d(input, name=None):  # noqa: A002
    """The DFT over the last two axes of a complex tensor."""
    return _complex_transform(input, 2, False, "FFT2D")


def ifft2d(input, name=None):  # noqa: A002
    """The inverse DFT over the last two axes."""
    return _complex_transform(input, 2, True, "IFFT2D")


def fft3d(input, name=None):  # noqa: A002
    """The DFT over the last three axes of a complex tensor."""
    return _complex_transform(input, 3, False, "FFT3D")


def ifft3d(input, name=None):  # noqa: A002
    """The inverse DFT over the last three axes."""
    return _complex_transform(input, 3, True, "IFFT3D")


def _real_transform(input_tensor, fft_length, rank, op):
    x = _as_tensor(input_tensor)
    if x.dtype.name not in _COMPLEX_OF:
        raise ValueError(f"RFFT requires tf.float32 or tf.float64 inputs, got: {x!r}")
    _check_rank(x, rank, op)
    lengths = _lengths(fft_length, rank, x.shape[-rank:])
    return _fft.rfft(fit_last(x, lengths), lengths)


def _inverse_real_transform(input_tensor, fft_length, rank, op):
    x = _as_tensor(input_tensor)
    if x.dtype.name not in _REAL_OF:
        raise ValueError(f"IRFFT requires tf.complex64 or tf.complex128 inputs, got: {x!r}")
    _check_rank(x, rank, op)
    default = tuple(x.shape[-rank:-1]) + (2 * (x.shape[-1] - 1),)
    lengths = _lengths(fft_length, rank, default)
    return _fft.irfft(fit_last(x, lengths[:-1] + (lengths[-1] // 2 + 1,)), lengths)


def rfft(input_tensor, fft_length=None, name=None):
    """The DFT of a real signal over its last axis: ``fft_length // 2 + 1`` complex bins
    (the signal is cropped or zero-padded to ``fft_length``, one element in a list).

    >>> import tapegrad as tf
    >>> tf.signal.rfft(tf.constant([1.0, 2.0, 3.0]), fft_length=[2]).numpy()
    array([ 3.+0.j, -1.+0.j], dtype=complex64)
    """
    return _real_transform(input_tensor, fft_length, 1, "RFFT")


def irfft(input_tensor, fft_length=None, name=None):
    """The real signal of ``fft_length`` samples (``2 * (bins - 1)`` by default) whose
    ``rfft`` is ``input_tensor``; the imaginary parts of the DC and Nyquist bins are unused.

    >>> import tapegrad as tf
    >>> tf.signal.irfft(tf.constant([10.0 + 0j, -2.0 + 2j, -2.0 + 0j])).numpy()  # complex128
    array([1., 2., 3., 4.])
    """
    return _inverse_real_transform(input_tensor, fft_length, 1, "IRFFT")


def rfft2d(input_tensor, fft_length=None, name=None):
    """The 2-D DFT of a real signal over its last two axes (the last keeps
    ``fft_length[1] // 2 + 1`` bins)."""
    return _real_transform(input_tensor, fft_length, 2, "RFFT2D")


def irfft2d(input_tensor, fft_length=None, name=None):
    """The real signal over the last two axes whose ``rfft2d`` is ``input_tensor``."""
    return _inverse_real_transform(input_tensor, fft_length, 2, "IRFFT2D")


def rfft3d(input_tensor, fft_length=None, name=None):
    """The 3-D DFT of a real signal over its last three axes."""
    return _real_transform(input_tensor, fft_length, 3, "RFFT3D")


def irfft3d(input_tensor, fft_length=None, name=None):
    """The real signal over the last three axes whose ``rfft3d`` is ``input_tensor``."""
    return _inverse_real_transform(input_tensor, fft_length, 3, "IRFFT3D")


def _shift(x, axes, sign):
    x = _as_tensor(x)
    if axes is None:
        axes = list(range(x.ndim))
    elif isinstance(axes, (int, np.integer)):
        axes = [int(axes)]
    axes = [int(a) for a in axes]
    return roll(x, [sign * (x.shape[a] // 2) for a in axes], axes)


def fftshift(x, axes=None, name=None):
    """The zero frequency moved to the centre (``numpy.fft.fftshift``).

    >>> import tapegrad as tf
    >>> tf.signal.fftshift(tf.constant([0, 1, 2, -2, -1])).numpy().tolist()
    [-2, -1, 0, 1, 2]
    """
    return _shift(x, axes, 1)


def ifftshift(x, axes=None, name=None):
    """The inverse of ``fftshift``."""
    return _shift(x, axes, -1)
