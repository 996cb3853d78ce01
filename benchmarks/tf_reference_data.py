"""Reference results of ``Dataset.scan`` and ``Dataset.group_by_window`` from TensorFlow, for
tests/test_data_grouping.py (values, element order, and the errors' types and messages).
``cases(tf)`` builds the pipelines with any ``tf`` module: this script runs them with
TensorFlow, the test with tapegrad.

Run in the bench environment (the tests never import TensorFlow):

    /work/venv-bench/bin/python -m benchmarks.tf_reference_data
"""
import json
import os
import pathlib

OUT = (pathlib.Path(__file__).resolve().parent.parent / "tests" / "data"
       / "tf_data_grouping.json")


def cases(tf):
    """name -> a function of no arguments giving the pipeline's elements as Python values."""
    ds = tf.data.Dataset

    def values(d):
        return [tf.nest.map_structure(lambda t: t.numpy().tolist(), e) for e in d]

    return {
        "gbw": lambda: values(ds.range(7).group_by_window(
            lambda x: x % 2, lambda k, w: w.batch(3), window_size=3)),
        "gbw_size_func": lambda: values(ds.range(10).group_by_window(
            lambda x: x % 3, lambda k, w: w.batch(10).map(lambda b: (k, b)),
            window_size_func=lambda k: k + 1)),
        "gbw_tuple_flush_order": lambda: values(ds.range(12).map(lambda x: (x, x * 10))
                                                .group_by_window(lambda a, b: (5 - a) % 4,
                                                                 lambda k, w: w.batch(2),
                                                                 window_size=5)),
        "gbw_experimental": lambda: values(ds.range(9).apply(
            tf.data.experimental.group_by_window(lambda x: x % 3 // 2,
                                                 lambda k, w: w.batch(4), window_size=2))),
        "scan": lambda: values(ds.range(5).scan(tf.constant(0, tf.int64),
                                                lambda s, x: (s + x, s * 2))),
        "scan_structure": lambda: values(ds.from_tensor_slices(([1., 2., 3.], [4, 5, 6])).scan(
            (tf.constant(0.), tf.constant(1)),
            lambda s, e: ((s[0] + e[0], s[1] * e[1]), {"a": s[0], "b": e[1] - s[1]}))),
        "scan_growing_state": lambda: values(ds.range(4).scan(
            tf.constant([0], tf.int64), lambda s, x: (tf.concat([s, [x]], 0), tf.size(s)))),
        "scan_experimental": lambda: values(ds.range(4).apply(tf.data.experimental.scan(
            tf.constant(1.0), lambda s, x: (s * 2, s + tf.cast(x, tf.float32))))),
        "error_scan_dtype": lambda: values(ds.range(3).scan(tf.constant(0.),
                                                            lambda s, x: (x, x))),
        "error_scan_not_pair": lambda: ds.range(3).scan(tf.constant(0, tf.int64),
                                                        lambda s, x: s),
        "error_gbw_int32_key": lambda: values(ds.range(3).group_by_window(
            lambda x: tf.cast(x, tf.int32), lambda k, w: w, window_size=2)),
        "error_gbw_zero_window": lambda: values(ds.range(3).group_by_window(
            lambda x: x, lambda k, w: w, window_size=0)),
        "error_gbw_both_sizes": lambda: ds.range(3).group_by_window(
            lambda x: x, lambda k, w: w, window_size=2, window_size_func=lambda k: k),
        "error_gbw_no_size": lambda: ds.range(3).group_by_window(lambda x: x, lambda k, w: w),
        "error_gbw_not_a_dataset": lambda: ds.range(3).group_by_window(
            lambda x: x, lambda k, w: k, window_size=2),
    }


def run(tf):
    """Each case's values, or ``[error type name, message]``."""
    out = {}
    for name, case in cases(tf).items():
        try:
            out[name] = case()
        except Exception as e:  # the error is the reference
            out[name] = [type(e).__name__, str(e)]
        if name.startswith("error_") and not isinstance(out[name], list):
            out[name] = "no error"
    return out


def main():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    import tensorflow as tf

    out = {"tensorflow": tf.__version__, "cases": run(tf)}
    OUT.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
