"""The discrete Fourier transforms over the last ``rank`` axes, backed by ``numpy.fft``:
``fft`` (complex to complex, forward or inverse), ``rfft`` (real to the ``n // 2 + 1``
non-negative frequencies of the last axis) and ``irfft`` (its inverse, to real).

Each is linear, so its JVP is itself applied to the tangent. Its VJP is the adjoint in
TensorFlow's complex convention (a cotangent is ``dL/dRe + i dL/dIm``, ``complex.py``):

- ``fft``: holomorphic with a symmetric matrix (its transpose is itself), so the rule as
  written is the transform again and ``complex.py`` conjugates it to ``n * ifft(g)`` for
  the forward transform and ``fft(g) / n`` for the inverse (TensorFlow's FFT gradients);
- ``rfft``: ``dL/dx_t = Re(sum_k g_k e^{+i theta})``, which is ``Re(fft(conj(g)))`` of the
  cotangent zero-padded to the full length: TensorFlow's ``0.5 * (n * irfft(g) + ...)``,
  without its dropped-component terms to add back;
- ``irfft``: ``rfft(g) * mask / n`` with mask ``[1, 2, ..., 2, 1 if n is even]`` (the
  bins the forward pass counts twice, TensorFlow's rule).

Every rule is made of primitives (``pad``, ``conj``, ``real``, ``mul`` and these three),
so the derivatives of any order follow. The op layer (``ops/fft_ops.py``) crops or pads
the input to ``fft_length`` before these run: each primitive takes exact sizes.

>>> import numpy as np
>>> _rfft(np.array([1.0, 2.0, 3.0, 4.0]), (4,)).tolist()
[(10+0j), (-2+2j), (-2+0j)]
"""
import numpy as np

from tapegrad.core.dispatch import Primitive, bind
from tapegrad.primitives.api import multiply, pad, tensor
from tapegrad.primitives.complex import conj, real

_COMPLEX_OF = {"float32": np.complex64, "float64": np.complex128}
_REAL_OF = {"complex64": np.float32, "complex128": np.float64}


def _axes(rank):
    return tuple(range(-rank, 0))


def _fft(x, rank, inverse):
    if x.size == 0:  # numpy.fft refuses zero-length transforms: nothing to transform
        return np.zeros(x.shape, x.dtype)
    f = np.fft.ifftn if inverse else np.fft.fftn
    return f(x, axes=_axes(rank)).astype(x.dtype, copy=False)


def _rfft(x, lengths):
    dtype = _COMPLEX_OF[np.dtype(x.dtype).name]
    shape = x.shape[:-1] + (lengths[-1] // 2 + 1,)
    if x.size == 0:
        return np.zeros(shape, dtype)
    return np.fft.rfftn(x, axes=_axes(len(lengths))).astype(dtype, copy=False)


def _irfft(x, lengths):
    dtype = _REAL_OF[np.dtype(x.dtype).name]
    shape = x.shape[:-len(lengths)] + tuple(lengths)
    if x.size == 0 or 0 in shape:
        return np.zeros(shape, dtype)
    return np.fft.irfftn(x, s=lengths, axes=_axes(len(lengths))).astype(dtype, copy=False)


def fft(x, rank, inverse=False):
    """The complex DFT of ``x`` over its last ``rank`` axes (the inverse, scaled by
    ``1 / n``, if ``inverse``)."""
    return bind(fft_p, tensor(x), rank=rank, inverse=bool(inverse))


def rfft(x, lengths):
    """The DFT of the real ``x`` whose last axes have ``lengths``: the last axis keeps its
    ``n // 2 + 1`` non-negative frequencies."""
    return bind(rfft_p, tensor(x), lengths=tuple(lengths))


def irfft(x, lengths):
    """The real signal of ``lengths`` whose ``rfft`` is ``x``."""
    return bind(irfft_p, tensor(x), lengths=tuple(lengths))


def _check_rank(name, rank, ndim):
    if type(rank) is not int or not 1 <= rank <= 3:
        raise ValueError(f"{name}: rank must be 1, 2 or 3, got {rank!r}")
    if ndim < rank:
        raise ValueError(f"{name}: rank {rank} needs an input of rank {rank} at least, got "
                         f"{ndim}")


def _check_lengths(name, lengths, ndim):
    if type(lengths) is not tuple or not all(type(n) is int and n >= 0 for n in lengths):
        raise ValueError(f"{name}: lengths must be a tuple of non-negative ints")
    _check_rank(name, len(lengths), ndim)


# ---- fft: complex to complex ---------------------------------------------------------------
def _fft_abstract(x, *, rank, inverse):
    if np.dtype(x.dtype).name not in _REAL_OF:
        raise TypeError(f"fft: complex64 or complex128 inputs only, got {x.dtype}")
    return tuple(x.shape), x.dtype


def _fft_validate(x, *, rank, inverse):
    _check_rank("fft", rank, len(x.shape))
    if type(inverse) is not bool:
        raise ValueError("fft: inverse must be a bool")


def _fft_rule(t, ans, x, *, rank, inverse):
    # the JVP; and the VJP before complex.py conjugates it (the DFT matrix is symmetric)
    return fft(t, rank, inverse)


fft_p = Primitive(
    "fft", _fft, nin=1, fresh=True, abstract=_fft_abstract, validate=_fft_validate,
    vjp=(_fft_rule,), jvp=(_fft_rule,), complex="holomorphic",
    batch=lambda args, batched, *, rank, inverse: fft_p.bind_raw(args[0], rank=rank,
                                                                 inverse=inverse),
    emit="_fft({0}, {rank}, {inverse})")


# ---- rfft: real to the non-negative frequencies ------------------------------------------
def _rfft_abstract(x, *, lengths):
    name = np.dtype(x.dtype).name
    if name not in _COMPLEX_OF:
        raise TypeError(f"rfft: float32 or float64 inputs only, got {x.dtype}")
    if tuple(x.shape[-len(lengths):]) != lengths:
        raise ValueError(f"rfft: the last axes {tuple(x.shape)} are not {lengths}")
    return tuple(x.shape[:-1]) + (lengths[-1] // 2 + 1,), np.dtype(_COMPLEX_OF[name])


def _rfft_vjp(g, ans, x, *, lengths):
    # Re(sum_k g_k e^{+i theta}) over the kept bins: the missing ones have no cotangent
    m = g.shape[-1]
    g = pad(conj(g), [(0, 0)] * (len(g.shape) - 1) + [(0, lengths[-1] - m)])
    return real(fft(g, len(lengths)))


rfft_p = Primitive(
    "rfft", _rfft, nin=1, fresh=True, abstract=_rfft_abstract,
    validate=lambda x, *, lengths: _check_lengths("rfft", lengths, len(x.shape)),
    vjp=(_rfft_vjp,), jvp=(lambda t, ans, x, *, lengths: rfft(t, lengths),), complex="own",
    batch=lambda args, batched, *, lengths: rfft_p.bind_raw(args[0], lengths=lengths),
    emit="_rfft({0}, {lengths})")


# ---- irfft: the non-negative frequencies to a real signal ---------------------------------
def _irfft_abstract(x, *, lengths):
    name = np.dtype(x.dtype).name
    if name not in _REAL_OF:
        raise TypeError(f"irfft: complex64 or complex128 inputs only, got {x.dtype}")
    want = lengths[:-1] + (lengths[-1] // 2 + 1,)
    if tuple(x.shape[-len(lengths):]) != want:
        raise ValueError(f"irfft: the last axes {tuple(x.shape)} are not {want}")
    return tuple(x.shape[:-len(lengths)]) + lengths, np.dtype(_REAL_OF[name])


def _irfft_vjp(g, ans, x, *, lengths):
    n = lengths[-1]
    mask = np.full(n // 2 + 1, 2.0)
    mask[0] = 1.0
    if n % 2 == 0:
        mask[-1] = 1.0
    scale = np.asarray(mask / np.prod(lengths), np.dtype(x.dtype))
    return multiply(rfft(g, lengths), scale)


irfft_p = Primitive(
    "irfft", _irfft, nin=1, fresh=True, abstract=_irfft_abstract,
    validate=lambda x, *, lengths: _check_lengths("irfft", lengths, len(x.shape)),
    vjp=(_irfft_vjp,), jvp=(lambda t, ans, x, *, lengths: irfft(t, lengths),),
    complex="own",
    batch=lambda args, batched, *, lengths: irfft_p.bind_raw(args[0], lengths=lengths),
    emit="_irfft({0}, {lengths})")

EMIT_HELPERS = {"_fft": _fft, "_rfft": _rfft, "_irfft": _irfft}
