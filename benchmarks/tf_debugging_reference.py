"""TensorFlow's ``tf.debugging`` outcomes (returned value, or the error type) and the
unsigned dtypes' op results, for tests/test_debugging.py. Each case is an expression over
``tf``, ``np``, ``x`` = [1., 2.] and ``y`` = [1., 3.] (float32); eager, and inside a
``tf.function`` (``graph: `` cases, where the arguments are the function's inputs).
Run in the bench environment:

    /work/venv-bench/bin/python -m benchmarks.tf_debugging_reference
"""
import json
import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

OUT = (pathlib.Path(__file__).resolve().parent.parent / "tests" / "data"
       / "tf_debugging_reference.json")
D = "tf.debugging."
CASES = [D + c for c in [
    "assert_equal(x, x)", "assert_equal(x, y)", "assert_equal(x, 1.)", "assert_equal(x, [1., 2.])",
    "assert_equal(x, tf.constant([1, 2]))", "assert_equal(tf.zeros([0]), tf.zeros([0]))",
    "assert_equal(1, 2)", "assert_equal([1, 2], [1, 2])", "assert_none_equal(x, y)",
    "assert_none_equal(x, x + 5.)", "assert_less(x, y)", "assert_less(x, y + 1.)",
    "assert_less_equal(x, y)", "assert_greater(y + 1., x)", "assert_greater(x, y)",
    "assert_greater_equal(y, x)", "assert_greater_equal(x, y)",
    "assert_positive(tf.constant([0., 1.]))", "assert_positive(x)",
    "assert_negative(-x)", "assert_negative(x)", "assert_non_negative(tf.constant([0., 1.]))",
    "assert_non_negative(-x)", "assert_non_positive(-x)", "assert_non_positive(x)",
    "assert_positive(tf.constant([1, 2]))", "assert_near(x, x + 1e-7)", "assert_near(x, x + 1e-3)",
    "assert_near(x, x + 1e-3, atol=1e-2)", "assert_near(x, x * 1.01, rtol=0.02)",
    "assert_near(tf.constant([1]), tf.constant([1]))",
    "assert_near(tf.constant([1.], tf.float64), tf.constant([1. + 1e-14], tf.float64))",
    "assert_near(tf.constant([1.], tf.float64), tf.constant([1. + 1e-10], tf.float64))",
    "assert_rank(x, 1)", "assert_rank(x, 2)", "assert_rank(x, 2, message='m')",
    "assert_rank_at_least(x, 1)", "assert_rank_at_least(x, 2)", "assert_rank_in(x, [0, 2])",
    "assert_rank_in(x, [1, 2])",
    "assert_shapes([(x, ('N',)), (y, ('N',))])",
    "assert_shapes([(x, ('N',)), (tf.zeros([3]), ('N',))])",
    "assert_shapes([(x, ('N', 'M'))])", "assert_shapes([(x, (3,))])", "assert_shapes([(x, (2,))])",
    "assert_shapes([(tf.zeros([2, 3]), ('N', 3)), (x, ('N',))])",
    "assert_shapes([(tf.zeros([2, 3]), ('N', 'N'))])",
    "assert_shapes([(tf.zeros([4, 2, 3]), (..., 'N', 3))])",
    "assert_shapes([(tf.zeros([4, 2, 3]), ('*', 2, 3))])",
    "assert_shapes([(tf.zeros([4, 2, 3]), ('*', 3, 3))])", "assert_shapes([(tf.zeros([]), ())])",
    "check_numerics(x, 'm')", "check_numerics(tf.constant([np.nan, 1.]), 'm')",
    "check_numerics(tf.constant([np.inf, 1.]), 'm')", "check_numerics(tf.constant([1]), 'm')",
    "check_numerics(tf.constant([-np.inf], tf.float64), 'm')",
    "assert_all_finite(tf.constant([np.inf]), 'm')", "assert_all_finite(x, 'm')",
    "assert_type(x, tf.float32)", "assert_type(x, tf.int32)", "assert_integer(x)",
    "assert_integer(tf.constant([1]))", "assert_scalar(x)", "assert_scalar(tf.constant(1.))",
    "is_numeric_tensor(x)", "is_numeric_tensor(tf.constant([True]))", "is_numeric_tensor(3.0)",
    "Assert(False, [x])", "Assert(True, [x])", "Assert(tf.constant(False), ['a', x])",
    "assert_same_float_dtype([x, y])", "assert_proper_iterable([1, 2])",
    "assert_proper_iterable(x)", "assert_proper_iterable('ab')",
    "is_finite(x)", "is_nan(tf.constant([np.nan]))", "is_inf(tf.constant([np.inf]))",
]] + [
    "tf.assert_equal(x, y)", "tf.assert_equal(x, x)", "tf.assert_rank(x, 3)",
    "tf.assert_less(x, y)", "tf.assert_greater(y, x)", "tf.Assert(tf.constant(False), [x])",
    "tf.check_numerics(x * np.nan, 'loss')",
    "graph: tf.debugging.assert_equal(a, b)", "graph: tf.debugging.assert_less(a, b)",
    "graph: tf.debugging.assert_near(a, b, atol=0.5)",
    "graph: tf.debugging.check_numerics(a * np.inf, 'inf')",
    "graph: tf.debugging.check_numerics(a * b, 'mul')",
    "graph: tf.debugging.assert_positive(a)", "graph: tf.debugging.Assert(tf.reduce_all(a < 5.), [a])",
    "graph: tf.debugging.Assert(tf.reduce_any(a > 5.), [a])",
    "graph: tf.debugging.assert_rank(a, 2)",
] + [f"{k}(tf.constant([1, 5, 7], tf.{d}), tf.constant([3, 2, 7], tf.{d}))"
     for d in ("uint16", "uint32", "uint64")
     for k in ("tf.add", "tf.subtract", "tf.multiply", "tf.math.floordiv", "tf.math.floormod",
               "tf.math.truediv", "tf.maximum", "tf.minimum", "tf.less", "tf.equal",
               "tf.bitwise.bitwise_and", "tf.bitwise.bitwise_xor", "lambda a, b: tf.concat")
     if k != "lambda a, b: tf.concat"] + [
    f"tf.{f}(tf.constant([1, 5, 7], tf.{d}))" for d in ("uint16", "uint32", "uint64")
    for f in ("reduce_sum", "reduce_max", "reduce_prod", "reduce_mean", "cumsum", "argmax",
              "square", "negative", "abs", "sort")] + [
    f"tf.cast(tf.constant([1, 5, 7], tf.{d}), tf.float32)" for d in ("uint16", "uint32", "uint64")
] + [f"tf.zeros([2], tf.{d})" for d in ("uint16", "uint32", "uint64")] + [
    f"tf.as_dtype('{d}') == tf.{d}" for d in ("uint16", "uint32", "uint64")] + [
    f"tf.constant([1, 5, 7], tf.{d}) + 1" for d in ("uint16", "uint32", "uint64")]


def run(tf, np):
    """``{case: {"value": [dtype, list] | repr} | {"error": type name}}`` for every case."""
    out = {}
    for case in CASES:
        env = {"tf": tf, "np": np, "x": tf.constant([1.0, 2.0]), "y": tf.constant([1.0, 3.0])}
        try:
            if case.startswith("graph: "):
                expr = case[len("graph: "):]
                f = tf.function(eval(f"lambda a, b: ({expr}, a + b)[1]", env))  # noqa: S307
                r = f(tf.constant([1.0, 2.0]), tf.constant([1.0, 3.0]))
            else:
                r = eval(case, env)  # noqa: S307 - the cases above, nothing read from outside
        except Exception as e:  # noqa: BLE001 - the error type is the reference
            out[case] = {"error": type(e).__name__}
            continue
        if hasattr(r, "numpy"):
            a = np.asarray(r.numpy())
            out[case] = {"value": [a.dtype.name, a.tolist()]}
        elif r is None or isinstance(r, (bool, int, float)):
            out[case] = {"value": r}
        else:
            out[case] = {"value": str(getattr(r, "name", r))}
    return out


def main():
    import numpy as np
    import tensorflow as tf

    OUT.write_text(json.dumps({"tensorflow_version": tf.__version__, "cases": run(tf, np)},
                              indent=1) + "\n")
    print(f"wrote {OUT} (TensorFlow {tf.__version__})")


if __name__ == "__main__":
    main()
