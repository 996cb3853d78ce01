"""Reference data from real TensorFlow 2.21 for ``tf.math.polyval``,
``tf.math.confusion_matrix``, ``tf.searchsorted``, ``tf.histogram_fixed_width`` (and
``_bins``), ``tf.dynamic_partition``, ``tf.dynamic_stitch``,
``tf.nn.weighted_cross_entropy_with_logits`` and ``tf.nn.log_poisson_loss``: values,
gradients and the errors of bad input, for tests/test_binning_ops.py; and
``tf.math.cumulative_logsumexp``'s (tf_cumulative_logsumexp_reference.json).

Run in the bench environment (the tests never import TensorFlow):

    /work/venv-bench/bin/python -m benchmarks.tf_binning_reference
"""
import json
import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / \
    "tf_binning_reference.json"


def inputs():
    """The inputs of every case (the test makes the same ones)."""
    rng = np.random.default_rng(7)
    f = lambda *s: rng.normal(size=s).astype(np.float32)  # noqa: E731
    return {
        "x": f(3, 4), "coeffs": [f(3, 4), f(3, 4), f(), f(1, 4)],
        "labels": rng.integers(0, 5, 40), "preds": rng.integers(0, 5, 40),
        "weights": rng.uniform(size=40).astype(np.float32),
        "sorted": np.sort(rng.integers(0, 20, (3, 9)).astype(np.float32), axis=-1),
        "queries": rng.integers(-2, 22, (3, 7)).astype(np.float32),
        "hist": (rng.normal(size=(5, 40)) * 4).astype(np.float32),
        "edges": np.array([-3.0, -1.0, 0.0, 0.5, 1.0, 2.5, 3.0, 7.0], np.float32),
        "data": f(6, 2), "parts": np.array([2, 0, 1, 0, 2, 2]),
        "stitch_idx": [np.array([[0, 5], [2, 1]]), np.array([5, 3, 4])],
        "stitch_data": [f(2, 2, 3), f(3, 3)],
        "logits": (f(4, 5) * 6), "wlabels": rng.uniform(size=(4, 5)).astype(np.float32),
        "log_input": f(4, 5), "targets": rng.integers(0, 6, (4, 5)).astype(np.float32),
    }


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the reference records whatever TF raises
        return [type(e).__name__, str(e).split("\n")[0]]
    return None


def main():
    import tensorflow as tf
    d = inputs()
    out = {}
    x = tf.constant(d["x"])
    cs = [tf.constant(c) for c in d["coeffs"]]
    with tf.GradientTape() as t:
        t.watch([x] + cs)
        y = tf.math.polyval(cs, x)
    gx, *gc = t.gradient(y, [x] + cs)
    out["polyval"] = [y.numpy().tolist(), gx.numpy().tolist(), [g.numpy().tolist() for g in gc]]
    out["polyval_int"] = int(tf.math.polyval([2, 3, -1], tf.constant(4)))
    cm = tf.math.confusion_matrix
    out["cm"] = cm(d["labels"], d["preds"]).numpy().tolist()
    out["cm_w"] = cm(d["labels"], d["preds"], num_classes=7, weights=d["weights"],
                     dtype=tf.float32).numpy().tolist()
    out["ss_left"] = tf.searchsorted(d["sorted"], d["queries"]).numpy().tolist()
    out["ss_right"] = tf.searchsorted(d["sorted"], d["queries"], side="right",
                                      out_type=tf.int64).numpy().tolist()
    out["hist"] = tf.histogram_fixed_width(d["hist"], [-5.0, 6.0], nbins=7).numpy().tolist()
    out["hist_edges"] = tf.histogram_fixed_width(d["edges"], [-1.0, 3.0], nbins=4).numpy().tolist()
    out["bins"] = tf.histogram_fixed_width_bins(d["hist"], [-5.0, 6.0], nbins=7).numpy().tolist()
    out["bins_edges"] = tf.histogram_fixed_width_bins(d["edges"], [-1.0, 3.0],
                                                      nbins=4).numpy().tolist()
    data = tf.constant(d["data"])
    with tf.GradientTape() as t:
        t.watch(data)
        parts = tf.dynamic_partition(data, d["parts"], 4)
        loss = sum(tf.reduce_sum(p * (i + 1.0) ** 2) for i, p in enumerate(parts))
    out["dp"] = [p.numpy().tolist() for p in parts]
    out["dp_grad"] = t.gradient(loss, data).numpy().tolist()
    sd = [tf.constant(s) for s in d["stitch_data"]]
    with tf.GradientTape() as t:
        t.watch(sd)
        st = tf.dynamic_stitch(d["stitch_idx"], sd)
        loss = tf.reduce_sum(st * tf.reshape(tf.range(18.0), (6, 3)))
    out["ds"] = st.numpy().tolist()
    out["ds_grad"] = [g.numpy().tolist() for g in t.gradient(loss, sd)]
    logits, wl = tf.constant(d["logits"]), tf.constant(d["wlabels"])
    with tf.GradientTape() as t:
        t.watch([logits, wl])
        w = tf.nn.weighted_cross_entropy_with_logits(wl, logits, pos_weight=3.0)
    out["wce"] = [w.numpy().tolist()] + [g.numpy().tolist() for g in t.gradient(w, [logits, wl])]
    li, tg = tf.constant(d["log_input"]), tf.constant(d["targets"])
    for full in (False, True):
        with tf.GradientTape() as t:
            t.watch([li, tg])
            v = tf.nn.log_poisson_loss(tg, li, compute_full_loss=full)
        out[f"lpl_{full}"] = [v.numpy().tolist()] + [g.numpy().tolist()
                                                    for g in t.gradient(v, [li, tg])]
    out["errors"] = {
        "polyval_tensor": _err(lambda: tf.math.polyval(tf.constant([1.0]), 2.0)),
        "cm_negative": _err(lambda: cm([-1, 2], [2, 2])),
        "cm_bound": _err(lambda: cm([1, 5], [2, 2], num_classes=3)),
        "cm_shape": _err(lambda: cm([1, 2], [2, 2, 1])),
        "ss_side": _err(lambda: tf.searchsorted([0.0, 3.0], [2.0], side="middle")),
        "ss_batch": _err(lambda: tf.searchsorted([[0.0, 3.0, 9.0]], [[2.0], [3.0]])),
        "ss_dtype": _err(lambda: tf.searchsorted([0.0, 3.0, 9.0], [2])),
        "hist_range": _err(lambda: tf.histogram_fixed_width([1.0], [5.0, 0.0], nbins=3)),
        "hist_nbins": _err(lambda: tf.histogram_fixed_width([1.0], [0.0, 5.0], nbins=0)),
        "dp_range": _err(lambda: tf.dynamic_partition([1, 2], [0, 3], 2)),
        "dp_shape": _err(lambda: tf.dynamic_partition([1, 2], [0], 2)),
        "ds_shape": _err(lambda: tf.dynamic_stitch([[0, 3]], [[1.0, 2.0, 3.0]])),
        "wce_shape": _err(lambda: tf.nn.weighted_cross_entropy_with_logits(
            [0.0, 1.0], [-2.0, 1.0, 3.0], pos_weight=2.0)),
        "lpl_shape": _err(lambda: tf.nn.log_poisson_loss([0.0, 1.0], [0.5, 1.0, -1.0])),
    }
    OUT.write_text(json.dumps(out))
    print("wrote", OUT)




def cumulative_cases():
    """(name, input, axis, exclusive, reverse) of the cumulative_logsumexp cases."""
    rng = np.random.default_rng(3)
    x = (rng.normal(size=(3, 5)) * 3).astype(np.float32)
    wide = np.array([0.0, 1000.0, -np.inf, 3.0, -50.0, 20.0], np.float32)
    return [("a0", x, 0, False, False), ("a1", x, 1, False, False),
            ("a1_excl", x, 1, True, False), ("a1_rev", x, -1, False, True),
            ("a0_both", x, 0, True, True), ("wide", wide, 0, False, False),
            ("f64", x.astype(np.float64), 1, False, True)]


def cumulative_main():
    import tensorflow as tf
    out = {}
    for name, x, axis, exclusive, reverse in cumulative_cases():
        t_x = tf.constant(x)
        with tf.GradientTape() as t:
            t.watch(t_x)
            y = tf.math.cumulative_logsumexp(t_x, axis=axis, exclusive=exclusive,
                                             reverse=reverse)
            w = tf.cast(tf.reshape(tf.range(tf.size(y)), y.shape), y.dtype)
            loss = tf.reduce_sum(tf.where(tf.math.is_finite(y), y * w, 0.0))
        out[name] = [y.numpy().tolist(), t.gradient(loss, t_x).numpy().tolist()]
    out["errors"] = {
        "int": _err(lambda: tf.math.cumulative_logsumexp([1, 2])),
        "axis": _err(lambda: tf.math.cumulative_logsumexp([1.0, 2.0], axis=2)),
    }
    path = OUT.with_name("tf_cumulative_logsumexp_reference.json")
    path.write_text(json.dumps(out))  # (Python's json keeps inf and NaN)
    print("wrote", path)


if __name__ == "__main__":
    main()
    cumulative_main()
