"""Table-driven tests over every registered primitive.

``SPECS`` maps each primitive's name to cases: a function of tensors that applies the
primitive (through ``bind``, so no op-layer logic is between the test and the rule), the
argument domains and shapes (broadcasting pairs included) and a tolerance. For each case:

- derivatives: ``check_grads`` in float64, forward and reverse, orders 1 and 2;
- batching: the batching rule against a loop over the examples and a stack, for several
  choices of which arguments are batched;
- the shape/dtype rule (``abstract``) against the real output;
- nondifferentiable primitives give None gradients and JVPs.

A primitive without an entry in ``SPECS`` fails ``test_every_primitive_has_a_spec``, and one
missing a rule fails ``test_registry_has_every_rule``.
"""
import warnings

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.core.dispatch import PRIMITIVES, bind
from tapegrad.primitives.gather import Index
from tapegrad.primitives.params import param_names
from tapegrad.testing import check_batching, check_grads

BATCH = 3


# ---- argument domains ---------------------------------------------------------------------
class Arg:
    """A random argument: ``kind`` picks the domain, ``shape`` the per-example shape."""

    def __init__(self, kind, shape=(), low=None, high=None, value=None):
        self.kind, self.shape, self.low, self.high, self.value = kind, tuple(shape), low, high, value

    @property
    def floating(self):
        if self.kind == "const":
            return np.asarray(self.value).dtype.kind == "f"
        return self.kind in ("real", "pos", "unit", "away0", "range", "wellcond", "spd", "spread")

    def draw(self, rng, lead=()):
        shape = tuple(lead) + self.shape
        k = self.kind
        if k == "real":
            return rng.standard_normal(shape)
        if k == "pos":
            return rng.uniform(0.5, 2.0, shape)
        if k == "unit":
            return rng.uniform(-0.9, 0.9, shape)
        if k == "away0":
            return rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)
        if k == "range":
            return rng.uniform(self.low, self.high, shape)
        if k == "int":
            return rng.randint(self.low, self.high, shape).astype(np.int64)
        if k == "bool":
            return rng.uniform(size=shape) < 0.5
        if k == "wellcond":   # square matrices near the identity: safely invertible
            n = shape[-1]
            return np.eye(n) + 0.3 * rng.standard_normal(shape)
        if k == "spd":        # symmetric positive definite
            n = shape[-1]
            m = rng.standard_normal(shape)
            return m @ np.swapaxes(m, -1, -2) / n + np.eye(n)
        if k == "spread":     # eigenvalues and singular values near 1, 2, 3...: well apart
            m, n = shape[-2:]
            return np.eye(m, n) * np.arange(1.0, n + 1) + 0.1 * rng.standard_normal(shape)
        if k == "const":
            v = np.asarray(self.value)
            return np.broadcast_to(v, tuple(lead) + v.shape).copy()
        raise ValueError(k)

    def __repr__(self):
        return f"{self.kind}{self.shape}"


def R(*shape):
    return Arg("real", shape)


def Pos(*shape):
    return Arg("pos", shape)


def Unit(*shape):
    return Arg("unit", shape)


def Away(*shape):
    return Arg("away0", shape)


def Rng(low, high, *shape):
    return Arg("range", shape, low=low, high=high)


def Int(low, high, *shape):
    return Arg("int", shape, low=low, high=high)


def Bool(*shape):
    return Arg("bool", shape)


def Mat(*shape):
    return Arg("wellcond", shape)


def Spd(*shape):
    return Arg("spd", shape)


def Spread(*shape):
    return Arg("spread", shape)


def Const(value):
    return Arg("const", np.shape(value), value=np.asarray(value))


class Case:
    """One way to exercise a primitive."""

    def __init__(self, fn, args, *, rtol=1e-5, atol=1e-6, order=2, batch=True,
                 batch_fallback=False, label="", xfail_batch=None):
        self.fn, self.args = fn, list(args)
        self.rtol, self.atol, self.order = rtol, atol, order
        self.batch, self.batch_fallback, self.label = batch, batch_fallback, label
        self.xfail_batch = xfail_batch  # a known bug elsewhere: (reason, flag sets)


def p(name):
    return PRIMITIVES[name]


def prim_fn(name, **params):
    return lambda *xs: bind(PRIMITIVES[name], *xs, **params)


# ---- the table ----------------------------------------------------------------------------
UNARY_SHAPES = [(), (3,), (2, 3)]
BINARY_SHAPES = [((2, 3), (2, 3)), ((3, 1), (4,)), ((), (2, 3)), ((2, 3), ()),
                 ((4, 1, 3), (2, 1))]


def unary(name, dom=R):
    return [Case(prim_fn(name), [dom(*s)], label=str(s)) for s in UNARY_SHAPES]


def binary(name, dx=R, dy=R, **kw):
    return [Case(prim_fn(name), [dx(*a), dy(*b)], label=f"{a}&{b}", **kw)
            for a, b in BINARY_SHAPES]


def int_reduction(name):
    """Integer inputs keep their dtype (NumPy would sum int32 into int64); no derivatives."""
    return [Case(prim_fn(name, axis=axis, keepdims=False), [Int(-3, 4, *shape)], order=0,
                 label=f"int {shape} axis={axis}")
            for shape, axis in [((3, 4), (1,)), ((2, 3), (0, 1))]]


def reduction(name, dom=R):
    cases = []
    for shape, axis in [((), ()), ((4,), (0,)), ((3, 4), (0,)), ((3, 4), (1,)),
                        ((3, 4), (0, 1)), ((2, 3, 4), (0, 2))]:
        for keepdims in (False, True):
            cases.append(Case(prim_fn(name, axis=axis, keepdims=keepdims), [dom(*shape)],
                              label=f"{shape} axis={axis} keepdims={keepdims}"))
    return cases


def nondiff_unary(name, dom=R):
    return [Case(prim_fn(name), [dom(*s)], order=0, label=str(s)) for s in UNARY_SHAPES]


def nondiff_binary(name, dx=R, dy=R):
    return [Case(prim_fn(name), [dx(*a), dy(*b)], order=0, label=f"{a}&{b}")
            for a, b in BINARY_SHAPES]


GETITEM_KEYS = [
    ((4, 5), (1, slice(None, None, 2))),
    ((4, 5), (slice(None, None, -1), None, Ellipsis)),
    ((4, 5), (slice(1, 3), 2)),
    ((4, 5), (np.array([0, 2, 2]),)),                     # repeated rows: add.at in the VJP
    ((4, 5), (np.array([True, False, True, True]),)),
    ((4, 5), (Ellipsis, np.array([1, -1]))),
    ((4, 5), (np.array([0, 1]), np.array([2, 3]))),
    ((3, 4, 5), (np.array([0, 2]), slice(None), np.array([1, 3]))),  # non-adjacent advanced
    ((3, 4, 5), (slice(None), np.array([[0, 1], [3, 3]]))),
    ((3, 4, 5), (1, slice(None), np.array([0, 2, 0]))),             # int and array, apart
    ((3, 4, 5), (np.array([True, False, True]), slice(None), 2)),    # mask and int, apart
    ((), (None,)),
]


def _segment_cases(name):
    """Segment reductions: distinct values (no ties), ids with a dropped (negative) row, an
    empty segment, and 2-D ids over the leading axes."""
    return [
        Case(prim_fn(name, num_segments=4), [R(6, 2), Const(np.array([0, 2, 0, -1, 2, 2]))],
             batch_fallback=True, label="1-D ids"),
        Case(prim_fn(name, num_segments=3), [R(2, 3), Const(np.array([[0, 1, 0], [2, 2, 1]]))],
             label="2-D ids"),
    ]


def _getitem_out_shape(shape, key):
    return np.empty(shape)[key].shape


def _spectral(name, complex_input, **params):
    """A Fourier primitive on ``complex(a, b)`` (or on ``a``), its result squared (the real
    and imaginary parts weighed apart)."""
    def fn(*xs):
        z = bind(PRIMITIVES[name], tf.complex(*xs) if complex_input else xs[0], **params)
        if z.dtype.kind == "c":
            z = tf.math.real(z) + 3.0 * tf.math.imag(z)
        return z * z
    return fn


SPECS = {
    # linear
    "neg": unary("neg") + [Case(prim_fn("neg"), [Int(-3, 4, 2, 3)], order=0, label="int")],
    "add": binary("add") + [Case(prim_fn("add"), [Int(-3, 4, 2, 3), Int(-3, 4, 3)], order=0,
                                 label="int")],
    "sub": binary("sub"),
    "read_variable": unary("read_variable"),
    # products, quotients, powers
    "mul": binary("mul"),
    "div": binary("div", R, Away),
    "pow": binary("pow", Pos, R) + [
        # d/dy x**y does not exist for x < 0, so the exponent is a constant here
        Case(lambda x: bind(p("pow"), x, tf.constant(3.0, dtype=x.dtype)), [R(2, 3)],
             label="negative base, constant exponent"),
    ],
    "atan2": binary("atan2", R, Away),
    "maximum": binary("maximum"),
    "minimum": binary("minimum"),
    "mod": binary("mod", R, Pos),
    # exponentials and logarithms
    "exp": unary("exp"),
    "log": unary("log", Pos),
    "log1p": unary("log1p", Pos) + [Case(prim_fn("log1p"), [Rng(-0.5, 0.5, 3)], label="small")],
    "expm1": unary("expm1"),
    "sqrt": unary("sqrt", Pos),
    "rsqrt": unary("rsqrt", Pos),
    "square": unary("square"),
    "one_minus_square": unary("one_minus_square"),
    "reciprocal": unary("reciprocal", Away),
    "sqrt_grad": binary("sqrt_grad", Pos, R),
    "rsqrt_grad": binary("rsqrt_grad", Pos, R),
    "reciprocal_grad": binary("reciprocal_grad", Away, R),
    # trigonometric and hyperbolic
    "sin": unary("sin"),
    "cos": unary("cos"),
    "tan": unary("tan", lambda *s: Rng(-1.2, 1.2, *s)),
    "asin": unary("asin", Unit),
    "acos": unary("acos", Unit),
    "atan": unary("atan"),
    "sinh": unary("sinh"),
    "cosh": unary("cosh"),
    "tanh": unary("tanh"),
    # activations
    "sigmoid": unary("sigmoid") + [Case(prim_fn("sigmoid"), [Rng(-30, 30, 5)], label="wide")],
    "softplus": unary("softplus") + [Case(prim_fn("softplus"), [Rng(-30, 30, 5)],
                                          label="wide")],
    "softsign": unary("softsign", Away),
    "relu": unary("relu", Away),
    "relu6": [Case(prim_fn("relu6"), [Rng(lo, hi, 2, 3)], label=f"{lo}..{hi}")
              for lo, hi in ((-3.0, -0.5), (0.5, 5.5), (6.5, 9.0))],
    "abs": unary("abs", Away),
    "erf": unary("erf"),
    # special functions (primitives/special.py)
    "asinh": unary("asinh"),
    "acosh": unary("acosh", lambda *s: Rng(1.2, 3.0, *s)),
    "atanh": unary("atanh", Unit),
    "erfc": unary("erfc"),
    "lgamma": unary("lgamma", Pos) + [Case(prim_fn("lgamma"), [Rng(-2.8, -2.2, 3)],
                                           label="negative")],
    "polygamma": [Case(prim_fn("polygamma", n=n), [Pos(2, 3)], label=f"n={n}")
                  for n in (0, 1, 2)] + [Case(prim_fn("polygamma", n=0), [Rng(-1.8, -1.2, 3)],
                                              label="negative")],
    # special_more.py: TensorFlow's rules (no derivative of zeta in x, of betainc in a and b,
    # none of igamma_grad_a: its second order raises, so igamma's cases in a are first order)
    "bessel_i0": unary("bessel_i0") + [Case(prim_fn("bessel_i0"), [Rng(15, 30, 3)],
                                            label="series and asymptotic")],
    "bessel_i0e": unary("bessel_i0e") + [Case(prim_fn("bessel_i0e"), [Rng(15, 30, 3)],
                                              label="series and asymptotic")],
    "bessel_i1": unary("bessel_i1"),
    "bessel_i1e": unary("bessel_i1e") + [Case(prim_fn("bessel_i1e"), [Rng(-30, -15, 3)],
                                              label="series and asymptotic")],
    "ndtri": unary("ndtri", lambda *s: Rng(0.02, 0.98, *s)),
    "igamma": binary("igamma", Pos, Pos, order=1) + [
        Case(lambda x: bind(p("igamma"), tf.constant(2.5, tf.float64), x), [Rng(0.5, 6, 3)],
             label="in x, order 2")],
    "igammac": binary("igammac", Pos, lambda *s: Rng(1.5, 4, *s), order=1) + [
        Case(lambda x: bind(p("igammac"), tf.constant(0.7, tf.float64), x), [Rng(0.5, 6, 3)],
             label="in x, order 2")],
    "igamma_grad_a": [Case(prim_fn("igamma_grad_a"), [Pos(3), Pos(3)], order=0, label="(3,)")],
    "zeta": [Case(lambda q: bind(p("zeta"), tf.constant(3.5, tf.float64), q), [Pos(3)],
                  label="in q"),
             Case(prim_fn("zeta"), [Rng(1.5, 4, 2, 3), Pos(3)], order=0, label="batched x")],
    "betainc": [Case(lambda x: bind(p("betainc"), tf.constant(0.7, tf.float64),
                                    tf.constant(1.5, tf.float64), x), [Rng(0.1, 0.9, 3)],
                     label="in x"),
                Case(prim_fn("betainc"), [Rng(0.5, 3, 3), Rng(0.5, 3, 3), Rng(0.1, 0.9, 3)],
                     order=0, label="batched a, b")],
    "mul_no_nan": binary("mul_no_nan", R, Away) + [
        Case(prim_fn("mul_no_nan"), [R(4), Const([0.0, 1.5, 0.0, -2.0])], label="zeros in y")],
    "cumprod": [Case(prim_fn("cumprod", axis=a), [R(3, 5)], label=f"axis={a}") for a in (0, 1)]
    + [Case(prim_fn("cumprod", axis=1),
            [Const([[0.0, 2.0, 3.0, 0.5], [1.5, 0.0, 0.0, 2.0], [1.5, 2.0, -1.0, 0.0]])],
            label="with zeros"),
       Case(prim_fn("cumprod", axis=0), [R(1)], label="one element"),
       Case(prim_fn("cumprod", axis=0), [Int(-3, 4, 5)], order=0, label="int")],
    "unsorted_segment_max": _segment_cases("unsorted_segment_max"),
    "unsorted_segment_min": _segment_cases("unsorted_segment_min"),
    "unsorted_segment_prod": _segment_cases("unsorted_segment_prod") + [
        Case(prim_fn("unsorted_segment_prod", num_segments=3),
             [Const([0.0, 2.0, 3.0, 0.0, 0.0, 1.5]), Const(np.array([0, 0, 1, 2, 2, 1]))],
             order=1, label="one and two zeros (TensorFlow's rule: first order only)")],
    # tensor_scatter_nd_max / _min (primitives/scatter_extremes.py): duplicate ids, rows
    **{name: [Case(prim_fn(name), [R(4, 2), Const(np.array([0, 2, 0])), R(3, 2)],
                   label="duplicate ids, rows"),
              Case(prim_fn(name), [R(3), Const(np.array([2])), R(1)], label="1-D")]
       for name in ("scatter_max", "scatter_min")},
    # complex parts on real inputs (complex values: tests/test_complex.py, against TF)
    "real": unary("real"), "imag": unary("imag"), "conj": unary("conj"),
    # Fourier transforms (primitives/fft.py): complex inputs made of two real ones, a
    # square after them so that the second derivatives are not all zero
    "fft": [Case(_spectral("fft", True, rank=r, inverse=inv), [R(*s), R(*s)],
                 label=f"{s} rank={r} inverse={inv}")
            for s, r, inv in [((5,), 1, False), ((2, 4), 1, True), ((3, 4), 2, False),
                              ((2, 3, 2), 2, True), ((2, 2, 3), 3, False)]],
    "rfft": [Case(_spectral("rfft", False, lengths=s[-r:]), [R(*s)], label=f"{s} rank={r}")
             for s, r in [((6,), 1), ((2, 5), 1), ((3, 4), 2), ((2, 3, 3), 2), ((1,), 1)]],
    "irfft": [Case(_spectral("irfft", True, lengths=n), [R(*s), R(*s)], label=f"{s} -> {n}")
              for s, n in [((4,), (6,)), ((2, 4), (7,)), ((3, 3), (3, 4)), ((2, 3), (2, 5)),
                           ((1,), (1,))]],
    # select
    "where": [
        Case(prim_fn("where"), [Bool(2, 3), R(2, 3), R(2, 3)], label="same shapes"),
        Case(prim_fn("where"), [Bool(3, 1), R(4), R()], label="(3,1) (4,) ()"),
        Case(prim_fn("where"), [Bool(), R(2, 3), R(2, 3)], label="scalar condition"),
        Case(prim_fn("where"), [Bool(3), R(2, 3), R(2, 1)], label="broadcast y"),
    ],
    # no gradient
    "sign": unary("sign", Away),
    "step": unary("step", Away),
    "leaky_relu": [Case(prim_fn("leaky_relu", alpha=0.2), [Away(*s)], label=str(s))
                   for s in UNARY_SHAPES],
    "leaky_relu_grad": [Case(prim_fn("leaky_relu_grad", alpha=0.3), [R(*a), Away(*b)],
                             label=f"{a}&{b}") for a, b in BINARY_SHAPES],
    "floor": nondiff_unary("floor"),
    "ceil": nondiff_unary("ceil"),
    "round": nondiff_unary("round"),
    "floordiv": nondiff_binary("floordiv", R, Away),
    "equal": nondiff_binary("equal", lambda *s: Int(0, 3, *s), lambda *s: Int(0, 3, *s)),
    "not_equal": nondiff_binary("not_equal", lambda *s: Int(0, 3, *s),
                                lambda *s: Int(0, 3, *s)),
    "less": nondiff_binary("less"),
    "less_equal": nondiff_binary("less_equal"),
    "greater": nondiff_binary("greater"),
    "greater_equal": nondiff_binary("greater_equal"),
    "logical_and": nondiff_binary("logical_and", Bool, Bool),
    "logical_or": nondiff_binary("logical_or", Bool, Bool),
    "logical_xor": nondiff_binary("logical_xor", Bool, Bool),
    "logical_not": nondiff_unary("logical_not", Bool),
    "bitwise_and": nondiff_binary("bitwise_and", lambda *s: Int(-4, 5, *s),
                                  lambda *s: Int(-4, 5, *s)),
    "bitwise_or": nondiff_binary("bitwise_or", lambda *s: Int(-4, 5, *s),
                                 lambda *s: Int(-4, 5, *s)),
    "bitwise_xor": nondiff_binary("bitwise_xor", lambda *s: Int(-4, 5, *s),
                                  lambda *s: Int(-4, 5, *s)),
    "invert": nondiff_unary("invert", lambda *s: Int(-4, 5, *s)),
    "isnan": [Case(prim_fn("isnan"), [Const([1.0, np.nan, np.inf, -np.inf])], order=0)],
    "isfinite": [Case(prim_fn("isfinite"), [Const([1.0, np.nan, np.inf, -np.inf])], order=0)],
    "stop_gradient": nondiff_unary("stop_gradient"),
    "argmax": [Case(prim_fn("argmax", axis=a, output_type=t), [R(3, 4)], order=0,
                    label=f"axis={a} {t}") for a in (0, 1) for t in ("int64", "int32")],
    "argmin": [Case(prim_fn("argmin", axis=a, output_type=t), [R(3, 4)], order=0,
                    label=f"axis={a} {t}") for a in (0, 1) for t in ("int64", "int32")],
    # reductions
    "reduce_sum": reduction("reduce_sum") + int_reduction("reduce_sum"),
    "reduce_max": reduction("reduce_max") + int_reduction("reduce_max"),
    "reduce_min": reduction("reduce_min") + int_reduction("reduce_min"),
    "reduce_prod": reduction("reduce_prod") + int_reduction("reduce_prod") + [
        Case(prim_fn("reduce_prod", axis=(1,), keepdims=False),
             [Const([[0.0, 2.0, 3.0], [0.0, 0.0, 2.0], [1.5, 2.0, -1.0]])],
             label="with zeros (one and two per row)"),
    ],
    "cumsum": [Case(prim_fn("cumsum", axis=a, exclusive=e, reverse=r), [R(3, 4)],
                    label=f"axis={a} exclusive={e} reverse={r}")
               for a in (0, 1) for e in (False, True) for r in (False, True)] + [
        Case(prim_fn("cumsum", axis=1, exclusive=False, reverse=False), [Int(-3, 4, 2, 3)],
             order=0, label="int")],
    # structure
    "reshape": [Case(prim_fn("reshape", shape=s), [R(*x)], label=f"{x}->{s}")
                for x, s in [((2, 3), (3, 2)), ((6,), (1, 2, 3)), ((), (1,)), ((2, 3), (6,))]],
    "broadcast_to": [Case(prim_fn("broadcast_to", shape=s), [R(*x)], label=f"{x}->{s}")
                     for x, s in [((3, 1), (2, 3, 4)), ((), (2, 2)), ((3,), (2, 3)),
                                  ((1,), (4,))]],
    "transpose": [Case(prim_fn("transpose", perm=pm), [R(*x)], label=f"{x} {pm}")
                  for x, pm in [((2, 3), (1, 0)), ((2, 3, 4), (2, 0, 1)),
                                ((2, 3, 4), (0, 2, 1))]],
    "cast": [Case(prim_fn("cast", dtype="float64"), [R(2, 3)], label="float64")],
    "getitem": [Case(prim_fn("getitem", index=Index(k)), [R(*s)], label=f"{s}[{Index(k)}]")
                for s, k in GETITEM_KEYS],
    "index_add": [Case(prim_fn("index_add", index=Index(k), shape=s),
                       [R(*_getitem_out_shape(s, k))], label=f"{s}[{Index(k)}]")
                  for s, k in GETITEM_KEYS],
    "take": [
        Case(prim_fn("take", axis=0), [R(5, 3), Int(0, 5, 4)], batch_fallback=True,
             label="axis 0"),
        Case(prim_fn("take", axis=1), [R(3, 5), Int(0, 5, 2, 3)], batch_fallback=True,
             label="axis 1, 2-D indices"),
        Case(prim_fn("take", axis=0), [R(4), Const(np.array([3, 3, 0]))], label="repeats"),
    ],
    "check_indices": [
        Case(prim_fn("check_indices", bound=(5,), what="gather"), [Int(0, 5, 4)], order=0,
             label="gather"),
        Case(prim_fn("check_indices", bound=(2,), what="segment"), [Int(-2, 2, 2, 3)],
             order=0, label="segment ids, negative ones dropped"),
        Case(prim_fn("check_indices", bound=(2, 3, 4), what="gather_nd"), [Int(0, 2, 3, 2)],
             order=0, label="gather_nd tuples"),
        Case(prim_fn("check_indices", bound=(2, 3), what="scatter_nd"), [Int(0, 2, 4, 2)],
             order=0, label="scatter_nd tuples"),
    ],
    "take_add": [
        Case(prim_fn("take_add", axis=0, size=5), [R(4, 3), Int(0, 5, 4)], batch_fallback=True,
             label="axis 0"),
        Case(prim_fn("take_add", axis=1, size=5), [R(3, 2, 3), Int(0, 5, 2, 3)],
             batch_fallback=True, label="axis 1, 2-D indices"),
    ],
    "concat": [
        Case(prim_fn("concat", axis=0), [R(2, 3), R(1, 3), R(4, 3)], label="axis 0"),
        Case(prim_fn("concat", axis=1), [R(2, 3), R(2, 1)], label="axis 1"),
    ],
    "pad": [
        Case(prim_fn("pad", paddings=((1, 0), (2, 1)), constant_values=0.0), [R(2, 3)],
             label="zeros"),
        Case(prim_fn("pad", paddings=((0, 2),), constant_values=1.5), [R(3)], label="1.5"),
    ],
    "diag_part": [Case(prim_fn("diag_part"), [R(*s)], label=str(s))
                  for s in [(3, 3), (2, 3, 4), (4, 2)]],
    # linear algebra
    "random_normal": [Case(prim_fn("random_normal", shape=(2, 3), dtype="float64", mean=1.0,
                                   stddev=2.0, seed=7), [], order=0, label="seeded")],
    "print": [Case(prim_fn("print", template=(("s", (120, 58)), ("t", 0)), summarize=3,
                           sep=(32,), end=(10,), stream="stdout"), [Const(np.int32(4)), R(3)],
                   order=0, batch_fallback=True, label="token and tensor")],
    "check": [Case(prim_fn("check", message=(109,), summarize=3),
                   [Const(np.int32(4)), Const(np.array([True, True])), R(3)],
                   order=0, batch_fallback=True, label="token, condition and data")],
    "random_uniform": [Case(prim_fn("random_uniform", shape=(4,), dtype="float32", minval=-1.0,
                                    maxval=1.0, seed=7), [], order=0, label="seeded")],
    "philox_random": [Case(prim_fn("philox_random", shape=(2, 3), dtype=dt, dist=dist,
                                   from_seed=src == 2, minval=lo, maxval=hi),
                           [Const(np.array([5, -3, 9][:src], np.int64))], order=0,
                           label=f"{dist} {dt} from {'seed' if src == 2 else 'state'}")
                      for dist, dt, lo, hi, src in [
                          ("uniform", "float32", None, None, 2),
                          ("normal", "float64", None, None, 3),
                          ("truncated_normal", "float16", None, None, 2),
                          ("uniform_int", "int32", -4, 9, 3),
                          ("full_int", "uint64", None, None, 2)]],
    "argsort": [Case(prim_fn("argsort", axis=ax, descending=d, stable=True), [R(3, 4)],
                     order=0, label=f"axis={ax} descending={d}")
                for ax in (0, 1) for d in (False, True)],
    "take_along_axis": [Case(prim_fn("take_along_axis", axis=ax),
                             [R(3, 4), Const(np.argsort(np.arange(12).reshape(3, 4) % 5,
                                                        axis=ax))], label=f"axis={ax}")
                        for ax in (0, 1)],
    "put_along_axis_add": [Case(prim_fn("put_along_axis_add", axis=1, shape=(3, 4)),
                                [R(3, 2), Const(np.array([[0, 3], [1, 1], [2, 0]]))],
                                label="repeats")],
    "integer_pow": [Case(prim_fn("integer_pow", y=n), [R(2, 3)], label=f"n={n}")
                    for n in (0, 1, 2, 3, -2)],
    "matmul": [Case(prim_fn("matmul"), [R(*a), R(*b)], label=f"{a}@{b}")
               for a, b in [((3, 4), (4, 2)), ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (5, 4, 2)),
                            ((3, 4), (2, 4, 5)), ((2, 3, 4), (2, 4, 1)), ((4,), (4, 3))]],
    "einsum": [Case(prim_fn("einsum", subscripts=eq), [R(*s) for s in shapes], label=eq)
               for eq, shapes in [
                   ("ij,jk->ik", [(2, 3), (3, 4)]),
                   ("bxby->bxy", [(2, 3, 2, 4)]),          # a letter repeated in one operand
                   ("ii->i", [(3, 3)]),
                   ("ii->", [(3, 3)]),
                   ("ij->", [(2, 3)]),
                   ("ij->j", [(2, 3)]),
                   ("i,i->", [(4,), (4,)]),
                   ("i,j->ij", [(2,), (3,)]),
                   ("ij->ji", [(2, 3)]),
                   ("bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]),
                   ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
                   ("iij,jk->ik", [(3, 3, 2), (2, 2)]),
               ]],
    "inv": [Case(prim_fn("inv"), [Mat(*s)], label=str(s)) for s in [(3, 3), (2, 3, 3), (1, 1)]],
    "det": [Case(prim_fn("det"), [Mat(*s)], label=str(s)) for s in [(3, 3), (2, 3, 3), (1, 1)]],
    "logabsdet": [Case(prim_fn("logabsdet"), [Mat(*s)], label=str(s))
                  for s in [(3, 3), (2, 3, 3)]] + [
        Case(prim_fn("logabsdet"), [Const([[0.0, 2.0], [1.5, 0.3]])], label="negative det")],
    "detsign": [Case(prim_fn("detsign"), [Mat(*s)], order=0, label=str(s))
                for s in [(3, 3), (2, 3, 3)]] + [
        Case(prim_fn("detsign"), [Const([[0.0, 2.0], [1.5, 0.3]])], order=0, label="-1")],
    "solve": [Case(prim_fn("solve"), [Mat(*a), R(*b)], label=f"{a} {b}")
              for a, b in [((3, 3), (3, 2)), ((2, 3, 3), (2, 3, 1)), ((3, 3), (2, 3, 2)),
                           ((2, 1, 3, 3), (4, 3, 1))]],
    # numpy reads the lower triangle only; symmetrising first makes every direction valid
    "cholesky": [Case(lambda a: bind(p("cholesky"), 0.5 * (a + tf.linalg.matrix_transpose(a))),
                      [Spd(*s)], label=str(s)) for s in [(3, 3), (2, 3, 3), (1, 1)]],
    "triangular_solve": [
        Case(prim_fn("triangular_solve", lower=lo, adjoint=adj), [Mat(*a), R(*b)],
             label=f"{a} {b} lower={lo} adjoint={adj}")
        for lo in (True, False) for adj in (False, True)
        for a, b in [((3, 3), (3, 2)), ((2, 3, 3), (3, 1))]],
    # decompositions (primitives/decompositions.py): packed outputs, lower triangle for eigh
    "eigh": [Case(prim_fn("eigh"), [Spread(*s)], label=str(s)) for s in [(3, 3), (2, 3, 3)]],
    "svd": [Case(prim_fn("svd", full_matrices=f), [Spread(*s)], label=f"{s} full={f}")
            for s, f in [((3, 3), False), ((3, 3), True), ((4, 2), False), ((2, 4), False),
                         ((2, 4, 3), False), ((4, 3), True), ((2, 3), True)]],
    "qr": [Case(prim_fn("qr", full_matrices=f), [Spread(*s)], label=f"{s} full={f}")
           for s, f in [((3, 3), False), ((4, 2), False), ((2, 4), False), ((2, 4), True),
                        ((2, 4, 3), False)]],
    "expm": [Case(prim_fn("expm"), [Rng(-1.0, 1.0, *s)], label=str(s))
             for s in [(3, 3), (2, 2, 2), (1, 1)]],
}

# Convolution and pooling (channels last, explicit padding): table over dimensions, strides,
# dilations, paddings and groups; each conv case also drives its two transposes.
CONV_GEOMETRIES = [  # (x shape, filter shape, strides, dilations, padding, groups)
    ((2, 7, 3), (3, 3, 2), (2,), (1,), ((1, 1),), 1),
    ((2, 5, 6, 2), (3, 2, 2, 3), (1, 1), (1, 1), ((0, 0), (0, 0)), 1),
    ((1, 6, 5, 2), (3, 3, 2, 2), (2, 1), (1, 2), ((1, 1), (2, 2)), 1),
    ((1, 5, 5, 4), (2, 2, 2, 4), (1, 2), (2, 1), ((0, 1), (1, 0)), 2),      # grouped
    ((2, 5, 4, 3), (3, 3, 1, 6), (1, 1), (1, 1), ((1, 1), (1, 1)), 3),      # depthwise
    ((1, 4, 3, 4, 2), (2, 2, 2, 2, 2), (2, 1, 1), (1, 1, 2), ((0, 1), (0, 0), (1, 1)), 1),
]


def _conv_cases():
    from tapegrad.primitives.conv import check_geometry
    cases = {"conv": [], "conv_input_grad": [], "conv_filter_grad": []}
    for xs, ws, st, dl, pd, g in CONV_GEOMETRIES:
        geo = dict(strides=st, dilations=dl, padding=pd, groups=g)
        d = len(st)
        out = check_geometry("conv", xs[1:-1], ws[:d], st, dl, pd)
        ys = (xs[0],) + out + (ws[-1],)
        label = f"{xs}*{ws} s={st} d={dl} p={pd} g={g}"
        cases["conv"].append(Case(prim_fn("conv", **geo), [R(*xs), R(*ws)], label=label))
        cases["conv_input_grad"].append(Case(
            prim_fn("conv_input_grad", input_spatial=xs[1:-1], **geo), [R(*ys), R(*ws)],
            label=label))
        cases["conv_filter_grad"].append(Case(
            prim_fn("conv_filter_grad", kernel_spatial=ws[:d], **geo), [R(*xs), R(*ys)],
            label=label))
    return cases


POOL_GEOMETRIES = [  # (x shape, window, strides, padding)
    ((2, 7, 3), (3,), (2,), ((1, 1),)),
    ((2, 5, 6, 2), (2, 2), (2, 2), ((0, 0), (0, 0))),
    ((1, 5, 5, 2), (3, 2), (2, 1), ((1, 1), (0, 1))),     # 'SAME'-like: partial windows
    ((1, 4, 3, 4, 2), (2, 2, 3), (2, 1, 2), ((0, 0), (0, 1), (1, 1))),
    ((1, 5, 4, 2), (2, 2), (2, 2), ((0, 1), (0, 0))),     # tiled, 'SAME': the tiled VJP path
    ((2, 7, 2), (3,), (3,), ((0, 2),)),
]


def _pool_cases():
    from tapegrad.primitives.conv import check_geometry
    names = ("avg_pool", "avg_pool_grad", "max_pool", "max_pool_gather", "max_pool_scatter")
    cases = {n: [] for n in names}
    for xs, win, st, pd in POOL_GEOMETRIES:
        geo = dict(window=win, strides=st, padding=pd)
        out = check_geometry("pool", xs[1:-1], win, st, (1,) * len(win), pd)
        ys = (xs[0],) + out + (xs[-1],)
        label = f"{xs} w={win} s={st} p={pd}"
        cases["avg_pool"].append(Case(prim_fn("avg_pool", **geo), [R(*xs)], label=label))
        cases["avg_pool_grad"].append(Case(prim_fn("avg_pool_grad", input_spatial=xs[1:-1],
                                                   **geo), [R(*ys)], label=label))
        cases["max_pool"].append(Case(prim_fn("max_pool", **geo), [R(*xs)], label=label))
        cases["max_pool_gather"].append(Case(prim_fn("max_pool_gather", **geo),
                                             [R(*xs), R(*xs)], label=label))
        cases["max_pool_scatter"].append(Case(prim_fn("max_pool_scatter", **geo),
                                              [R(*xs), R(*ys)], label=label))
    return cases


SPECS.update(_conv_cases())
SPECS.update(_pool_cases())

# Control flow: staged_* always build the primitive (plain cond/while_loop run eagerly).
from tapegrad.control_flow.ops import staged_cond, staged_while_loop  # noqa: E402

SPECS["cond"] = [Case(lambda p, x, w: staged_cond(p, lambda x, w: tf.sin(x) * w,
                                                  lambda x, w: tf.cos(x) + w, x, w),
                      [Bool(), R(3), R()], label="operands")]
SPECS["while_loop"] = [
    Case(lambda x: staged_while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tf.sin(y) * x),
                                     (0, x), maximum_iterations=4)[1], [R(3)], label="counted"),
    Case(lambda x: staged_while_loop(lambda y: tf.reduce_sum(y * y) < 4.0,
                                     lambda y: y * 1.5 + 0.1, x, maximum_iterations=8),
         [R(2)], label="until")]


def _cases(diff=None):
    """diff=True: cases to differentiate; diff=False: cases of nondifferentiable primitives."""
    out = []
    for name in sorted(SPECS):
        nondiff = name in PRIMITIVES and PRIMITIVES[name].nondiff
        for i, c in enumerate(SPECS[name]):
            if diff is True and c.order == 0:
                continue
            if diff is False and (c.order != 0 or not nondiff
                                  or not any(x.floating for x in c.args)):
                continue
            out.append(pytest.param(name, c, id=f"{name}-{i}-{c.label}"))
    return out


def _draw(case, seed):
    rng = np.random.RandomState(seed)
    return [a.draw(rng) for a in case.args]


def _need(name):
    if name not in PRIMITIVES:
        pytest.skip(f"primitive {name!r} is not registered")


# ---- the registry --------------------------------------------------------------------------
def test_registry_has_every_rule():
    missing = []
    for name, prim in sorted(PRIMITIVES.items()):
        need = ["impl", "abstract", "batch", "emit"]
        if not prim.nondiff:
            need += ["vjp", "jvp"]
        for rule in need:
            if getattr(prim, rule, None) is None:
                missing.append(f"{name}.{rule}")
        for rule in ("impl", "abstract", "batch"):
            r = getattr(prim, rule, None)
            if r is not None and not callable(r):
                missing.append(f"{name}.{rule} (not callable)")
        if not prim.nondiff:
            for rule in ("vjp", "jvp"):
                r = getattr(prim, rule)
                if isinstance(r, tuple):
                    if prim.nin is not None and len(r) != prim.nin:
                        missing.append(f"{name}.{rule} ({len(r)} rules for {prim.nin} inputs)")
                    if all(x is None for x in r):
                        missing.append(f"{name}.{rule} (every input rule is None)")
                elif not callable(r):
                    missing.append(f"{name}.{rule} (neither a tuple nor callable)")
        if prim.emit is not None and not isinstance(prim.emit, str):
            missing.append(f"{name}.emit (not a format string)")
        # params come from untrusted files too: each primitive with params checks them
        if param_names(prim) and not callable(getattr(prim, "validate", None)):
            missing.append(f"{name}.validate (it takes params {sorted(param_names(prim))})")
    assert not missing, "primitives lacking rules: " + ", ".join(missing)


def test_every_primitive_has_a_spec():
    unspecified = sorted(set(PRIMITIVES) - set(SPECS))
    assert not unspecified, (
        f"primitives without an entry in tests/test_primitives.py SPECS: {unspecified}")


def test_spec_table_covers_known_names():
    # Catch typos in the table: every spec names a registered primitive.
    stale = sorted(set(SPECS) - set(PRIMITIVES))
    assert not stale, f"SPECS entries for unknown primitives: {stale}"


def test_registering_a_duplicate_primitive_fails():
    from tapegrad.core.dispatch import Primitive
    with pytest.raises(ValueError, match="already registered"):
        Primitive("exp", np.exp, nin=1)


# ---- per case --------------------------------------------------------------------------------
class _Spy:
    """Wraps a primitive's ``impl`` to see the calls that reach it."""

    def __init__(self, prim):
        self.prim, self.calls = prim, []

    def __enter__(self):
        impl = self.impl = self.prim.impl

        def spy(*arrays, **params):
            out = impl(*arrays, **params)
            self.calls.append((arrays, params, out))
            return out
        self.prim.impl = spy
        return self

    def __exit__(self, *exc):
        self.prim.impl = self.impl


@pytest.mark.parametrize("name,case", _cases())
def test_case_applies_its_primitive_and_abstract_rule_agrees(name, case):
    _need(name)
    prim = p(name)
    args = [tf.constant(a) for a in _draw(case, 1)]
    with _Spy(prim) as spy:
        out = case.fn(*args)
    assert spy.calls, f"the {name} case never reached the {name} primitive"
    for arrays, params, result in spy.calls:
        avals = [np.broadcast_to(np.zeros((), np.asarray(a).dtype), np.shape(a)) for a in arrays]
        if prim.validate is not None:
            prim.validate(*avals, **params)  # the params of a real call are in the domain
        shape, dtype = prim.abstract(*avals, **params)
        result = np.asarray(result)
        assert tuple(shape) == result.shape, f"{name}.abstract shape {shape} != {result.shape}"
        assert np.dtype(dtype) == result.dtype, f"{name}.abstract dtype {dtype} != {result.dtype}"
    assert isinstance(out, tf.Tensor)


@pytest.mark.parametrize("name,case", _cases(diff=True))
def test_grads(name, case):
    _need(name)
    args = _draw(case, 2)
    check_grads(case.fn, args, modes=("fwd", "rev"), order=case.order, rtol=case.rtol,
                atol=case.atol)


@pytest.mark.parametrize("name,case", _cases(diff=False))
def test_nondiff_gives_no_gradient(name, case):
    _need(name)
    assert p(name).nondiff
    args = [tf.constant(a) for a in _draw(case, 3)]
    floats = [a for a in args if a.dtype.kind == "f"]
    tangents = [tf.ones_like(a) for a in floats]
    with tf.GradientTape(persistent=True) as tape, \
            tf.autodiff.ForwardAccumulator(floats, tangents) as acc:
        tape.watch(floats)
        out = case.fn(*args)
        if out.dtype.kind == "f":
            loss = tf.reduce_sum(out * 2.0)
    assert acc.jvp(out) is None
    if out.dtype.kind == "f":
        assert tape.gradient(loss, floats) == [None] * len(floats)


def _batch_flag_sets(case):
    batchable = [i for i, a in enumerate(case.args) if a.kind != "const"]
    n = len(case.args)
    sets = [tuple(i in batchable for i in range(n))]
    if len(batchable) > 1:
        for i in batchable:
            sets.append(tuple(j == i for j in range(n)))
    return [s for s in dict.fromkeys(sets) if any(s)]


def _batch_params():
    out = []
    for param in _cases():
        name, case = param.values
        if not case.batch:
            continue
        for flags in _batch_flag_sets(case):
            marks = ()
            if case.xfail_batch and flags in case.xfail_batch[1]:
                marks = pytest.mark.xfail(strict=True, reason=case.xfail_batch[0])
            out.append(pytest.param(name, case, flags, marks=marks,
                                    id=param.id + "-" + "".join("B" if f else "u" for f in flags)))
    return out


@pytest.mark.parametrize("name,case,flags", _batch_params())
def test_batching_matches_loop(name, case, flags):
    _need(name)
    rng = np.random.RandomState(4)
    args = [a.draw(rng, (BATCH,) if f else ()) for a, f in zip(case.args, flags)]
    with warnings.catch_warnings():
        if case.batch_fallback:  # the documented loop fallback warns; that is expected here
            warnings.simplefilter("ignore")
        check_batching(case.fn, args, batched=list(flags), rtol=1e-12, atol=1e-12,
                       fallback_ok=case.batch_fallback)


def test_batching_of_every_primitive_is_tested():
    tested = {name for name, c in ((n, c) for n in SPECS for c in SPECS[n]) if c.batch}
    missing = sorted(set(PRIMITIVES) - tested)
    assert not missing, f"primitives whose batching is never tested: {missing}"


def test_emit_formats_with_its_params():
    # The code generator substitutes argument names and params into ``emit``; every case's
    # params must fill the template (no unknown placeholders).
    bad = []
    for name, cases in SPECS.items():
        if name not in PRIMITIVES:
            continue
        prim = p(name)
        for case in cases:
            args = [tf.constant(a) for a in _draw(case, 5)]
            with _Spy(prim) as spy:
                case.fn(*args)
            for arrays, params, _ in spy.calls:
                names = [f"a{i}" for i in range(len(arrays))]
                try:
                    prim.emit.format(*names, args=", ".join(names), **params)
                except (KeyError, IndexError) as e:
                    bad.append(f"{name}: {e!r}")
    assert not bad, bad


# ---- a few properties that random inputs do not reach ---------------------------------------
def test_reduce_prod_gradient_with_zeros_is_exact():
    x = tf.constant([[0.0, 2.0, 3.0], [0.0, 0.0, 2.0], [1.5, 2.0, -1.0]], dtype=tf.float64)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reduce_prod(x, axis=1)
    g = t.gradient(y, x).numpy()
    np.testing.assert_allclose(g, [[6.0, 0.0, 0.0], [0.0, 0.0, 0.0], [-2.0, -1.5, 3.0]])


def test_reduce_max_ties_share_the_gradient():
    x = tf.constant([1.0, 3.0, 3.0, 2.0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reduce_max(x)
    np.testing.assert_allclose(t.gradient(y, x).numpy(), [0.0, 0.5, 0.5, 0.0])


def test_maximum_and_minimum_ties_send_the_gradient_to_x():
    x, y = tf.constant([1.0, 2.0]), tf.constant([1.0, 0.0])
    with tf.GradientTape(persistent=True) as t:
        t.watch([x, y])
        a = tf.maximum(x, y)
        b = tf.minimum(x, y)
    gx, gy = t.gradient(a, [x, y])
    np.testing.assert_array_equal(gx.numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(gy.numpy(), [0.0, 0.0])
    gx, gy = t.gradient(b, [x, y])
    np.testing.assert_array_equal(gx.numpy(), [1.0, 0.0])
    np.testing.assert_array_equal(gy.numpy(), [0.0, 1.0])


def test_relu_and_abs_gradient_at_zero_is_zero():
    x = tf.constant([0.0])
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        r, a = tf.nn.relu(x), tf.abs(x)
    assert t.gradient(r, x).numpy().tolist() == [0.0]
    assert t.gradient(a, x).numpy().tolist() == [0.0]


def test_pow_gradient_wrt_exponent_is_zero_for_nonpositive_base():
    x, y = tf.constant([-2.0, 0.0, 2.0]), tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch(y)
        z = tf.pow(x, y)
    g = t.gradient(z, y)
    np.testing.assert_allclose(float(g), 4.0 * np.log(2.0))


def test_pow_gradient_at_zero_base_is_finite():
    x = tf.constant([0.0, 1.0])
    with tf.GradientTape() as t:
        t.watch(x)
        z = x ** 2.0
    np.testing.assert_allclose(t.gradient(z, x).numpy(), [0.0, 2.0])


def _nested_derivatives(f, x0, n):
    """[f(x0), f'(x0), ..., f^(n)(x0)] through n nested tapes."""
    x = tf.constant(x0, dtype=tf.float64)

    def rec(k):
        if k == 0:
            return [f(x)]
        with tf.GradientTape() as t:
            t.watch(x)
            ds = rec(k - 1)
        return ds + [t.gradient(ds[-1], x, unconnected_gradients="zero")]
    return [float(d) for d in rec(n)]


@pytest.mark.parametrize("n,expect", [
    (0.0, [1.0, 0.0, 0.0, 0.0]),
    (1.0, [0.0, 1.0, 0.0, 0.0]),
    (2.0, [0.0, 0.0, 2.0, 0.0, 0.0]),
    (3.0, [0.0, 0.0, 0.0, 6.0, 0.0]),
])
def test_higher_derivatives_of_integer_powers_at_zero_are_exact(n, expect):
    # y x**(y-1) with x = 0 and y - 1 = 0 one order down must not become 0 * inf = nan
    got = _nested_derivatives(lambda x: x ** n, 0.0, len(expect) - 1)
    assert got == expect


def test_mixed_second_derivative_of_pow_at_zero_exponent():
    # d/dy d/dx x**y = x**(y-1) (1 + y log x) = 1/x at y = 0
    x, y = tf.constant(2.0, tf.float64), tf.constant(0.0, tf.float64)
    with tf.GradientTape() as t2:
        t2.watch([x, y])
        with tf.GradientTape() as t1:
            t1.watch([x, y])
            z = x ** y
        dx = t1.gradient(z, x)
    assert float(dx) == 0.0
    dxx, dxy = t2.gradient(dx, [x, y])
    assert float(dxx) == 0.0 and float(dxy) == 0.5


def test_sigmoid_and_softplus_are_stable_for_large_inputs():
    x = tf.constant([-1000.0, 1000.0])
    np.testing.assert_array_equal(tf.sigmoid(x).numpy(), [0.0, 1.0])
    np.testing.assert_array_equal(tf.nn.softplus(x).numpy(), [0.0, 1000.0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.sigmoid(x)
    g = t.gradient(y, x).numpy()
    assert np.all(np.isfinite(g)) and g.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_elementwise_primitives_keep_the_float_dtype(dtype):
    skip = {"where"}
    for name, prim in sorted(PRIMITIVES.items()):
        if name in skip or name not in SPECS or prim.nin != 1:
            continue
        case = SPECS[name][0]
        if not case.args[0].floating or case.args[0].shape != ():
            continue
        x = tf.constant(np.asarray(_draw(case, 6)[0], dtype=dtype))
        out = case.fn(x)
        if out.dtype.kind == "f":
            assert out.dtype == np.dtype(dtype), f"{name} turned {dtype} into {out.dtype}"


def test_batched_flag_combinations_are_all_tried():
    # The batching test must try each argument batched alone, not just all together.
    case = SPECS["add"][0]
    assert set(_batch_flag_sets(case)) == {(True, True), (True, False), (False, True)}


def test_every_primitive_states_its_facts():
    """The facts other layers read are attributes of the block, never name tables."""
    for name, prim in PRIMITIVES.items():
        for fact in ("fresh", "cacheable", "nondiff", "stateful"):
            assert isinstance(getattr(prim, fact), bool), f"{name}.{fact}"
    assert not PRIMITIVES["cond"].cacheable and not PRIMITIVES["while_loop"].cacheable


def test_fresh_primitives_return_new_arrays(monkeypatch):
    """A ``fresh`` primitive's output never shares memory with an input: the generated code
    (trace/codegen.py) writes into such outputs' buffers."""
    fresh = {n for n in SPECS if n in PRIMITIVES and PRIMITIVES[n].fresh}
    seen = set()
    for name in sorted(fresh):
        prim = PRIMITIVES[name]

        def spy(*arrays, _impl=prim.impl, _name=name, **params):
            out = _impl(*arrays, **params)
            for a in arrays:
                assert not np.shares_memory(out, a), f"{_name} returned a view of an input"
            seen.add(_name)
            return out
        monkeypatch.setattr(prim, "impl", spy)
        for case in SPECS[name]:
            case.fn(*[tf.constant(a) for a in _draw(case, 0)])
    assert seen == fresh
