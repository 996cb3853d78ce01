"""TensorFlow's results at the edges, case by case, against the values TensorFlow 2.21 /
Keras 3.15 gave (``benchmarks/tf_edge_reference.py`` wrote ``tests/data/tf_edge_reference.npz``;
the arguments are rebuilt from its tables, ``benchmarks/tf_edge_cases.py``).

Indices out of range (gather, gather_nd, batch_dims, segment ids, scatters, embeddings),
eager and inside ``tf.function``, raise TensorFlow's InvalidArgumentError with its message,
and means of nothing are +nan: bit for bit. The differential table (elementwise ops at NaN,
±inf, ±0, huge values; integer dtypes at their ends; reductions; Keras losses and metrics;
``tf.nn`` extremes; gradients at edge points) must give TensorFlow's errors, dtypes and
shapes, its integers and booleans exactly, NaN and ±inf where it does, zeros of its sign,
and other floats to within rounding (TensorFlow's transcendental kernels differ from
NumPy's in the last bits, and it flushes subnormal results to zero). Where tapegrad
departs on purpose (README, "Differences from TensorFlow") the tables leave the point out.
"""
import pathlib

import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras
from benchmarks.tf_edge_reference import all_cases, run

REFERENCE = np.load(pathlib.Path(__file__).parent / "data" / "tf_edge_reference.npz")
CASES = {name: (src, args, mode, strict) for name, src, args, mode, strict in all_cases()}
TOL = {"float16": 1e-3, "float32": 2e-6, "float64": 1e-12}


def _reference(name):
    if name + "/error" in REFERENCE:
        kind, message = REFERENCE[name + "/error"].tolist()
        return ("error", kind, message)
    outs, k = [], 0
    while f"{name}/{k}" in REFERENCE:
        o = REFERENCE[f"{name}/{k}"]
        outs.append(None if o.dtype.kind == "U" and o.ndim == 0 and str(o) == "None" else o)
        k += 1
    return ("value", outs)


def bits(got, want):
    """Equal values, dtype and shape, bit for bit (NaN's sign included)."""
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    assert got.tobytes() == want.tobytes(), (got, want)


def close(got, want):
    """TensorFlow's dtype, shape, integers and booleans; NaN, ±inf and signed zeros where
    it has them; other floats within rounding of the array's largest magnitude."""
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    if want.dtype.kind not in "fc":
        np.testing.assert_array_equal(got, want)
        return
    g, w = got.ravel(), want.ravel()
    if w.dtype.kind == "c":
        g, w = np.concatenate([g.real, g.imag]), np.concatenate([w.real, w.imag])
    assert (np.isnan(g) == np.isnan(w)).all(), (got, want)
    inf = np.isinf(w) | np.isinf(g)
    assert (g[inf] == w[inf]).all(), (got, want)
    zero = (g == 0) & (w == 0)
    assert (np.signbit(g[zero]) == np.signbit(w[zero])).all(), ("sign of zero", got, want)
    fin = np.isfinite(w) & np.isfinite(g)
    tol = TOL[w.dtype.name]
    scale = np.abs(w[fin]).max() if fin.any() else 0.0
    err = np.abs(g[fin] - w[fin])
    assert (err <= tol * np.maximum(np.abs(w[fin]), 0.1 * scale)).all(), (got, want)


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_matches_tensorflow(name):
    src, args, mode, strict = CASES[name]
    want = _reference(name)
    got = run(tf, keras, src, args, mode)
    if want[0] == "error":
        assert got[0] == "error", f"TensorFlow raises {want[1:]}, tapegrad gave {got[1]}"
        assert got[1] == want[1] and want[2] in got[2], (got, want)
        return
    assert got[0] == "value", f"tapegrad raised {got[1]}: {got[2]}"
    assert len(got[1]) == len(want[1])
    for g, w in zip(got[1], want[1]):
        if w is None or g is None:
            assert g is None and w is None, (g, w)
        else:
            (bits if strict else close)(g, w)


def test_traced_gather_reuses_its_program_and_checks_every_call():
    """The check is in the compiled program: one trace, good and bad indices alternately."""
    p = tf.constant([1.0, 2.0, 3.0])
    f = tf.function(lambda i: tf.gather(p, i))
    for _ in range(2):
        assert f(tf.constant([2, 0])).numpy().tolist() == [3.0, 1.0]
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = -1 is not"):
            f(tf.constant([2, -1]))
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = 3 is not"):
            f(tf.constant([3, 0]))
    assert f.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16",
                                   "uint32"])
def test_take_checks_every_index_dtype(dtype):
    from tapegrad.primitives.gather import _take
    x = np.arange(6.0).reshape(3, 2)
    hi = np.iinfo(dtype).max
    np.testing.assert_array_equal(_take(x, np.array([2, 0], dtype), 0), x[[2, 0]])
    bad = [np.array([0, 3], dtype), np.array([hi], dtype)]
    if np.dtype(dtype).kind == "i":
        bad += [np.array([-1], dtype), np.array([np.iinfo(dtype).min], dtype)]
    for i in bad:
        with pytest.raises(tf.errors.InvalidArgumentError, match="is not in"):
            _take(x, i, 0)
    assert _take(x, np.zeros(0, dtype), 0).shape == (0, 2)


def test_gather_gradient_and_vmap_keep_checking():
    p = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        tape.watch(p)
        y = tf.reduce_sum(tf.gather(p, [2, 2, 0]))
    g = tape.gradient(y, p)  # IndexedSlices (a gather's), as in TensorFlow
    assert isinstance(g, tf.IndexedSlices) and g.indices.numpy().tolist() == [2, 2, 0]
    assert tf.convert_to_tensor(g).numpy().tolist() == [1.0, 0.0, 2.0]
    f = tf.vectorized_map(lambda i: tf.gather(p, i), tf.constant([[0], [2]]))
    assert f.numpy().tolist() == [[1.0], [3.0]]
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.vectorized_map(lambda i: tf.gather(p, i), tf.constant([[0], [3]]))
