"""GradientTape.jacobian and batch_jacobian: TensorFlow's semantics, vectorization, both modes,
chunking and memory. Values are compared with central differences in float64."""
import tracemalloc

import numpy as np
import pytest

import tapegrad as tf
from _reference import num_jac, rosenbrock, rosenbrock_hessian
from tapegrad.tape import jacobians

RNG = np.random.default_rng(2)


def tape_jac(f, x, **kw):
    xt = tf.constant(x)
    with tf.GradientTape() as g:
        g.watch(xt)
        y = f(xt)
    return g.jacobian(y, xt, **kw)


W = RNG.standard_normal((4, 5))
FUNCS = {
    "elementwise": (lambda x: tf.sin(x) * tf.exp(-x), (6,)),
    "coupled": (lambda x: tf.sin(x) * tf.reduce_sum(x * x), (5,)),
    "matmul": (lambda x: tf.tanh(tf.matmul(x, W)), (3, 4)),
    "vector-matmul": (lambda x: tf.linalg.matvec(W, x, transpose_a=True), (4,)),
    "gram": (lambda x: tf.matmul(x, x, transpose_b=True), (3, 2)),
    "reduce-keepdims": (lambda x: x / tf.reduce_sum(x * x, axis=1, keepdims=True), (3, 4)),
    "scalar-out": (lambda x: tf.reduce_sum(tf.sin(x)), (2, 3)),
    "scalar-in": (lambda x: tf.stack([x, x * x, tf.sin(x)]), ()),
    "broadcast": (lambda x: x[:, None] * x[None, :], (4,)),
    "reshape-transpose": (lambda x: tf.transpose(tf.reshape(x, [3, 2])) ** 2, (6,)),
    "index-concat": (lambda x: tf.concat([x[::2], x[1:] * x[:-1]], 0), (5,)),
    "softmax": (lambda x: tf.nn.softmax(x, axis=-1), (2, 4)),
    "cumsum-max": (lambda x: tf.math.cumsum(x) * tf.reduce_max(x), (5,)),
    "gather": (lambda x: tf.gather(x, [2, 0, 2]) * x[1], (4,)),
    "mlp": (lambda x: tf.matmul(tf.tanh(tf.matmul(x, W)), W.T), (2, 4)),
}


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
@pytest.mark.parametrize("name", sorted(FUNCS))
def test_jacobian_matches_central_differences(name, mode):
    f, shape = FUNCS[name]
    x = RNG.standard_normal(shape) if shape else np.float64(0.7)
    got = tape_jac(f, x, mode=mode)
    want = num_jac(lambda a: f(tf.constant(a)).numpy(), x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 100])
@pytest.mark.parametrize("name", ["matmul", "coupled", "softmax"])
def test_forward_and_reverse_agree_for_every_chunk_size(name, chunk_size):
    f, shape = FUNCS[name]
    x = RNG.standard_normal(shape)
    rev = tape_jac(f, x, mode="reverse", chunk_size=chunk_size).numpy()
    fwd = tape_jac(f, x, mode="forward", chunk_size=chunk_size).numpy()
    np.testing.assert_allclose(rev, fwd, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rev, tape_jac(f, x).numpy(), rtol=1e-12, atol=1e-12)


def test_float32_stays_float32():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
    j = g.jacobian(y, x)
    assert j.dtype == np.float32 and isinstance(j, tf.Tensor)


# -- vectorization: one pass over the tape, not one per row ----------------------------------------
class Count:
    def __init__(self, monkeypatch):
        self.backward = self.forward = 0
        orig_b, orig_f = jacobians._Path.backward, jacobians._Path.forward

        def backward(path, *a):
            self.backward += 1
            return orig_b(path, *a)

        def forward(path, *a):
            self.forward += 1
            return orig_f(path, *a)

        monkeypatch.setattr(jacobians._Path, "backward", backward)
        monkeypatch.setattr(jacobians._Path, "forward", forward)


def test_all_rows_in_one_pass(monkeypatch):
    c = Count(monkeypatch)
    tape_jac(lambda x: tf.sin(tf.matmul(x, W)), RNG.standard_normal((10, 4)), mode="reverse")
    assert (c.backward, c.forward) == (1, 0)
    tape_jac(lambda x: tf.sin(tf.matmul(x, W)), RNG.standard_normal((10, 4)), mode="forward")
    assert (c.backward, c.forward) == (1, 1)


def test_auto_mode_picks_the_side_with_fewer_elements(monkeypatch):
    c = Count(monkeypatch)
    tape_jac(lambda x: tf.reduce_sum(x, axis=1), RNG.standard_normal((3, 4)))  # 3 outs < 12 ins
    assert (c.backward, c.forward) == (1, 0)
    tape_jac(lambda x: tf.tile(x, [5]), RNG.standard_normal(3))  # 3 ins < 15 outs
    assert (c.backward, c.forward) == (1, 1)


def test_chunk_size_sets_the_number_of_passes(monkeypatch):
    c = Count(monkeypatch)
    tape_jac(tf.sin, RNG.standard_normal(20), mode="reverse", chunk_size=7)
    assert c.backward == 3
    tape_jac(tf.sin, RNG.standard_normal(20), mode="forward", chunk_size=20)
    assert c.forward == 1


def test_memory_budget_chunks_automatically(monkeypatch):
    c = Count(monkeypatch)
    tf.config.set_memory_budget(64 * 1000 * 8)  # ~16 rows of 1000 float64 values x 4
    try:
        j = tape_jac(tf.sin, RNG.standard_normal(1000), mode="reverse")
    finally:
        tf.config.set_memory_budget(None)
    assert c.backward > 10
    x = np.asarray(j)  # still the right answer
    assert np.count_nonzero(x - np.diag(np.diag(x))) == 0


def test_loop_mode_uses_one_unbatched_pass_per_row(monkeypatch):
    c = Count(monkeypatch)
    f, shape = FUNCS["mlp"]
    x = tf.constant(RNG.standard_normal(shape))
    with tf.GradientTape(persistent=True) as g:
        g.watch(x)
        y = f(x)
    loop = g.jacobian(y, x, experimental_use_pfor=False, mode="reverse")
    assert c.backward == int(np.prod(y.shape)) == 8
    vec = g.jacobian(y, x)
    np.testing.assert_allclose(loop.numpy(), vec.numpy(), rtol=1e-12, atol=1e-13)


# -- TensorFlow's semantics ---------------------------------------------------------------------------------
def test_shapes_and_nested_sources():
    a = tf.constant(RNG.standard_normal((2, 3)))
    b = tf.constant(RNG.standard_normal(4))
    v = tf.Variable(RNG.standard_normal(()))
    with tf.GradientTape() as g:
        g.watch([a, b])
        y = tf.reduce_sum(a, axis=1)[:, None] * b * v  # (2, 4)
    j = g.jacobian(y, {"a": a, "bv": [b, v]})
    assert set(j) == {"a", "bv"}
    assert j["a"].shape == (2, 4, 2, 3)
    assert j["bv"][0].shape == (2, 4, 4) and j["bv"][1].shape == (2, 4)
    want_v = (np.sum(a.numpy(), axis=1)[:, None] * b.numpy())
    np.testing.assert_allclose(j["bv"][1].numpy(), want_v)
    want_b = np.einsum("i,jk->ijk", np.sum(a.numpy(), 1) * float(v), np.eye(4))
    np.testing.assert_allclose(j["bv"][0].numpy(), want_b)


def test_repeated_source_gets_the_full_jacobian_each_time():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
    j1, j2 = g.jacobian(y, [x, x])
    np.testing.assert_allclose(j1.numpy(), np.diag([2.0, 4.0]))
    np.testing.assert_allclose(j2.numpy(), np.diag([2.0, 4.0]))


def test_target_that_is_the_source_is_the_identity():
    x = tf.constant(RNG.standard_normal((2, 2)))
    with tf.GradientTape() as g:
        g.watch(x)
    np.testing.assert_array_equal(g.jacobian(x, x).numpy(), np.eye(4).reshape(2, 2, 2, 2))


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_unconnected_source(mode):
    x, z = tf.constant([1.0, 2.0]), tf.constant([[3.0], [4.0], [5.0]])
    with tf.GradientTape(persistent=True) as g:
        g.watch([x, z])
        y = x * 2.0
    jx, jz = g.jacobian(y, [x, z], mode=mode)
    assert jz is None
    np.testing.assert_allclose(jx.numpy(), 2 * np.eye(2))
    jz = g.jacobian(y, z, unconnected_gradients="zero", mode=mode)
    assert jz.shape == (2, 3, 1) and not np.any(jz.numpy())
    jz = g.jacobian(y, z, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert jz.shape == (2, 3, 1)
    with pytest.raises(ValueError, match="Unknown value for unconnected_gradients: 'zeros'"):
        g.jacobian(y, z, unconnected_gradients="zeros")


def test_non_tensor_target_is_an_error():
    x = tf.constant([1.0, 2.0])
    for bad in [[x * 2.0], 3.0, None, np.array([1.0])]:
        with tf.GradientTape() as g:
            g.watch(x)
        with pytest.raises(TypeError, match="target must be a single Tensor"):
            g.jacobian(bad, x)
        with pytest.raises(TypeError, match="target must be a single Tensor"):
            g.batch_jacobian(bad, x)


def test_non_tensor_source_is_an_error():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * 2.0
    with pytest.raises(ValueError, match="sources must be tensors"):
        g.jacobian(y, [x, 1.0])


@pytest.mark.parametrize("mode", ["Forward", "fwd", "rev", "", 1])
def test_unknown_mode_is_a_value_error(mode):
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * 2.0
    with pytest.raises(ValueError, match="Unknown Jacobian mode"):
        g.jacobian(y, x, mode=mode)
    with pytest.raises(ValueError, match="Unknown Jacobian mode"):
        g.batch_jacobian(y[None], x[None], mode=mode)
    assert g.jacobian(y, x).shape == (2, 2)  # the bad call did not use the tape up


@pytest.mark.parametrize("chunk_size", [0, -1, 2.5, True, "4", np.float64(2.0)])
def test_bad_chunk_size_is_a_value_error(chunk_size):
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as g:
        g.watch(x)
        y = x * 2.0
    with pytest.raises(ValueError, match="chunk_size must be a positive integer"):
        g.jacobian(y, x, chunk_size=chunk_size)
    with pytest.raises(ValueError, match="chunk_size must be a positive integer"):
        g.batch_jacobian(y[None], x[None], chunk_size=chunk_size)
    assert g.jacobian(y, x, chunk_size=np.int64(1)).shape == (2, 2)


def test_non_persistent_tape_works_once():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
    g.jacobian(y, x)
    msg = "A non-persistent GradientTape can only be used to compute one set of gradients"
    with pytest.raises(RuntimeError, match=msg):
        g.jacobian(y, x)
    with pytest.raises(RuntimeError, match=msg):
        g.gradient(y, x)
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
    g.gradient(y, x)
    with pytest.raises(RuntimeError, match=msg):
        g.jacobian(y, x)
    with pytest.raises(RuntimeError, match=msg):
        g.batch_jacobian(y[None], x[None])


def test_use_pfor_false_needs_a_persistent_tape():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
    msg = ("GradientTape must be created with persistent=True to compute the jacobian with "
           "eager execution enabled and with experimental_use_pfor set to False.")
    with pytest.raises(RuntimeError, match=msg.replace(".", r"\.")):
        g.jacobian(y, x, experimental_use_pfor=False)
    with pytest.raises(RuntimeError, match="to compute the batch_jacobian"):
        g.batch_jacobian(y[None], x[None], experimental_use_pfor=False)
    np.testing.assert_allclose(g.jacobian(y, x).numpy(), np.diag([2.0, 4.0]))  # still unused


def test_persistent_tape_several_jacobians_and_the_loop():
    x = tf.constant(RNG.standard_normal(3))
    with tf.GradientTape(persistent=True) as g:
        g.watch(x)
        y = tf.sin(x) * tf.reduce_sum(x)
        z = y * y
    a = g.jacobian(y, x)
    b = g.jacobian(y, x, experimental_use_pfor=False)
    c = g.jacobian(z, x, mode="forward")
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
    np.testing.assert_allclose(c.numpy(), 2 * y.numpy()[:, None] * a.numpy(), rtol=1e-10)


def test_jacobian_of_a_gradient_is_the_hessian_in_both_modes():
    f = rosenbrock
    xv = RNG.uniform(-1.5, 1.5, 6)
    want = rosenbrock_hessian(xv)
    for mode in ["forward", "reverse"]:
        x = tf.constant(xv)
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = f(x)
            g = inner.gradient(y, x)
        np.testing.assert_allclose(outer.jacobian(g, x, mode=mode).numpy(), want, rtol=1e-10)


def test_jacobian_of_a_jacobian():
    x = tf.constant(RNG.standard_normal(3))
    f = lambda v: tf.sin(v) * tf.reduce_sum(v * v)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        j = inner.jacobian(y, x)
    h = outer.jacobian(j, x)
    jf = lambda a: tape_jac(f, a).numpy()
    np.testing.assert_allclose(h.numpy(), num_jac(jf, x.numpy()), rtol=1e-6, atol=1e-8)


def test_gradient_of_a_jacobian_from_a_persistent_tape():
    x = tf.constant([0.5, 1.0])
    with tf.GradientTape(persistent=True) as g:
        g.watch(x)
        y = x ** 3
    j = g.jacobian(y, x)  # recorded by the persistent tape itself
    s = g.gradient(j, x)  # d/dx sum(diag(3 x^2)) = 6 x
    np.testing.assert_allclose(s.numpy(), [3.0, 6.0])


def test_forward_mode_over_a_tape_that_recorded_a_vmap():
    # the outer tape holds operations on batched values of a vmap that has ended
    xs, w = RNG.standard_normal((4, 3)), tf.constant(RNG.standard_normal(3))
    with tf.GradientTape() as g:
        g.watch(w)
        y = tf.vmap(lambda r: tf.reduce_sum(tf.sin(r * w)))(xs)
    j = g.jacobian(y, w, mode="forward")
    np.testing.assert_allclose(j.numpy(), np.cos(xs * w.numpy()) * xs, rtol=1e-12)


def test_integer_target_gives_none_with_a_warning():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as g:
        g.watch(x)
        y = tf.cast(x, tf.int32)
    with pytest.warns(UserWarning, match="must be floating"):
        assert g.jacobian(y, x) is None


def test_empty_source():
    x = tf.constant(np.zeros((0,)))
    with tf.GradientTape() as g:
        g.watch(x)
        y = tf.reduce_sum(x) + tf.constant([1.0, 2.0], tf.float64)
    assert g.jacobian(y, x).shape == (2, 0)


# -- batch_jacobian -------------------------------------------------------------------------------------
def per_example(f, x):
    return np.stack([num_jac(lambda a: f(tf.constant(a[None])).numpy()[0], xi) for xi in x])


@pytest.mark.parametrize("chunk_size", [None, 1, 2])
@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
def test_batch_jacobian_matches_per_example_central_differences(mode, chunk_size):
    x = RNG.standard_normal((3, 4))
    f = lambda v: tf.tanh(tf.matmul(v, W)) * tf.reduce_sum(v, axis=1, keepdims=True)
    xt = tf.constant(x)
    with tf.GradientTape() as g:
        g.watch(xt)
        y = f(xt)
    got = g.batch_jacobian(y, xt, mode=mode, chunk_size=chunk_size)
    assert got.shape == (3, 5, 4)
    np.testing.assert_allclose(got.numpy(), per_example(f, x), rtol=1e-6, atol=1e-8)


def test_batch_jacobian_higher_rank():
    x = tf.constant(RNG.standard_normal((2, 3, 2)))
    with tf.GradientTape(persistent=True) as g:
        g.watch(x)
        y = tf.reshape(x * x, [2, 6, 1])[:, ::2]
    j = g.batch_jacobian(y, x)
    assert j.shape == (2, 3, 1, 3, 2)
    f = lambda v: tf.reshape(v * v, [-1, 6, 1])[:, ::2]
    np.testing.assert_allclose(j.numpy(), per_example(f, x.numpy()), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(g.batch_jacobian(y, x, mode="forward").numpy(), j.numpy())
    np.testing.assert_allclose(g.batch_jacobian(y, x, experimental_use_pfor=False).numpy(),
                               j.numpy())


def test_batch_jacobian_unconnected_source_gives_zeros():
    x = tf.constant(RNG.standard_normal((2, 3)))
    z = tf.constant(RNG.standard_normal((2, 4)), tf.float64)
    with tf.GradientTape() as g:
        g.watch([x, z])
        y = tf.cast(x * 2.0, tf.float32)
    j = g.batch_jacobian(y, z)
    assert j.shape == (2, 3, 4) and j.dtype == np.float32 and not np.any(j.numpy())


def test_batch_jacobian_needs_matching_first_dimensions():
    x = tf.constant(RNG.standard_normal((4, 2)))
    with tf.GradientTape(persistent=True) as g:
        g.watch(x)
        y = x[:3] * 2.0
        v = tf.reduce_sum(x, axis=1)
    with pytest.raises(ValueError, match=r"Need first dimension of target shape \(\(3, 2\)\) "
                                         r"and source shape \(\(4, 2\)\) to match\."):
        g.batch_jacobian(y, x)
    with pytest.raises(ValueError, match=r"Shape \(4,\) must have rank at least 2"):
        g.batch_jacobian(v, x)


# -- memory -------------------------------------------------------------------------------------------------
def _peak(fn):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        out = fn()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return out, peak


ELEMENTWISE = {"sin": (tf.sin, np.cos),
               "chain": (lambda v: tf.exp(tf.sin(v)) * v,
                         lambda v: np.exp(np.sin(v)) * (np.cos(v) * v + 1))}


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_peak_memory_of_a_2000_by_2000_jacobian(name, mode):
    # The default budget is sized to the machine (up to 4 GiB); the peak must still be a
    # small multiple of the 32 MB result.
    f, df = ELEMENTWISE[name]
    n = 2000
    x = tf.constant(RNG.standard_normal(n))

    def run():
        with tf.GradientTape() as g:
            g.watch(x)
            y = f(x)
        return g.jacobian(y, x, mode=mode)

    j, peak = _peak(run)
    result = n * n * 8
    assert j.shape == (n, n)
    assert peak <= 3 * result, f"peak {peak / 1e6:.1f} MB for a {result / 1e6:.0f} MB result"
    jv = j.numpy()
    np.testing.assert_allclose(np.diag(jv), df(x.numpy()))
    assert np.count_nonzero(jv) == n


def test_peak_memory_with_a_small_budget_is_the_result_plus_a_chunk():
    n = 2000
    x = tf.constant(RNG.standard_normal(n))
    tf.config.set_memory_budget(4 << 20)
    try:
        def run():
            with tf.GradientTape() as g:
                g.watch(x)
                y = tf.exp(tf.sin(x))
            return g.jacobian(y, x)
        j, peak = _peak(run)
    finally:
        tf.config.set_memory_budget(None)
    result = n * n * 8
    assert peak <= result + 3 * (4 << 20), f"peak {peak / 1e6:.1f} MB"
    np.testing.assert_allclose(np.diag(j.numpy()), np.cos(x.numpy()) * np.exp(np.sin(x.numpy())))
