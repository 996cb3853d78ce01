"""Reference histograms from TensorFlow 2.21 with TensorBoard 2.21, for
tests/test_summary_reference.py: what ``tf.summary.histogram`` writes (its tensor of
``[buckets, 3]`` float64 rows) for data with NaN, infinities, one value, no values, integers
and bools, at several bucket counts.

Run in the bench environment (it needs tensorflow and tensorboard; the tests never import
them):

    /work/venv-bench/bin/python -m benchmarks.tf_summary_reference
"""
import glob
import os
import pathlib
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

OUT = (pathlib.Path(__file__).resolve().parent.parent / "tests" / "data"
       / "tf_histogram_reference.npz")


def cases():
    rng = np.random.default_rng(0)
    inf, nan = np.inf, np.nan
    return {
        "normal": (rng.normal(size=1000).astype(np.float32), [30, 5, 1]),
        "uniform_wide": (rng.uniform(-1e6, 1e6, 200), [30, 7]),
        "constant": (np.full(7, 2.5, np.float32), [30, 3]),
        "empty": (np.zeros(0, np.float32), [30, 4]),
        "ints": (np.arange(10, dtype=np.int32), [30, 5, 3]),
        "two": (np.array([0.0, 1.0]), [30, 5]),
        "with_nan": (np.array([1.0, nan, 2.0, 3.0]), [4, 30]),
        "with_inf": (np.array([1.0, inf, 2.0]), [4, 30]),
        "with_minus_inf": (np.array([-inf, 1.0, 2.0]), [4]),
        "both_infs": (np.array([-inf, 0.0, inf]), [4]),
        "all_inf": (np.array([inf, inf]), [3]),
        "no_buckets": (np.arange(3.0), [0, -1]),
        "bools": (np.array([True, False, True]), [3]),
        "matrix": (np.arange(12.0).reshape(3, 4), [3]),
        "half": (rng.normal(size=50).astype(np.float16), [10]),
        "tiny_span": (np.array([1.0, 1.0 + 2.0 ** -52, 1.0]), [30]),
    }


def main():
    import tensorflow as tf
    from tensorflow.python.summary.summary_iterator import summary_iterator

    logdir = tempfile.mkdtemp()
    writer = tf.summary.create_file_writer(logdir)
    data, tags = {}, []
    with writer.as_default():
        for name, (x, counts) in cases().items():
            data[f"{name}/data"] = x
            for b in counts:
                tag = f"{name}/b{b}"
                tf.summary.histogram(tag, x, step=0, buckets=b)
                tags.append(tag)
    writer.flush()
    (path,) = glob.glob(os.path.join(logdir, "*"))
    for event in summary_iterator(path):
        for value in event.summary.value:
            data[value.tag] = tf.make_ndarray(value.tensor)
    missing = [t for t in tags if t not in data]
    if missing:
        raise SystemExit(f"TensorFlow wrote no histogram for {missing}")
    np.savez(OUT, **data)
    print(f"wrote {len(tags)} histograms to {OUT}")


if __name__ == "__main__":
    main()
