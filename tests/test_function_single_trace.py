"""``None`` dimensions are traced once, with symbolic sizes (trace/symbolic.py): the Python
body runs once and the program is rebuilt for every later size, or traced again where it
might not hold."""
import numpy as np
import pytest

import tapegrad as tf
from test_template import _counting

RNG = np.random.default_rng(1)
SIZES = (5, 2, 7, 1, 0, 11)


def _sig(*shape):
    return [tf.TensorSpec(list(shape), tf.float64)]


def _check(f, fn, sizes, tail=(3,), rtol=1e-12):
    for n in sizes:
        x = tf.constant(RNG.standard_normal((n,) + tail))
        got, want = f(x), fn(x)
        for g, w in zip(tf.nest.flatten(got), tf.nest.flatten(want)):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=rtol, atol=1e-13)


def test_elementwise_matmul_reshape_trace_once_for_every_size():
    w = tf.constant(RNG.standard_normal((3, 4)))

    def fn(x):
        h = tf.tanh(tf.matmul(x, w)) * 2.0 + 1.0
        return tf.reshape(h, [-1]), tf.reshape(h, [x.shape[0], 2, 2]), tf.reduce_sum(h, 0)
    f, calls = _counting(fn, input_signature=_sig(None, 3))
    _check(f, fn, SIZES)
    assert f.trace_count == 1 and len(calls) == 1


def test_side_effects_run_once():
    seen = []

    @tf.function(input_signature=_sig(None, 3))
    def f(x):
        seen.append(tuple(x.shape))
        print("tracing")
        return x * 2.0
    for n in (4, 6, 3):
        np.testing.assert_allclose(f(tf.constant(np.ones((n, 3)))).numpy(), 2 * np.ones((n, 3)))
    assert seen == [(4, 3)] and f.trace_count == 1


def test_size_dependent_constants_are_staged():
    def fn(x):
        return (tf.reduce_mean(x, axis=0), x / tf.cast(tf.shape(x)[0], x.dtype),
                tf.reduce_mean(x), x - tf.ones([x.shape[0], 1], x.dtype) * tf.cast(tf.size(x),
                                                                                     x.dtype))
    f, calls = _counting(fn, input_signature=_sig(None, 3))
    with np.errstate(invalid="ignore", divide="ignore"):
        _check(f, fn, [n for n in SIZES if n])
        assert len(calls) == 1
        # the mean of nothing is TensorFlow's +nan, not 0 / 0 (-nan): a guard on the count,
        # so size 0 traces once more
        _check(f, fn, [0, 0])
    assert len(calls) == 2
    assert not np.signbit(f(tf.zeros([0, 3], tf.float64))[0].numpy()).any()


def test_gradients_inside_trace_once():
    w = tf.Variable(RNG.standard_normal((3, 2)))

    def fn(x):
        with tf.GradientTape() as g:
            g.watch(x)
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w)))
        return g.gradient(loss, [x, w])
    f, calls = _counting(fn, input_signature=_sig(None, 3))
    _check(f, fn, (5, 2, 8, 3))
    assert len(calls) == 1


def test_batch_jacobian_over_a_none_batch_traces_once():
    # the user's question: Jacobians of a network for batches of any size
    w1 = tf.constant(RNG.standard_normal((4, 16)))
    w2 = tf.constant(RNG.standard_normal((16, 3)))

    def fn(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = tf.matmul(tf.tanh(tf.matmul(x, w1)), w2)
        return g.batch_jacobian(y, x)
    f, calls = _counting(fn, input_signature=_sig(None, 4))
    _check(f, fn, (6, 2, 9, 1), tail=(4,), rtol=1e-10)
    assert len(calls) == 1


def test_a_zero_batch_jacobian_is_traced_for_its_own_branch():
    # batch_jacobian takes another Python branch for an empty batch: the guard retraces
    def fn(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = tf.sin(x)
        return g.batch_jacobian(y, x)
    f, calls = _counting(fn, input_signature=_sig(None, 2))
    _check(f, fn, (3, 0, 4), tail=(2,))
    assert len(calls) == 2


def test_vmap_inside():
    def fn(x):
        return tf.vmap(lambda r: tf.reduce_sum(r * r) * r)(x)
    f, calls = _counting(fn, input_signature=_sig(None, 3))
    _check(f, fn, (4, 2, 7))
    assert len(calls) == 1


def test_reduce_retracing_traces_twice_then_reuses():
    def fn(x):
        return tf.reduce_mean(x, axis=0) + tf.reshape(x, [-1])[:3]
    f, calls = _counting(fn, reduce_retracing=True)
    _check(f, fn, (3, 5, 8, 4, 12))
    assert f.trace_count == 2 and len(calls) == 2


def test_python_branch_on_the_size_retraces():
    def fn(x):
        if x.shape[0] > 4:
            return x * 2.0
        return x - 1.0
    f, calls = _counting(fn, input_signature=_sig(None, 3))
    _check(f, fn, (6, 8, 2, 3, 9))
    assert len(calls) == 2  # one trace per side of the branch


def test_a_size_read_by_numpy_is_not_reused():
    # np.full reads the size without asking the SymInt: the constant shows it, so the
    # program is bound to that size and other sizes are traced
    def fn(x):
        return x + tf.constant(np.full((x.shape[0], 1), 2.0))
    f, calls = _counting(fn, input_signature=_sig(None, 3))
    _check(f, fn, (5, 7, 5))
    assert len(calls) == 2


@pytest.mark.parametrize("scale", [
    lambda n: np.sqrt(n), lambda n: np.log(n) + 1.0, lambda n: np.float64(3.0) / np.sqrt(n),
    lambda n: 2.0 / n, lambda n: n ** 0.5, lambda n: float(n) - 0.5,
    lambda n: np.int64(n) * 2, lambda n: np.asarray([n, 1]).astype(np.float64)[:1],
    lambda n: int(np.int64(n) * 3), lambda n: int(np.int64(n) * 300)])
def test_a_value_computed_from_the_size_is_not_reused(scale):
    # non-linear functions of the size (a NumPy ufunc, a float division, a power) must not
    # be baked in for other sizes: each size gets its own trace, and the right number
    def fn(x):
        return x * scale(x.shape[0])
    f, calls = _counting(fn, input_signature=_sig(None, 3))
    _check(f, fn, (5, 7, 5))
    assert len(calls) == 2


def test_a_python_loop_over_the_size_is_not_reused():
    def fn(x):
        total = x[0] * 0.0
        for i in range(x.shape[0]):
            total = total + x[i]
        return total
    f, calls = _counting(fn, input_signature=_sig(None, 3))
    _check(f, fn, (5, 7))
    assert len(calls) == 2


def test_mismatching_shapes_still_raise():
    f = tf.function(lambda x: x * 2.0, input_signature=_sig(None, 3))
    f(tf.constant(np.ones((2, 3))))
    with pytest.raises((TypeError, ValueError)):
        f(tf.constant(np.ones((2, 4))))


def test_concrete_function_and_saving(tmp_path):
    f = tf.function(lambda x: tf.reduce_mean(x, axis=0) * 3.0, input_signature=_sig(None, 3))
    x = RNG.standard_normal((4, 3))
    f(tf.constant(x))
    cf4 = f.get_concrete_function(tf.TensorSpec([4, 3], tf.float64))
    tf.saved.save(cf4, str(tmp_path / "m.tgz"))
    np.testing.assert_allclose(tf.saved.load(str(tmp_path / "m.tgz"))(x).numpy(),
                               x.mean(0) * 3.0)


SCALE = 0.25


class _Scaled:
    def __init__(self):
        self.scale = 1.5

    def __call__(self, x):
        return x * self.scale


def test_numbers_that_existed_before_the_trace_keep_it_for_all_sizes():
    # literals, globals, closure values, attributes of self, library constants (gelu's 0.5,
    # softplus): none of them can depend on the size, so one trace serves every size
    half = 0.5
    obj = _Scaled()

    def fn(x):
        y = x * 0.5 + SCALE * x - half * tf.nn.gelu(x) + obj(x)
        return y + tf.constant([1.0, 2.0, 3.0], tf.float64) + tf.nn.softplus(x)
    f, calls = _counting(fn, input_signature=_sig(None, 3))
    _check(f, fn, SIZES[:4])
    assert len(calls) == 1


def test_a_float_computed_from_the_size_through_a_local_is_not_reused():
    def fn(x):
        s = 2.0 / x.shape[0]  # float.__truediv__: the SymInt is never asked
        return x * s + tf.constant(np.full((3,), 1.0 / (x.shape[0] + 1.0)))
    f, calls = _counting(fn, input_signature=_sig(None, 3))
    _check(f, fn, (5, 7, 5))
    assert len(calls) == 2
