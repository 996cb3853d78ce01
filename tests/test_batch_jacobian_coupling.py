"""batch_jacobian means TensorFlow's one thing in every mode (issue 9, item 6):
``J[b, i, j] = sum over b' of d y[b', i] / d x[b, j]``, and warns where sparsity detection
sees that the examples of the batch depend on each other (TensorFlow issue #38428)."""
import warnings

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.sparsity import detect
from tapegrad.tape.batch_jacobian import BatchCouplingWarning

RNG = np.random.default_rng(38428)


def batch_norm(width):
    """BatchNorm in training (statistics over the batch) after a dense layer."""
    w = tf.constant(RNG.standard_normal((3, width)))

    def f(x):
        h = tf.matmul(x, w)
        mean = tf.reduce_mean(h, axis=0)
        var = tf.reduce_mean(tf.square(h - mean), axis=0)
        return tf.tanh((h - mean) / tf.sqrt(var + 1e-3))
    return f


def tf_definition(f, x0, eps=1e-6):
    """Central differences of sum_b' y[b', i] with respect to x[b, j]: TensorFlow's sum."""
    b, nx = x0.shape
    ny = f(tf.constant(x0)).shape[1]
    out = np.zeros((b, ny, nx))
    for e in range(b):
        for j in range(nx):
            d = np.zeros_like(x0)
            d[e, j] = eps
            hi = tf.reduce_sum(f(tf.constant(x0 + d)), axis=0).numpy()
            lo = tf.reduce_sum(f(tf.constant(x0 - d)), axis=0).numpy()
            out[e, :, j] = (hi - lo) / (2 * eps)
    return out


def _batch_jacobian(f, x0, mode, compiled=False):
    def run(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = f(x)
        return t.batch_jacobian(y, x, mode=mode)
    if compiled:
        run = tf.function(run)
    return run(tf.constant(x0)).numpy()


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("mode", ["forward", "reverse", "auto"])
@pytest.mark.parametrize("width", [2, 7])  # auto: forward for 7 outputs, reverse for 2
def test_a_batch_coupled_model_gets_tensorflows_sum_in_every_mode(mode, width, compiled):
    f = batch_norm(width)
    x0 = RNG.standard_normal((5, 3))
    with pytest.warns(BatchCouplingWarning, match="not a per-example Jacobian"):
        got = _batch_jacobian(f, x0, mode, compiled)
    np.testing.assert_allclose(got, tf_definition(f, x0), rtol=1e-6, atol=1e-8)


INDEPENDENT = {
    "mlp": lambda w: lambda x: tf.matmul(tf.tanh(tf.matmul(x, w)), tf.transpose(w)),
    "softmax": lambda w: lambda x: tf.nn.softmax(tf.matmul(x, w)),
    "layer norm": lambda w: lambda x: (x - tf.reduce_mean(x, axis=1, keepdims=True))
    / tf.math.reduce_std(x, axis=1, keepdims=True),
    "sort": lambda w: lambda x: tf.sort(tf.matmul(x, w), axis=1),
    "row inverse": lambda w: lambda x: tf.reshape(tf.linalg.inv(
        tf.reshape(tf.concat([x, x[:, :1]], axis=1), (-1, 2, 2)) + tf.eye(2, dtype=x.dtype) * 4),
        (-1, 4)),
}


@pytest.mark.parametrize("name", sorted(INDEPENDENT))
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "function"])
def test_independent_examples_give_per_example_jacobians_without_a_warning(name, compiled):
    f = INDEPENDENT[name](tf.constant(RNG.standard_normal((3, 4))))
    x0 = RNG.standard_normal((4, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", BatchCouplingWarning)
        fwd = _batch_jacobian(f, x0, "forward", compiled)
        rev = _batch_jacobian(f, x0, "reverse", compiled)
    want = tf_definition(f, x0)  # = each example's own Jacobian here
    np.testing.assert_allclose(fwd, want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(rev, want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("b", range(1, 10))
def test_the_coupling_check_finds_every_cross_example_dependency(b):
    # any example reading any other one is seen; a batch of one is never coupled
    x = tf.constant(RNG.standard_normal((b, 2)))
    for src in range(b):
        for dst in range(b):
            with tf.GradientTape() as t:
                t.watch(x)
                y = tf.concat([x[:dst], x[dst:dst + 1] + x[src:src + 1] * 2.0, x[dst + 1:]], 0)
            assert detect.batch_coupled(t._entries, x, y) is (src != dst), (src, dst)


def test_the_coupling_check_is_cached_per_structure():
    f = batch_norm(3)
    x = tf.constant(RNG.standard_normal((4, 3)))
    detect._COUPLED.clear()
    for _ in range(3):
        with tf.GradientTape() as t:
            t.watch(x)
            y = f(x)
        assert detect.batch_coupled(t._entries, x, y) is True
    assert len(detect._COUPLED) == 1


@pytest.mark.parametrize("traced", [False, True])
def test_along_axis_and_matrix_rules_never_miss_a_dependency(traced):
    # the patterns must cover every nonzero of the true Jacobian (checked densely)
    x0 = RNG.standard_normal((3, 4))
    fns = {
        "take_along_axis": lambda x: tf.sort(x, axis=1),
        "inv": lambda x: tf.reshape(tf.linalg.inv(tf.reshape(x, (3, 2, 2))
                                                  + tf.eye(2, dtype=x.dtype) * 3), (3, 4)),
        "det": lambda x: tf.linalg.det(tf.reshape(x, (3, 2, 2))),
        "solve": lambda x: tf.linalg.solve(tf.reshape(x, (3, 2, 2)) + tf.eye(2, dtype=x.dtype) * 3,
                                           tf.reshape(x, (3, 2, 2))[:, :, :1]),
    }
    for name, f in fns.items():
        patterns = []

        def pattern(x, f=f):
            with tf.GradientTape() as t:
                t.watch(x)
                y = f(x)
            patterns.append(detect.tape_pattern(t._entries, x, y))  # at trace time if traced
            return y
        (tf.function(pattern) if traced else pattern)(tf.constant(x0))
        x = tf.constant(x0)
        with tf.GradientTape() as t:
            t.watch(x)
            y = f(x)
        p = patterns[-1]
        dense = t.jacobian(y, x).numpy().reshape(p.shape) != 0
        assert not np.any(dense & ~p), name
        assert not p.all(), name  # and it is not the dense fallback


def test_a_symbolic_batch_size_skips_the_check_and_stays_correct():
    # with a None batch dimension the check would bind the program to one size: it is
    # skipped, and forward mode falls back to reverse (TensorFlow's sum) for every size
    f = batch_norm(7)

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float64)])
    def bj(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = f(x)
        return t.batch_jacobian(y, x, mode="forward")
    for b in (4, 6):
        x0 = RNG.standard_normal((b, 3))
        np.testing.assert_allclose(bj(tf.constant(x0)).numpy(), tf_definition(f, x0),
                                   rtol=1e-6, atol=1e-8)
    assert bj.trace_count == 1
