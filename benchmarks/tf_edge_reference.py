"""TensorFlow's results at the edges, for tests/test_tf_edges.py: indices out of range and
means of nothing (``CASES`` here, compared bit for bit), and the differential table of
``benchmarks/tf_edge_cases.py`` (special values, integer ends, reductions, Keras losses and
metrics, ``tf.nn`` extremes, gradients at edge points). Run in the bench environment:

    /work/venv-bench/bin/python -m benchmarks.tf_edge_reference

Each case is the source of a function of tensors (``tf``, ``keras`` and ``np`` in scope)
and its arguments; it runs eagerly and under ``tf.function`` (and, with ``"grad"``, as the
gradient of the sum of its output by its first argument). What it returned (the arrays,
NaN's sign bit included; None for no gradient) or raised (the error's class and message,
less TensorFlow's node and op decorations) is stored under the case's name in
``tests/data/tf_edge_reference.npz``; the test rebuilds the arguments from the same tables
and runs the same source with tapegrad.
"""
import os
import pathlib
import re

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "tf_edge_reference.npz"


def a(values, dtype):
    return np.asarray(values, dtype=dtype)


P3 = a([1.0, 2.0, 3.0], "float32")
M23 = a(np.arange(6).reshape(2, 3), "float32")

# (name, source, args, modes): modes among "eager", "function", "grad"
EAGER_FN = ("eager", "function")
CASES = [
    # ---- indices out of range ----------------------------------------------------------
    ("gather_negative", "lambda p, i: tf.gather(p, i)", [P3, a([-1], "int32")], EAGER_FN),
    ("gather_past_end", "lambda p, i: tf.gather(p, i)", [P3, a([0, 3], "int32")], EAGER_FN),
    ("gather_past_end_int64", "lambda p, i: tf.gather(p, i)", [P3, a([0, 3], "int64")],
     EAGER_FN),
    ("gather_negative_int64", "lambda p, i: tf.gather(p, i)", [P3, a([0, -3], "int64")],
     EAGER_FN),
    ("gather_int16", "lambda p, i: tf.gather(p, i)", [P3, a([2, -1], "int16")], EAGER_FN),
    ("gather_scalar_index", "lambda p, i: tf.gather(p, i)", [P3, a(5, "int32")], EAGER_FN),
    ("gather_2d_indices", "lambda p, i: tf.gather(p, i)", [M23, a([[0, 1], [5, 0]], "int32")],
     EAGER_FN),
    ("gather_axis1", "lambda p, i: tf.gather(p, i, axis=1)", [M23, a([[0, 2], [1, -1]], "int32")],
     EAGER_FN),
    ("gather_in_range", "lambda p, i: tf.gather(p, i, axis=1)", [M23, a([[0, 2], [1, 1]], "int32")],
     EAGER_FN),
    ("gather_batch_dims", "lambda p, i: tf.gather(p, i, batch_dims=1)",
     [M23, a([[0], [3]], "int32")], EAGER_FN),
    ("gather_batch_dims_negative", "lambda p, i: tf.gather(p, i, batch_dims=1)",
     [M23, a([[0], [-3]], "int32")], EAGER_FN),
    ("gather_batch_dims_in_range", "lambda p, i: tf.gather(p, i, batch_dims=1)",
     [M23, a([[0], [2]], "int32")], EAGER_FN),
    ("gather_nd_past_end", "lambda p, i: tf.gather_nd(p, i)", [M23, a([[0, 1], [1, 3]], "int32")],
     EAGER_FN),
    ("gather_nd_negative", "lambda p, i: tf.gather_nd(p, i)", [M23, a([[-1, 0]], "int32")],
     EAGER_FN),
    ("gather_nd_3d_indices", "lambda p, i: tf.gather_nd(p, i)",
     [M23, a([[[0, 1], [1, 3]]], "int64")], EAGER_FN),
    ("gather_nd_slices", "lambda p, i: tf.gather_nd(p, i)", [M23, a([[2]], "int32")], EAGER_FN),
    ("gather_nd_in_range", "lambda p, i: tf.gather_nd(p, i)", [M23, a([[1, 2], [0, 1]], "int32")],
     EAGER_FN),
    ("embedding_lookup_past_end", "lambda p, i: tf.nn.embedding_lookup(p, i)",
     [M23, a([2], "int32")], EAGER_FN),
    ("embedding_lookup_negative", "lambda p, i: tf.nn.embedding_lookup(p, i)",
     [M23, a([-1], "int32")], EAGER_FN),
    ("one_hot_out_of_range", "lambda i: tf.one_hot(i, 3)", [a([0, -1, 3, 5], "int32")],
     EAGER_FN),
    ("unsorted_segment_sum_past_end",
     "lambda d, i: tf.math.unsorted_segment_sum(d, i, 2)", [P3, a([0, 2, 1], "int32")], EAGER_FN),
    ("unsorted_segment_sum_negative_dropped",
     "lambda d, i: tf.math.unsorted_segment_sum(d, i, 2)", [P3, a([0, -1, 1], "int32")],
     EAGER_FN),
    ("unsorted_segment_mean_past_end",
     "lambda d, i: tf.math.unsorted_segment_mean(d, i, 2)", [P3, a([0, 2, 1], "int64")],
     EAGER_FN),
    ("unsorted_segment_max_past_end",
     "lambda d, i: tf.math.unsorted_segment_max(d, i, 2)", [P3, a([0, 2, 1], "int32")], EAGER_FN),
    ("unsorted_segment_sqrt_n_2d_ids",
     "lambda d, i: tf.math.unsorted_segment_sqrt_n(d, i, 2)",
     [M23, a([[0, 1, 1], [1, 4, 0]], "int32")], EAGER_FN),
    ("segment_sum_negative", "lambda d, i: tf.math.segment_sum(d, i)",
     [P3, a([-1, 0, 0], "int32")], ("eager",)),
    ("segment_sum_unsorted", "lambda d, i: tf.math.segment_sum(d, i)",
     [P3, a([0, 1, 0], "int32")], ("eager",)),
    ("tensor_scatter_nd_update_past_end",
     "lambda t, i: tf.tensor_scatter_nd_update(t, i, [[1.0, 2.0]])",
     [M23, a([[[0, 1], [1, 3]]], "int32")], EAGER_FN),
    ("tensor_scatter_nd_add_negative",
     "lambda t, i: tf.tensor_scatter_nd_add(t, i, [1.0])", [P3, a([[-1]], "int32")], EAGER_FN),
    ("tensor_scatter_nd_max_past_end",
     "lambda t, i: tf.tensor_scatter_nd_max(t, i, [1.0])", [P3, a([[3]], "int64")], EAGER_FN),
    ("scatter_nd_past_end", "lambda u, i: tf.scatter_nd(i, u, [2, 3])",
     [a([[1.0, 2.0]], "float32"), a([[[0, 1], [1, 3]]], "int32")], EAGER_FN),
    ("scatter_nd_duplicates", "lambda u, i: tf.scatter_nd(i, u, [4])",
     [a([1.0, 2.0, 3.0], "float32"), a([[2], [0], [2]], "int32")], EAGER_FN),
    ("keras_embedding_past_end",
     "lambda i: keras.layers.Embedding(3, 2, embeddings_initializer='ones')(i)",
     [a([1, 3], "int32")], EAGER_FN),
    ("keras_embedding_negative",
     "lambda i: keras.layers.Embedding(3, 2, embeddings_initializer='ones')(i)",
     [a([0, -1], "int32")], EAGER_FN),
    ("keras_take_negative", "lambda p, i: keras.ops.take(p, i)", [P3, a([-1, -3], "int32")],
     EAGER_FN),
    ("keras_take_past_end", "lambda p, i: keras.ops.take(p, i)", [P3, a([3], "int32")],
     EAGER_FN),
    # ---- means of nothing ------------------------------------------------------------------
    ("reduce_mean_empty", "lambda x: tf.reduce_mean(x)", [a([], "float32")], EAGER_FN),
    ("reduce_mean_empty_float64", "lambda x: tf.reduce_mean(x)", [a([], "float64")], EAGER_FN),
    ("reduce_mean_empty_float16", "lambda x: tf.reduce_mean(x)", [a([], "float16")], EAGER_FN),
    ("reduce_mean_empty_complex", "lambda x: tf.reduce_mean(x)", [a([], "complex64")], EAGER_FN),
    ("reduce_mean_empty_axis0", "lambda x: tf.reduce_mean(x, axis=0)",
     [np.zeros((0, 3), "float32")], EAGER_FN),
    ("reduce_mean_empty_keepdims", "lambda x: tf.reduce_mean(x, axis=0, keepdims=True)",
     [np.zeros((0, 3), "float32")], EAGER_FN),
    ("reduce_mean_empty_int", "lambda x: tf.reduce_mean(x)", [a([], "int32")], EAGER_FN),
    ("reduce_variance_empty", "lambda x: tf.math.reduce_variance(x, axis=0)",
     [np.zeros((0, 2), "float32")], EAGER_FN),
    ("reduce_std_empty", "lambda x: tf.math.reduce_std(x)", [a([], "float64")], EAGER_FN),
    ("moments_empty", "lambda x: tf.nn.moments(x, axes=[0])", [np.zeros((0, 2), "float32")],
     EAGER_FN),
    ("keras_mean_empty", "lambda x: keras.ops.mean(x)", [a([], "float32")], EAGER_FN),
    ("keras_var_empty", "lambda x: keras.ops.var(x, axis=0)", [np.zeros((0, 2), "float32")],
     EAGER_FN),
    ("keras_std_empty", "lambda x: keras.ops.std(x)", [a([], "float32")], EAGER_FN),
    ("reduce_mean_empty_grad", "lambda x: tf.reduce_mean(x, axis=0)",
     [np.zeros((0, 3), "float32")], ("grad",)),
    ("keras_metric_mean_no_updates", "lambda x: keras.metrics.Mean().result() + x",
     [a(0.0, "float32")], ("eager",)),
    ("keras_metric_mean_empty_update",
     "lambda x: (lambda m: (m.update_state(x), m.result())[1])(keras.metrics.Mean())",
     [a([], "float32")], ("eager",)),
]


def all_cases():
    """Every case: ``(name, source, args, mode, strict)``, one per mode."""
    from benchmarks import tf_edge_cases
    out = []
    for table, strict in ((CASES, True), (tf_edge_cases.all_cases(), False)):
        for name, src, args, modes in table:
            out += [(f"{name}[{mode}]", src, args, mode, strict) for mode in modes]
    return out


def message(e):
    """The text of ``e`` without TensorFlow's node and op decorations (and Keras's frame
    around an error raised in a layer's call)."""
    lines = [ln for ln in re.sub(r"\x1b\[[0-9;]*m", "", str(e)).split("\n") if ln.strip()]
    if not lines:
        return ""
    if lines[0].startswith("Exception encountered when calling") and len(lines) > 1:
        lines = lines[1:]
    text = lines[0]
    text = re.sub(r"^\{\{function_node [^}]*\}\}\s*", "", text)
    text = re.sub(r"\s*\[Op:[^\]]*\].*$", "", text)
    return text.strip()


def run(tf, keras, src, args, mode):
    """Run one case: returns ``("value", [arrays or None])`` or ``("error", class name,
    message)`` (also used by the test, with tapegrad as ``tf``)."""
    fn = eval(src, {"tf": tf, "keras": keras, "np": np})  # noqa: S307 (our own table)
    try:
        ts = [tf.constant(x) for x in args]
        if mode == "eager":
            out = fn(*ts)
        elif mode == "function":
            out = tf.function(fn)(*ts)
        else:
            with tf.GradientTape() as tape:
                tape.watch(ts[0])
                y = tf.reduce_sum(fn(*ts))
            out = tape.gradient(y, ts[0])
    except Exception as e:  # noqa: BLE001 (the error is the result)
        return ("error", type(e).__name__, message(e))
    outs = out if isinstance(out, (tuple, list)) else [out]
    return ("value", [None if o is None else np.asarray(o) for o in outs])


def main():
    import warnings
    import keras
    import tensorflow as tf
    warnings.filterwarnings("ignore")
    tf.get_logger().setLevel("ERROR")
    np.seterr(all="ignore")
    arrays = {"versions": np.array([tf.__version__, keras.__version__])}
    for name, src, args, mode, _ in all_cases():
        r = run(tf, keras, src, args, mode)
        if r[0] == "error":
            arrays[name + "/error"] = np.array([r[1], r[2]])
        else:
            for k, o in enumerate(r[1]):
                arrays[f"{name}/{k}"] = np.array("None") if o is None else o
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {len(arrays)} arrays to {OUT}")


if __name__ == "__main__":
    main()
