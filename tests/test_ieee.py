"""IEEE semantics survive compilation: NaN, inf, -0.0 and subnormals give the same bits
eagerly, in a ``tf.function``, and in a saved-then-loaded program, values and gradients.

The algebraic rewrites (``ir/algebraic.py``) may only fold what is exact for every input;
these tests run the folds they must not make (``x * 0``, ``x - x``, ``x + 0.0``, ...) and
the ones they may (``x * 1``, ``x - 0.0``, ``x + -0.0``) on the values that tell them apart.
"""
import warnings

import numpy as np
import pytest

import tapegrad as tf

SPECIAL = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 5.0, -3.0, 1e-45, 3e38], np.float32)


def same_bits(a, b):
    """Equal values, NaN where NaN, and the same sign of every zero."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)
    assert (np.signbit(a) | np.isnan(a) == np.signbit(b) | np.isnan(b)).all(), (a, b)


def three_ways(fn, x, tmp_path):
    """``fn(x)`` eagerly, through ``tf.function``, and saved and loaded."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's "invalid value" notes
        eager = fn(x)
        compiled = tf.function(fn)(x)
        path = tmp_path / "f.tgz"
        tf.saved.save(tf.function(fn).get_concrete_function(x), path)
        loaded = tf.saved.load(path)(x)
    return [tf.nest.flatten(r) for r in (eager, compiled, loaded)]


FOLDS = {
    "x*0": lambda x: x * 0.0,
    "0*x": lambda x: 0.0 * x,
    "x*zeros": lambda x: x * tf.zeros_like(x),
    "x*-0": lambda x: x * -0.0,
    "x-x": lambda x: x - x,
    "x/x": lambda x: x / x,
    "x+0": lambda x: x + 0.0,
    "0+x": lambda x: 0.0 + x,
    "x+-0": lambda x: x + -0.0,
    "x-0": lambda x: x - 0.0,
    "x--0": lambda x: x - -0.0,
    "0-x": lambda x: 0.0 - x,
    "-0-x": lambda x: -0.0 - x,
    "x*1": lambda x: x * 1.0,
    "x/1": lambda x: x / 1.0,
    "x**0": lambda x: x ** 0.0,
    "x**1": lambda x: tf.pow(x, 1.0),
    "x**2": lambda x: tf.pow(x, 2.0),
    "ipow0": lambda x: x ** 0,
    "ipow2": lambda x: x ** 2,
    "c*(d*x)": lambda x: 3.0 * (x * 2.0),
    "2*(2*x)": lambda x: 2.0 * (x * 2.0),
    "0.5*(2*x)": lambda x: 0.5 * (x * 2.0),
    "-(c*x)": lambda x: -(x * 3.0),
    "sum-bcast": lambda x: tf.reduce_sum(tf.broadcast_to(x, [7, 9]), axis=0),
    "x*0+x": lambda x: x * 0.0 + x,
    "mask*0": lambda x: tf.cast(x > 0, tf.float32) * 0.0 * x,
    "where": lambda x: tf.where(tf.constant(True), x * 0.0, x),
    "issue": lambda x: x * 0.0 + 5.0,
}


@pytest.mark.parametrize("name", sorted(FOLDS))
def test_values_with_special_inputs_agree_bit_for_bit(name, tmp_path):
    eager, compiled, loaded = three_ways(FOLDS[name], tf.constant(SPECIAL), tmp_path)
    for a, b, c in zip(eager, compiled, loaded):
        same_bits(a.numpy(), b.numpy())
        same_bits(a.numpy(), c.numpy())


def test_the_issue_example_keeps_the_nan():
    x = tf.constant([np.nan, np.inf, 5.0])
    f = tf.function(lambda x: x * 0.0 + 5.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = f(x).numpy()
    assert np.isnan(out[:2]).all() and out[2] == 5.0


def _gradient_of(fn):
    def grad(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(fn(x))
        return t.gradient(y, x)
    return grad


@pytest.mark.parametrize("name", ["x*0", "x*zeros", "x-x", "x*0+x", "issue", "c*(d*x)"])
def test_gradients_with_special_inputs_agree(name, tmp_path):
    fn = FOLDS[name]
    grads = three_ways(_gradient_of(lambda x: fn(x) * x), tf.constant(SPECIAL), tmp_path)
    for a, b, c in zip(*grads):
        same_bits(a.numpy(), b.numpy())
        same_bits(a.numpy(), c.numpy())


def test_gradient_of_a_product_with_zero_keeps_the_nan():
    # d/dx sum(x * 0 * w) is 0 * w: NaN where w is NaN, in every mode
    w = tf.constant([np.nan, np.inf, 2.0])

    def f(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(x * 0.0 * w)
        return t.gradient(y, x)
    x = tf.constant([1.0, 1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        eager, compiled = f(x).numpy(), tf.function(f)(x).numpy()
    same_bits(eager, compiled)
    assert np.isnan(eager[:2]).all() and eager[2] == 0.0


def test_python_negative_zero_is_not_the_cached_positive_zero():
    x = tf.constant([-0.0])
    assert not np.signbit((x + 0.0).numpy()[0])
    assert np.signbit((x + -0.0).numpy()[0])     # -0.0 + -0.0 is -0.0
    assert not np.signbit((x + 0.0).numpy()[0])  # and the +0.0 constant is still +0.0


def test_integer_folds_still_apply():
    from tapegrad.trace.tracer import GraphBuilder, tracing
    from tapegrad.ir import optimize
    b = GraphBuilder("f")
    with tracing(b):
        x = b.add_input((3,), "int32", "x")
        p = b.build([(x * 0 + x * 1 - 0) * 1 + 0])
    assert optimize(p).equations == ()


@pytest.mark.parametrize("n", [2, 3, 5, -1])
def test_integer_powers_of_scalars_and_arrays_agree_bit_for_bit(n):
    """A 0-d result is a NumPy scalar, whose own ``**`` calls C's pow: (2y)**3 at this y was
    1.6366139e+20 in eager scalar code and 1.636614e+20 for arrays, vmap and tf.function."""
    y = np.float32(2.734967e6)
    xs = np.array([y, -y, np.float32(1.1), np.float32(3e-20)], np.float32)

    def f(a):
        return (a + a) ** n
    batched = f(tf.constant(xs)).numpy()
    mapped = tf.vmap(f)(tf.constant(xs)).numpy()
    compiled = tf.function(f)
    for k, v in enumerate(xs):
        eager = f(tf.constant(v)).numpy()
        assert eager.tobytes() == batched[k].tobytes() == mapped[k].tobytes()
        assert compiled(tf.constant(v)).numpy().tobytes() == eager.tobytes()


def test_numpy_float_zero_constants_keep_their_sign():
    # np.float64 subclasses float: its -0.0 once went into the constant cache under the key of
    # 0.0, so a later 1 / np.float64(0.0) gave -inf (and a gradient's sign depended on which
    # test ran first)
    x = tf.constant(1.0, tf.float64)
    with np.errstate(divide="ignore"):
        assert np.signbit((x * np.float64(-0.0)).numpy())
        assert (x / np.float64(0.0)).numpy() == np.inf
        assert (x / np.float64(-0.0)).numpy() == -np.inf
        assert (x / 0.0).numpy() == np.inf and (x / -0.0).numpy() == -np.inf


def test_a_trace_for_python_zero_is_not_reused_for_negative_zero():
    traces = []

    @tf.function
    def f(x, c):
        traces.append(c)
        return x / c

    x = tf.constant(1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        got = [float(f(x, c)) for c in (0.0, -0.0, 0.0, float("nan"), float("nan"))]
    assert got[:3] == [np.inf, -np.inf, np.inf] and np.isnan(got[3:]).all()
    assert len(traces) == 3  # 0.0, -0.0 and one NaN trace, reused for the second NaN


def test_common_subexpressions_with_zeros_of_other_signs_stay_apart():
    @tf.function
    def f(x):
        a = tf.pad(x, [[1, 0]], constant_values=0.0)
        b = tf.pad(x, [[1, 0]], constant_values=-0.0)
        return 1 / a, 1 / b

    with np.errstate(divide="ignore"):
        a, b = f(tf.constant([2.0]))
    assert a.numpy().tolist() == [np.inf, 0.5] and b.numpy().tolist() == [-np.inf, 0.5]


def test_tape_structure_keys_zeros_of_other_signs_apart():
    from tapegrad.tape.structure import structure

    x = tf.constant([1.0])
    keys = []
    for c in (0.0, -0.0, 0.0):
        with tf.GradientTape() as g:
            g.watch(x)
            tf.pad(x, [[1, 0]], constant_values=c)
        keys.append(structure(g._entries, len(g._entries))[0])
    assert keys[0] != keys[1] and keys[0] == keys[2]


def test_numpy_scalar_keys_tell_zeros_of_other_signs_apart():
    from tapegrad.util.keys import exact

    assert exact(np.float64(0.0)) != exact(np.float64(-0.0))
    assert exact(np.float32(-0.0)) != exact(np.float32(0.0))
    assert exact(np.float64(np.nan)) == exact(np.float64(np.nan))
