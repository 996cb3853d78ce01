"""keras.ops' functions of tapegrad/keras/ops/extra.py and misc.py give Keras 3.15's values
and dtypes (tests/data/keras_ops_extra_reference.json, written by
benchmarks/keras_ops_extra_reference.py with the TensorFlow backend); derivatives of the new
compositions by central differences in float64."""
import json
import pathlib

import numpy as np
import pytest

import tapegrad as tf

from benchmarks.keras_ops_extra_reference import run
from tapegrad.keras import ops
from tapegrad.testing import check_grads
from test_keras_ops_more import _same

REF = json.loads((pathlib.Path(__file__).parent / "data" / "keras_ops_extra_reference.json")
                 .read_text())["cases"]
GOT = run(ops, np, sorted(REF))


# Keras 3.15's TensorFlow backend turns a 3 x 4 matrix by 180 degrees into another matrix than
# NumPy's (and JAX's) rot90 gives: NumPy's answer is the one checked (below)
KERAS_DEPARTS = {"ops.rot90((np.arange(12, dtype='float32').reshape(3, 4) - 5.0), k=2)"}


@pytest.mark.parametrize("case", sorted(set(REF) - KERAS_DEPARTS))
def test_keras_ops_give_keras_values_and_dtypes(case):
    assert _same(GOT[case], REF[case]), (GOT[case], REF[case])


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 5), (4, 4)])
@pytest.mark.parametrize("k", [-3, -1, 0, 1, 2, 3, 5])
def test_rot90_is_numpys(shape, k):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    np.testing.assert_array_equal(ops.rot90(x, k=k).numpy(), np.rot90(x, k=k))
    np.testing.assert_array_equal(ops.rot90(x, k=k, axes=(1, 0)).numpy(),
                                  np.rot90(x, k=k, axes=(1, 0)))


# the new compositions differentiate (float64, both modes, to second order), away from kinks
X = np.array([-1.7, -0.4, 0.3, 0.8, 2.2])
SMOOTH = {
    "cbrt": (ops.cbrt, [X]), "exp2": (ops.exp2, [X]), "deg2rad": (ops.deg2rad, [X]),
    "hypot": (ops.hypot, [X, X[::-1] + 0.1]), "logaddexp2": (ops.logaddexp2, [X, X[::-1]]),
    "sinc": (ops.sinc, [X]), "celu": (lambda x: ops.celu(x, alpha=1.5), [X]),
    "glu": (ops.glu, [np.stack([X, X[::-1]], -1)]), "squareplus": (ops.squareplus, [X]),
    "tanh_shrink": (ops.tanh_shrink, [X]), "soft_shrink": (ops.soft_shrink, [X]),
    "sparse_plus": (ops.sparse_plus, [X * 0.5]), "nanmean": (ops.nanmean, [X]),
    "nanvar": (ops.nanvar, [X]), "average": (lambda x: ops.average(x, weights=X ** 2), [X]),
    "trapezoid": (ops.trapezoid, [X]), "kron": (ops.kron, [X[:4].reshape(2, 2), X[1:].reshape(2, 2)]),
    "cross": (ops.cross, [X[:3], X[2:]]), "quantile": (lambda x: ops.quantile(x, 0.3), [X]),
    "median": (ops.median, [X]), "vdot": (ops.vdot, [X, X[::-1]]),
    "solve": (ops.solve, [np.eye(3) * 2 + 0.1 * X[:3], X[:3, None]]),
}


@pytest.mark.parametrize("name", sorted(SMOOTH))
def test_derivatives_by_central_differences(name):
    f, args = SMOOTH[name]
    check_grads(f, args, order=2)


def test_while_loop_converts_at_the_end_as_tensorflow_eagerly():
    # TensorFlow's eager loop runs the body on the values it made and converts the results
    # once it ends: (0, 0.0) -> (i + 1, x + i) adds Python ints to a Python float
    i, x = tf.while_loop(lambda i, x: i < 5, lambda i, x: (i + 1, x + i), (0, 0.0))
    assert (i.dtype, int(i), x.dtype, float(x)) == (np.int32, 5, np.float32, 10.0)
    assert float(ops.fori_loop(0, 5, lambda i, x: x + i, 0.0)) == 10.0
