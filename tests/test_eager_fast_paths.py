"""The fixed costs of small eager programs, cut without changing a number: one recorded read
per unchanged variable and tape, the unit cotangent that derivative products skip
(``primitives/api.py: times``), and compiled passes of repeated tapes from one entry on
(``compile/derivative_cache.py: MIN_ENTRIES``). Each is compared with the plain interpreter
(derivative cache off, a cotangent of ones that is not the shared unit) bit for bit, NaN, inf and -0.0
included.
"""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.compile import derivative_cache
from tapegrad.primitives import api

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN and inf on purpose
SPECIAL = [2.0, -0.0, 0.0, np.inf, -np.inf, np.nan, 1e-40, -3.5, 1e30]


@pytest.fixture
def cache():
    derivative_cache.clear()
    tf.config.set_derivative_cache(True)
    yield
    tf.config.set_derivative_cache(True)
    derivative_cache.clear()


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))


def _written(x, og=None):
    """The lesson as written: nested tapes, ``x * x * x`` of a Variable."""
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = x * x * x
        dy = t1.gradient(y, x, output_gradients=og)
    return dy, t2.gradient(dy, x)


def test_a_variable_is_read_once_per_tape_while_unchanged():
    x = tf.Variable(2.0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = x * x * x
        assert [e[0].name for e in t1._entries] == ["read_variable", "mul", "mul"]
        assert [e[0].name for e in t2._entries] == ["read_variable", "mul", "mul"]
        dy = t1.gradient(y, x)
    assert float(dy) == 12.0 and float(t2.gradient(dy, x)) == 12.0


def test_an_assignment_between_uses_gives_a_fresh_read():
    x = tf.Variable(2.0)
    with tf.GradientTape() as t:
        a = x * x        # reads 2
        x.assign(3.0)
        b = a * x        # reads 3: a new snapshot, recorded again
    assert [e[0].name for e in t._entries].count("read_variable") == 2
    # the gradient sums over the reads: d(x0^2 x1)/dx0 + d(x0^2 x1)/dx1 = 2*2*3 + 4
    assert float(b) == 12.0 and float(t.gradient(b, x)) == 16.0
    with tf.GradientTape() as t:
        a = x * x
        x.assign_add(1.0)
        s = a + x * x
    assert float(t.gradient(s, x)) == 2 * 3.0 + 2 * 4.0


def test_a_watch_between_reads_is_seen():
    x = tf.Variable(2.0)
    with tf.GradientTape(watch_accessed_variables=False) as t:
        a = x * x     # not watched: not recorded
        t.watch(x)
        b = a * x     # watched now: this read is recorded
    assert float(t.gradient(b, x)) == 4.0


def test_unit_cotangent_products_are_the_operand_itself():
    one = api.unit(np.dtype(np.float32))
    y = tf.constant(3.0)
    assert api.times(one, y) is y
    assert api.times(one._value, y._value) is y._value  # the pass on arrays
    # anything else multiplies
    for g, v in [(tf.constant(1.0), y), (one, tf.constant(3.0, tf.float64)),
                 (one, tf.constant([1.0, 2.0])), (tf.constant(2.0), y)]:
        got = api.times(g, v)
        assert got is not v
        _same(got.numpy(), (g._value * v._value))


@pytest.mark.parametrize("value", SPECIAL)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nested_tapes_equal_the_plain_interpreter(cache, value, dtype):
    x = tf.Variable(np.asarray(value, dtype))
    runs = [_written(x) for _ in range(5)]  # the later ones replay the compiled pass
    assert derivative_cache.hits() > 0
    tf.config.set_derivative_cache(False)
    plain = _written(x, og=tf.constant(np.ones((), dtype)))  # no unit either
    for dy, d2y in runs:
        _same(dy.numpy(), plain[0].numpy())
        _same(d2y.numpy(), plain[1].numpy())


@pytest.mark.parametrize("value", SPECIAL)
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_scalar_snapshots_and_unit_compute_what_0d_arrays_compute(cache, value, dtype):
    # a 0-d variable's snapshot and the unit cotangent hold NumPy scalars (scalar arithmetic
    # skips the ufunc machinery); the same program on 0-d arrays gives the same bits
    x = tf.Variable(np.asarray(value, dtype))
    assert type(x.read_value()._value) is np.dtype(dtype).type
    assert type(api.unit(np.dtype(dtype))._value) is np.dtype(dtype).type
    runs = [_written(x) for _ in range(4)]
    c = tf.constant(np.asarray(value, dtype))
    assert type(c._value) is np.ndarray and c._value.ndim == 0
    tf.config.set_derivative_cache(False)
    with tf.GradientTape() as t2:
        t2.watch(c)
        with tf.GradientTape() as t1:
            t1.watch(c)
            y = c * c * c
        dy = t1.gradient(y, c, output_gradients=tf.constant(np.ones((), dtype)))
    d2y = t2.gradient(dy, c)
    for got_dy, got_d2y in runs:
        _same(got_dy.numpy(), dy.numpy())
        _same(got_d2y.numpy(), d2y.numpy())


@pytest.mark.parametrize("n_ops", [0, 1, 2])  # both sides of MIN_ENTRIES = 1
def test_the_shortest_tapes_compile_and_equal_the_interpreter(cache, n_ops):
    assert derivative_cache.MIN_ENTRIES == 1
    x = tf.constant(np.array(SPECIAL, np.float32))

    def grad(x, **kw):
        with tf.GradientTape() as t:
            t.watch(x)
            y = x
            for _ in range(n_ops - 1):
                y = tf.sin(y)
            if n_ops:
                y = tf.reduce_sum(y)
        return t.gradient(y, x, **kw)

    got = [grad(x) for _ in range(4)]
    assert derivative_cache.hits() == (2 if n_ops else 0)  # the 3rd and 4th: compiled
    tf.config.set_derivative_cache(False)
    want = grad(x)
    for g in got:
        _same(g.numpy(), want.numpy())
    # and on new values, with the structure compiled
    tf.config.set_derivative_cache(True)
    x2 = tf.constant(np.array(SPECIAL[::-1], np.float32))
    fast = grad(x2)
    tf.config.set_derivative_cache(False)
    _same(fast.numpy(), grad(x2).numpy())


def test_lesson_x_cubed_equals_the_plain_interpreter(cache):
    def cubed(c, og=None):
        with tf.GradientTape() as outer:
            outer.watch(c)
            with tf.GradientTape() as inner:
                inner.watch(c)
                y = c ** 3
            dy = inner.gradient(y, c, output_gradients=og)
        return dy, outer.gradient(dy, c)

    for v in SPECIAL:
        c = tf.constant(v)
        runs = [cubed(c) for _ in range(4)]
        tf.config.set_derivative_cache(False)
        plain = cubed(c, tf.constant(1.0))
        tf.config.set_derivative_cache(True)
        for dy, d2y in runs:
            _same(dy.numpy(), plain[0].numpy())
            _same(d2y.numpy(), plain[1].numpy())


def test_a_target_that_is_its_own_source_gets_a_tensor_of_its_own():
    x = tf.constant(2.0)
    for outer in (False, True):  # on arrays, and on tensors (an outer tape records)
        with tf.GradientTape() as t0:
            t0.watch(x)
            with tf.GradientTape() as t:
                t.watch(x)
                y = x * 1.0
            g = t.gradient(y, y) if not outer else t.gradient(y, [y, x])[0]
        assert float(g) == 1.0 and not api.is_unit(g)
        with tf.GradientTape() as t2:  # watched by the user, it is an ordinary tensor
            t2.watch(g)
            z = g * x
        assert float(t2.gradient(z, g)) == 2.0


def test_integer_powers_under_the_unit_equal_the_plain_interpreter():
    for n in (0, 1, 2, 3, 5, -2):
        for v in SPECIAL:
            x = tf.constant(v)
            with tf.GradientTape() as t2:
                t2.watch(x)
                with tf.GradientTape() as t1:
                    t1.watch(x)
                    y = x ** n
                fast = t1.gradient(y, x)
            with tf.GradientTape() as t4:
                t4.watch(x)
                with tf.GradientTape() as t3:
                    t3.watch(x)
                    y = x ** n
                plain = t3.gradient(y, x, output_gradients=tf.constant(1.0))
            _same(fast.numpy(), plain.numpy())
            f2, p2 = t2.gradient(fast, x), t4.gradient(plain, x)
            assert (f2 is None) == (p2 is None)
            if f2 is not None:
                _same(f2.numpy(), p2.numpy())


def test_a_layer_checks_its_input_again_after_a_change():
    # the input spec remembers the last shape and dtype it accepted: anything else, or a
    # changed spec, is checked in full (Keras's messages)
    layer = tf.keras.layers.Dense(3)
    layer(tf.zeros([2, 4]))
    layer(tf.zeros([2, 4]))  # accepted again
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 4"):
        layer(tf.zeros([2, 5]))
    with pytest.raises(ValueError, match="min_ndim=2"):
        layer(tf.zeros([4]))
    layer(tf.zeros([2, 4]))
    layer.input_spec.axes[-1] = 7  # changed in place
    with pytest.raises(ValueError, match="to have value 7"):
        layer(tf.zeros([2, 4]))
    layer.input_spec.axes[-1] = 4
    layer(tf.zeros([2, 4]))
    layer.input_spec.min_ndim = 3  # changed by assignment
    with pytest.raises(ValueError, match="min_ndim=3"):
        layer(tf.zeros([2, 4]))


def test_fused_optimizer_views_of_one_dimensional_variables():
    vs = [tf.Variable(np.arange(3.0, dtype=np.float32)), tf.Variable(np.ones((2, 2), np.float32)),
          tf.Variable(np.zeros(1, np.float32))]
    opt = tf.keras.optimizers.Adam(0.1)
    for _ in range(2):
        opt.apply_gradients(zip([tf.ones_like(v) for v in vs], vs))
    for v, shape in zip(vs, [(3,), (2, 2), (1,)]):
        assert v.numpy().shape == shape
    # the same numbers as one variable at a time (no fusion: a single variable is alone)
    ref = [tf.Variable(v0) for v0 in (np.arange(3.0, dtype=np.float32),
                                       np.ones((2, 2), np.float32), np.zeros(1, np.float32))]
    for r, v in zip(ref, vs):
        o = tf.keras.optimizers.Adam(0.1)
        for _ in range(2):
            o.apply_gradients([(tf.ones_like(r), r)])
        _same(r.numpy(), v.numpy())


def test_variables_read_alternately_are_each_read_once():
    x, y = tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape() as t:
        a = x * y
        b = a * x * y   # both snapshots still current: no new reads
    assert [e[0].name for e in t._entries].count("read_variable") == 2
    gx, gy = t.gradient(b, [x, y])  # b = x^2 y^2
    assert float(gx) == 2 * 2.0 * 9.0 and float(gy) == 2 * 4.0 * 3.0
    with tf.GradientTape(watch_accessed_variables=False) as t:
        t.watch(y)
        a = x * y     # x not watched
        t.watch(x)    # from here on, x's reads are recorded
        b = a * x
    gx, gy = t.gradient(b, [x, y])  # only the second read of x is seen
    assert float(gx) == 2.0 * 3.0 and float(gy) == 4.0
