"""Generated code computes the interpreter's exact bits: the sign bit and payload of every
NaN too, not only NaN where NaN (``tapegrad.testing.assert_identical_bits``).

Arithmetic keeps a NaN operand's sign bit (x86, NumPy's loops) and negation flips it, so
rewrites that are exact for every number can still differ on NaN: ``c * (-x)`` as
``(-c) * x`` gave ``+nan`` where the interpreter gave ``-nan`` (``-(g) * 2`` in a PINN's
derivative code, found in session 8). Random small programs (the steps of
``test_properties.py``, with NaN, inf and signed-zero constants) run four ways: eagerly, by
the IR interpreter on the traced and on the optimised program, and as ``tf.function``'s
generated code; their gradients eagerly, compiled, and by the derivative cache.

Where two NaNs meet in one operation (``nan * -nan``, a sum over two NaNs) the result's sign
is NumPy's choice, and NumPy itself chooses differently for scalars and arrays (``a * b``
keeps ``b``'s NaN for NumPy scalars, ``a``'s for arrays), so neither the interpreter nor the
generated code has one right answer there (README, "Differences from TensorFlow"). The
eager run watches every primitive for that (``_nan_meetings``); such a program is held
to ``assert_same_bits`` (NaN where NaN, the sign of every zero), every other one to every bit.
"""
import warnings

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

import tapegrad as tf  # noqa: E402
from tapegrad.core.dispatch import PRIMITIVES  # noqa: E402
from tapegrad.core.tensor import Tensor  # noqa: E402
from tapegrad.ir import check, evaluate, optimize  # noqa: E402
from tapegrad.testing import assert_identical_bits, assert_same_bits  # noqa: E402
from tapegrad.trace.tracer import GraphBuilder, tracing  # noqa: E402
from test_properties import BINARY, UNARY, run  # noqa: E402

SETTINGS = settings(max_examples=80, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

NAN = float("nan")
CONSTS = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, NAN, -NAN, np.inf, -np.inf]
SPECIAL = [NAN, -NAN, np.inf, -np.inf, 0.0, -0.0, 1.0, -2.5, 5e-324, 1e-45, 3e38]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


@st.composite
def programs(draw):
    """Steps as in ``test_properties.programs``; negation drawn often, constants special."""
    steps = []
    for k in range(draw(st.integers(1, 6))):
        avail = 2 + k
        kind = draw(st.sampled_from(["neg", "u", "b", "b"]))
        if kind != "b":
            op = "neg" if kind == "neg" else draw(st.sampled_from(sorted(UNARY)))
            steps.append(("u", op, draw(st.integers(0, avail - 1))))
        else:
            op = draw(st.sampled_from(sorted(BINARY)))
            i = draw(st.integers(0, avail - 1))
            other = draw(st.one_of(st.integers(0, avail - 1),
                                   st.sampled_from(CONSTS).map(lambda c: ("c", c))))
            steps.append(("b", op, i, other, draw(st.booleans())))
    return steps


@st.composite
def inputs(draw):
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    shape = draw(st.sampled_from([(), (4,), (2, 3)]))
    elems = st.one_of(st.sampled_from(SPECIAL),
                      st.floats(width=32 if dtype == np.float32 else 64))
    return tuple(draw(hnp.arrays(dtype, shape, elements=elems)) for _ in range(2))


class _nan_meetings:
    """Counts, while active, the operations that combine two NaNs: an elementwise primitive
    with NaN in two operands at one position, or any other arithmetic (a reduction, a
    product) over two NaNs. Copies and selections (reshape, where) never combine."""

    COPIES = {"where", "reshape", "broadcast_to", "transpose", "getitem", "concat", "stack",
              "cast", "pad", "squeeze", "expand_dims", "tile", "gather", "stop_gradient"}

    def __enter__(self):
        self.count, self._old = 0, {}
        for name, p in PRIMITIVES.items():
            if name not in self.COPIES:
                self._old[name] = p.impl
                p.impl = self._watch(p, p.impl)
        return self

    def __exit__(self, *exc):
        for name, impl in self._old.items():
            PRIMITIVES[name].impl = impl

    def _watch(self, p, impl):
        def watched(*args, **params):
            nans = [np.isnan(a) for a in args
                    if isinstance(a, (np.ndarray, np.generic)) and np.asarray(a).dtype.kind in "fc"]
            if p.elementwise and len(nans) > 1:
                try:
                    both = sum(np.broadcast_arrays(*[n.astype(np.int8) for n in nans])) > 1
                except ValueError:
                    both = np.array(True)
                self.count += bool(np.any(both))
            elif not p.elementwise and sum(int(np.sum(n)) for n in nans) > 1:
                self.count += 1
            return impl(*args, **params)
        return watched


def identical(a, b, what, meetings):
    (assert_same_bits if meetings else assert_identical_bits)(a, b, what)


def _traced(f, x, y):
    b = GraphBuilder("f")
    with tracing(b):
        xs = [b.add_input(v.shape, v.dtype, f"x{k}") for k, v in enumerate((x, y))]
        return check(b.build([f(*xs)]))


def _interpret(program, x, y):
    return evaluate(program, [Tensor._wrap(x), Tensor._wrap(y)])[0][0].numpy()


@SETTINGS
@given(programs(), inputs())
def test_generated_code_and_rewrites_keep_the_interpreters_bits(steps, xy):
    x, y = xy

    def f(a, b):
        return run(steps, a, b, lib="tf")
    with _nan_meetings() as m:
        eager = f(tf.constant(x), tf.constant(y)).numpy()
    program = _traced(f, x, y)
    identical(eager, _interpret(program, x, y), "IR interpreter, traced program", m.count)
    identical(eager, _interpret(optimize(program, check=True), x, y),
              "IR interpreter, optimised program", m.count)
    identical(eager, tf.function(f)(tf.constant(x), tf.constant(y)).numpy(), "tf.function",
              m.count)


def _gradient(steps, x, y):
    with tf.GradientTape() as t:
        t.watch([x, y])
        out = tf.reduce_sum(run(steps, x, y, lib="tf"))
    return [tf.zeros_like(x) if g is None else g for g in t.gradient(out, [x, y])]


@SETTINGS
@given(programs(), inputs())
def test_compiled_gradients_keep_the_eager_bits(steps, xy):
    x, y = (tf.constant(v) for v in xy)
    tf.config.set_derivative_cache(False)
    try:
        with _nan_meetings() as m:
            plain = [g.numpy() for g in _gradient(steps, x, y)]
    finally:
        tf.config.set_derivative_cache(True)
    compiled = tf.function(lambda a, b: tf.stack(_gradient(steps, a, b)))(x, y).numpy()
    from tapegrad.compile import derivative_cache
    low = derivative_cache.MIN_ENTRIES
    derivative_cache.MIN_ENTRIES = 1  # every tape, however short, gets a compiled pass
    try:
        cached = [[g.numpy() for g in _gradient(steps, x, y)] for _ in range(4)][-1]
    finally:
        derivative_cache.MIN_ENTRIES = low
    for k in range(2):
        identical(plain[k], compiled[k], "tf.function gradient", m.count)
        identical(plain[k], cached[k], "derivative cache", m.count)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,fn", [
    ("-(g)*2", lambda g: -g * 2.0), ("2*-(g)", lambda g: 2.0 * -g),
    ("-(g*2)", lambda g: -(g * 2.0)), ("-(2*g)", lambda g: -(2.0 * g)),
    ("-0-g", lambda g: -0.0 - g), ("--g", lambda g: tf.negative(-g)), ("-(g)*-3", lambda g: -g * -3.0),
])
def test_negation_folds_keep_the_sign_of_nan(name, fn, dtype):
    # pinn8's case: -(g) * 2 was generated as g * (-2), +nan where the interpreter has -nan
    g = tf.constant(np.array([NAN, -NAN, -0.0, 0.0, np.inf, -np.inf, 1.5], dtype))
    assert_identical_bits(fn(g).numpy(), tf.function(fn)(g).numpy(), name)


def test_integer_negation_folds_still_apply():
    # exact in integers (wrapping included): -(x) * 2 is one multiply by -2
    x = np.array([3, -4, np.iinfo(np.int32).min], np.int32)
    program = optimize(_traced(lambda a, b: -a * 2, x, x))
    assert [e.prim.name for e in program.equations] == ["mul"]
    assert_identical_bits(np.asarray(-x * 2), _interpret(program, x, x))


def test_the_watch_tells_nans_that_meet_from_one_that_passes():
    x = tf.constant(np.array([NAN, 1.0]))
    with _nan_meetings() as m:
        _ = -x * 2.0 + 1.0
    assert m.count == 0
    with _nan_meetings() as m:
        _ = x * -x
    assert m.count == 1
