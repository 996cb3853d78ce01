"""Complex numbers: the ``real``, ``imag`` and ``conj`` primitives, and TensorFlow's
convention for every derivative rule that meets a complex value.

TensorFlow's reverse mode passes *conjugated* cotangents: for a holomorphic ``f`` the VJP is
``g * conj(f'(z))`` (``tape.gradient`` of ``z * c`` is ``conj(c)``, of ``z ** 2`` is
``2 conj(z)``), while forward mode is ``f'(z) * t``, with no conjugate. For a real-valued
``L`` this makes the gradient the direction of steepest ascent, ``dL/dx + i dL/dy``.

The elementwise rules are written once, as ``t * f'(z)``: exactly the JVP. So for a
holomorphic primitive the VJP of a complex cotangent is ``conj(rule(conj(g)))`` (which is
``g * conj(f'(z))``), and its JVP is the rule as written. Maps that are linear with real
coefficients (add, reshape, sum, indexing...) are the same in both conventions. ``abs``
and ``cast`` (not holomorphic) take complex values in rules of their own, and ``real``,
``imag`` and ``conj`` are defined here. Every other primitive raises ``TypeError`` when its
derivative meets a complex value, rather than give a number in another convention. Each
block states which of these it is (``Primitive.complex``); ``adapt`` adapts its rules
as the primitive is made.

>>> import tapegrad as tf
>>> z = tf.constant(1 + 2j, tf.complex128)
>>> with tf.GradientTape() as t:
...     t.watch(z)
...     y = z * z
>>> t.gradient(y, z).numpy().item()
(2-4j)
"""
import numpy as np

from tapegrad.core import hooks
from tapegrad.core.dispatch import PRIMITIVES, bind
from tapegrad.core.tensor import Tensor
from tapegrad.primitives.api import cast, multiply
from tapegrad.primitives.families import ufunc_dtype, unary, xp


def is_complex(v):
    """Whether ``v`` (a Tensor, an array) holds complex numbers."""
    dt = getattr(v, "dtype", None)
    return dt is not None and dt.kind == "c"


def conj(v):
    """The complex conjugate (a primitive, so it differentiates again); reals pass."""
    if not is_complex(v):
        return v
    if isinstance(v, Tensor):
        return bind(conj_p, v)
    return np.conj(v)


def _real_dtype(d):
    return np.empty((), d).real.dtype


def _complex_of(g, like):
    """The real ``g`` as a complex value of ``like``'s dtype (imaginary part 0)."""
    return cast(g, like.dtype) if is_complex(like) else g


def _i(dtype):
    return np.asarray(1j, dtype)


# fmt: off
conj_p = unary("conj", xp.conjugate, lambda g, ans, x: conj(g), emit="np.conjugate({0})",
               dtype=ufunc_dtype(np.conjugate), complex="real_linear")
real_p = unary("real", xp.real, lambda g, ans, x: _complex_of(g, x), emit="np.real({0})",
               dtype=_real_dtype, jvp=lambda t, ans, x: real(t), complex="real_linear")
# d imag(z) = imag(dz); TensorFlow's cotangent is complex(0, g)
imag_p = unary("imag", xp.imag,
               lambda g, ans, x: multiply(_complex_of(g, x), _i(x.dtype)) if is_complex(x)
               else g * 0,
               emit="np.imag({0})", dtype=_real_dtype, jvp=lambda t, ans, x: imag(t),
               complex="real_linear")
# fmt: on


def real(v):
    return bind(real_p, v) if isinstance(v, Tensor) else np.real(v)


def imag(v):
    return bind(imag_p, v) if isinstance(v, Tensor) else np.imag(v)


def complex_(re, im):
    """``re + i im`` from two real tensors of one dtype (``tf.complex``)."""
    dt = np.result_type(re.dtype, np.complex64)
    return cast(re, dt) + multiply(cast(im, dt), _i(dt))


# ---- how each primitive's rules meet complex values: its block says (Primitive.complex) ------
def _conjugated(rule):
    """The VJP rule of a holomorphic primitive in TensorFlow's convention."""
    def vjp(g, ans, *xs, **params):
        try:  # is_complex(g), inlined: this runs for every product in every reverse pass
            real = g.dtype.kind != "c"
        except AttributeError:
            real = True
        if real:
            return rule(g, ans, *xs, **params)
        return conj(rule(conj(g), ans, *xs, **params))
    vjp.__wrapped__ = rule
    return vjp


def _conjugated_all(rule):
    def vjp(g, ans, *xs, **params):
        if not is_complex(g):
            return rule(g, ans, *xs, **params)
        return tuple(None if c is None else conj(c)
                     for c in rule(conj(g), ans, *xs, **params))
    vjp.__wrapped__ = rule
    return vjp


def _refusing(name, rule, mode):
    """A rule that raises where a complex value meets it (a rule for real numbers only)."""
    def checked(g, ans, *xs, **params):
        if is_complex(g) or is_complex(ans) or any(is_complex(x) for x in xs):
            raise TypeError(
                f"The {mode} of '{name}' is not defined for complex values in tapegrad "
                "(complex derivatives follow TensorFlow's convention for add, mul, div, "
                "pow, exp, log, sqrt, the trigonometric functions, abs, real, imag, conj, "
                "matmul, einsum and the shape operations only).")
        return rule(g, ans, *xs, **params)
    checked.__wrapped__ = rule
    return checked


def _wrap_rules(p, wrap):
    if p.vjp is not None:
        p.vjp = wrap(p.vjp, "gradient") if callable(p.vjp) else tuple(
            None if r is None else wrap(r, "gradient") for r in p.vjp)
    if p.jvp is not None:
        p.jvp = wrap(p.jvp, "forward derivative") if callable(p.jvp) else tuple(
            None if r is None else wrap(r, "forward derivative") for r in p.jvp)


def adapt(p):
    """Give primitive ``p``'s rules TensorFlow's complex convention, by the kind its block
    states: holomorphic VJPs are conjugated, real-linear and own rules stay, and every other
    derivative refuses complex values. Run once per primitive, as it is made
    (``core/hooks.py: complex_rules``)."""
    if p.nondiff or p.complex in ("real_linear", "own"):
        return
    if p.complex == "holomorphic":
        p.vjp = _conjugated_all(p.vjp) if callable(p.vjp) else tuple(
            None if r is None else _conjugated(r) for r in p.vjp)
    else:
        _wrap_rules(p, lambda r, mode, n=p.name: _refusing(n, r, mode))


# every primitive made from now on is adapted as it is made; the ones made before this
# module (none but those it needs to import) are adapted here, once
for _p in list(PRIMITIVES.values()):
    adapt(_p)
hooks.install(complex_rules=adapt)
