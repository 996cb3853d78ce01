"""keras.ops' functions of tapegrad/keras/ops/attention.py, functional.py and statistics.py
give Keras 3.15's values and dtypes (tests/data/keras_ops_s14_reference.json, written by
benchmarks/keras_ops_s14_reference.py with the TensorFlow backend, and the JAX backend where
the TensorFlow one refuses) and errors; derivatives by central differences in float64."""
import json
import pathlib
import warnings

import numpy as np
import pytest

import tapegrad as tf

from benchmarks.keras_ops_s14_reference import run
from tapegrad.keras import ops
from tapegrad.testing import check_grads
from test_keras_ops_more import _same

REF = json.loads((pathlib.Path(__file__).parent / "data" / "keras_ops_s14_reference.json")
                 .read_text())["cases"]
with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)  # layer_normalization(rms_scaling=True)
    GOT = run(ops, np, sorted(REF))


@pytest.mark.parametrize("case", sorted(REF))
def test_keras_ops_give_keras_values_and_dtypes(case):
    assert _same(GOT[case], REF[case]), (GOT[case], REF[case])


RNG = np.random.default_rng(14)
Q, K, V = (RNG.normal(size=s) for s in [(1, 3, 2, 2), (1, 4, 2, 2), (1, 4, 2, 2)])
BIAS = RNG.normal(size=(1, 1, 3, 4))
MASK = np.array([[True, False, True, True], [True, True, False, True], [False, True, True, True]])
X = np.array([-1.7, -0.4, 0.3, 0.8, 2.2])
A = np.array([[1.0, 2.0, -0.5, 0.7], [3.0, -1.0, 0.2, 1.1], [0.5, 4.0, 1.5, -2.0]])
N = np.array([[1.0, np.nan, 3.0, 2.0], [0.4, 2.5, np.nan, -1.0]])


def _nan_free(f):
    return lambda x: f(tf.where(tf.math.is_nan(tf.constant(N)), tf.constant(np.nan, "float64"),
                                x))


SMOOTH = {
    "attention": (ops.dot_product_attention, [Q, K, V]),
    "attention_bias_mask": (lambda q, k, v, b: ops.dot_product_attention(
        q, k, v, bias=b, mask=MASK, scale=0.7), [Q, K, V, BIAS]),
    "attention_causal": (lambda q, k, v: ops.dot_product_attention(q, k, v, is_causal=True),
                         [Q, K, V]),
    "attention_grouped": (ops.dot_product_attention,
                          [RNG.normal(size=(1, 2, 4, 2)), K, V]),
    "batch_normalization": (lambda x, m, v, o, s: ops.batch_normalization(
        x, m, v, -1, offset=o, scale=s), [A, A[0], np.abs(A[1]), A[2], A[0] + 3.0]),
    "batch_normalization_axis0": (lambda x, m, v: ops.batch_normalization(x, m, v, 0),
                                  [A, A[:, 0], np.abs(A[:, 1])]),
    "layer_normalization": (lambda x, g, b: ops.layer_normalization(x, g, b), [A, A[0], A[1]]),
    "layer_normalization_axes": (lambda x, g: ops.layer_normalization(x, g, axis=(0, 1)),
                                 [A, A[::-1]]),
    "layer_normalization_axis0": (lambda x, g: ops.layer_normalization(x, g, axis=0),
                                  [A, A[:, 1]]),
    "switch": (lambda x, y: ops.switch(1, [lambda a, b: a + b, lambda a, b: a * b], x, y),
               [X, X[::-1]]),
    "vectorize": (ops.vectorize(lambda a, b: ops.sum(a * ops.sin(b)), signature="(n),(n)->()"),
                  [A, A[1]]),
    "vectorize_elementwise": (ops.vectorize(lambda a, b: a * ops.exp(b)), [A[:, :1], A[0]]),
    "corrcoef": (ops.corrcoef, [A]),
    "correlate_full": (lambda a, b: ops.correlate(a, b, mode="full"), [X, X[:3]]),
    "correlate_same": (lambda a, b: ops.correlate(a, b, mode="same"), [X, X[:2]]),
    "nanquantile": (_nan_free(lambda x: ops.nanquantile(x, [0.3, 0.5], axis=1)), [N]),
    "nanmedian": (_nan_free(lambda x: ops.nanmedian(x)), [N]),
    "nanpercentile": (_nan_free(lambda x: ops.nanpercentile(x, 40.0, axis=0,
                                                            method="midpoint")), [N]),
}


@pytest.mark.parametrize("name", sorted(SMOOTH))
def test_derivatives_by_central_differences(name):
    f, args = SMOOTH[name]
    check_grads(f, args, order=2)


def test_custom_gradient_replaces_the_derivative_and_nests():
    @ops.custom_gradient
    def log1pexp(x):
        e = ops.exp(x)

        def grad(*args, upstream=None):
            upstream = args[0] if upstream is None else upstream
            return upstream * (1.0 - 1.0 / (1.0 + e))
        return ops.log(1.0 + e), grad

    x = tf.constant([-3.0, 0.5, 100.0])
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = log1pexp(x)
        g = tape.gradient(y, x)
    # the rule's value (finite at 100, where exp overflows in the function as written) ...
    np.testing.assert_allclose(g.numpy(), 1.0 - 1.0 / (1.0 + np.exp(np.float32([-3, 0.5, 100]))),
                               rtol=1e-6)
    # ... and the rule differentiates again: d/dx sigmoid(x) = sigmoid (1 - sigmoid)
    s = 1.0 / (1.0 + np.exp(-np.float32([-3.0, 0.5])))
    np.testing.assert_allclose(outer.gradient(g, x).numpy()[:2], s * (1 - s), rtol=1e-5)


def test_argpartition_partitions_where_kerass_backend_repeats_an_index():
    # Keras's TensorFlow backend ranks the taken positions as zeros, so with negative
    # values left over it repeats an index; tapegrad gives a true partition
    x = np.array([3, -1, 2, -4, 7, -2], np.int32)
    for k in range(len(x)):
        got = ops.argpartition(x, k).numpy()
        assert sorted(got.tolist()) == list(range(len(x)))
        assert np.all(x[got[:k + 1]] <= x[got[k]]) and np.all(x[got[k + 1:]] >= x[got[k]])
    m = np.array([[5, 1, 4], [0, 9, -3]], np.int32)
    np.testing.assert_array_equal(np.sort(m[np.arange(2)[:, None], ops.argpartition(m, 0)
                                            .numpy()][:, 1:], axis=1), [[4, 5], [0, 9]])
    np.testing.assert_array_equal(ops.argpartition(m, 0, axis=0).numpy(), [[1, 0, 1], [0, 1, 0]])


def test_in_a_tf_function_as_eagerly():
    f = tf.function(lambda i, q, x: ops.switch(i, [lambda: q * 2.0, lambda: -q, lambda: q + 1.0])
                    + ops.dot_product_attention(q, q, q, is_causal=True)
                    + ops.nanmedian(x) + ops.layer_normalization(q))
    q, x = np.float32(Q), np.float32(N)
    for i in (-1, 1, 2, 7):
        want = (ops.switch(i, [lambda: q * 2.0, lambda: -q, lambda: q + 1.0])
                + ops.dot_product_attention(q, q, q, is_causal=True) + ops.nanmedian(x)
                + ops.layer_normalization(q))
        np.testing.assert_allclose(f(tf.constant(i), q, x), want, rtol=1e-6)
    g = tf.function(lambda a: ops.vectorize(lambda r: ops.max(r) - ops.min(r),
                                            signature="(n)->()")(a))
    np.testing.assert_allclose(g(np.float32(A)), np.ptp(np.float32(A), axis=1))


def test_layer_normalization_rms_scaling_warns_as_keras():
    with pytest.warns(UserWarning, match="rms_scaling"):
        ops.layer_normalization(A, rms_scaling=True)


@pytest.mark.parametrize("call, error", [
    (lambda: ops.dot_product_attention(Q[0], K[0], V[0]), ValueError),
    (lambda: ops.dot_product_attention(Q, K, V, flash_attention=True), ValueError),
    (lambda: ops.dot_product_attention(np.ones((1, 3, 3, 2)), K, V), tf.errors.InvalidArgumentError),
    (lambda: ops.vectorize(ops.sum, signature="(n)->()")(A, A), TypeError),
    (lambda: ops.vectorize(ops.add, signature="(n),(n)->(n)")(A, X), ValueError),
    (lambda: ops.vectorize(ops.sum, signature="(n->()")(A), ValueError),
    (lambda: ops.unique(np.array([True, False])), tf.errors.InvalidArgumentError),
    (lambda: tf.function(lambda x: ops.unique(x))(tf.constant([1, 2])), NotImplementedError),
    (lambda: ops.histogram(A), ValueError), (lambda: ops.histogram(X, 0), tf.errors.InvalidArgumentError),
    (lambda: ops.corrcoef(X), tf.errors.InvalidArgumentError),
    (lambda: ops.correlate(X[:2], X), tf.errors.InvalidArgumentError),
    (lambda: ops.correlate(X, X, mode="middle"), ValueError),
    (lambda: ops.nanquantile(N, 0.5, method="cubic"), ValueError),
])
def test_bad_input_gets_keras_error(call, error):
    with pytest.raises(error):
        call()
