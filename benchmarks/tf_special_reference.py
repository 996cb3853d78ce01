"""Reference data from real TensorFlow 2.21 for the special functions of
``tapegrad/ops/special_more_ops.py`` (Bessel I0/I1 and their scaled forms, ``erfinv``,
``ndtri``, ``erfcinv``, ``lbeta``, ``igamma``, ``igammac``, ``zeta``, ``betainc``,
``in_top_k``): values in float64 and float32 (edges, NaN and inf included), first and second
gradients, and the error class of each bad call, for tests/test_special_more.py.

Run in the bench environment (the tests never import TensorFlow):

    /work/venv-bench/bin/python -m benchmarks.tf_special_reference
"""
import json
import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / \
    "tf_special_reference.json"

NAN, INF = float("nan"), float("inf")
UNARY = ["bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e", "erfinv", "ndtri", "erfcinv"]
BINARY = ["igamma", "igammac", "zeta"]


def inputs():
    """The inputs of every case (the test reads them from the file)."""
    rng = np.random.default_rng(12)
    wide = np.concatenate([rng.uniform(-30, 30, 40), rng.uniform(-1, 1, 10),
                           [0.0, -0.0, 1e-300, 19.99, 20.0, 20.01, -20.0, 100.0, 700.0, 709.0,
                            710.0, 713.0, 800.0, INF, -INF, NAN]])
    unit = np.concatenate([rng.uniform(-1, 1, 40), 10.0 ** -rng.uniform(0, 20, 10),
                           1 - 10.0 ** -rng.uniform(1, 16, 10),
                           [-1.0, 1.0, 0.0, -0.0, 0.5, 1 - 1e-16, 1.5, -2.0, INF, NAN]])
    prob = np.concatenate([rng.uniform(0, 1, 40), 10.0 ** -rng.uniform(0, 300, 15),
                           1 - 10.0 ** -rng.uniform(1, 16, 10),
                           [0.0, 1.0, 0.5, 0.25, 0.75, -0.5, 2.0, INF, NAN]])
    two = np.concatenate([rng.uniform(0, 2, 40), 10.0 ** -rng.uniform(0, 300, 10),
                          [0.0, 2.0, 1.0, -1.0, 3.0, NAN]])
    ga = np.concatenate([rng.uniform(0.05, 40, 60), [0.5, 1000.0, 1e4, 0.0, -1.0, 1.0, 1.0, 2.0,
                                                     INF, NAN, 1.0, 3.0]])
    gx = np.concatenate([rng.uniform(0, 60, 60), [3.0, 1010.0, 1e4, 1.0, 1.0, -1.0, INF, 0.0,
                                                  1.0, 1.0, NAN, 1e-300]])
    zx = np.concatenate([rng.uniform(1.01, 20, 40), [1.0, 0.5, 2.0, 2.0, 3.0, 2.0, 3.0, 2.0, INF,
                                                     2.0, 4.0, NAN, 2.0, 30.0]])
    zq = np.concatenate([rng.uniform(0.01, 30, 40), [1.0, 1.0, 1.0, 0.0, 0.0, -1.0, -1.5, -1.5,
                                                     1.0, INF, 0.5, 1.0, NAN, -7.25]])
    ba = np.concatenate([rng.uniform(0.05, 30, 40), [0.0, 1.0, 1.0, -1.0, 2.0, 2.0, 2.0, 0.5, INF,
                                                     1.0, 1.0, 500.0]])
    bb = np.concatenate([rng.uniform(0.05, 30, 40), [1.0, 0.0, 1.0, 1.0, 3.0, 3.0, 3.0, 0.5, 1.0,
                                                     NAN, 1.0, 600.0]])
    bx = np.concatenate([rng.uniform(0, 1, 40), [0.5, 0.5, -0.1, 0.5, 0.0, 1.0, 0.3, 0.2, 0.5,
                                                 0.5, 1.5, 0.45]])
    return {"wide": wide, "unit": unit, "prob": prob, "two": two,
            "igamma": [ga, gx], "zeta": [zx, zq], "betainc": [ba, bb, bx],
            "lbeta": np.array([[1.0, 2.0], [0.5, 0.5], [0.0, 1.0], [3.5, 0.25], [-0.5, 2.0]]),
            "grad_points": np.array([0.0, -0.0, 0.5, -0.7, 0.93, 3.0, -12.5, 25.0]),
            "grad_probs": np.array([0.0, 0.02, 0.3, 0.5, 0.77, 0.999, 1.0]),
            "grad_igamma": [np.array([0.5, 2.0, 7.5, 30.0]), np.array([1.0, 3.0, 2.0, 35.0])],
            "grad_zeta": [np.array([2.0, 3.0, 4.5]), np.array([1.0, 3.0, 0.7])],
            "grad_betainc": [np.array([2.0, 3.0, 1.0, 0.7]), np.array([1.0, 3.0, 2.0, 1.0]),
                             np.array([0.3, 0.6, 0.2, 0.9])]}


UNARY_DOMAIN = {"bessel_i0": "wide", "bessel_i0e": "wide", "bessel_i1": "wide",
                "bessel_i1e": "wide", "erfinv": "unit", "ndtri": "prob", "erfcinv": "two"}
GRAD_DOMAIN = {"erfinv": "grad_points", "ndtri": "grad_probs", "erfcinv": "grad_probs"}

# (label, function, arguments as (values, dtype) or a Python value): TensorFlow's error class
ERRORS = [
    ("bessel_i0 of int32", "bessel_i0", [([1, 2], "int32")]),
    ("bessel_i1e of a Python int", "bessel_i1e", [1]),
    ("bessel_i0e of complex", "bessel_i0e", [([1.0], "complex128")]),
    ("erfinv of float16", "erfinv", [([0.5], "float16")]),
    ("erfinv of int32", "erfinv", [([0], "int32")]),
    ("ndtri of float16", "ndtri", [([0.5], "float16")]),
    ("erfcinv of int32", "erfcinv", [([0, 1], "int32")]),
    ("igamma of float16", "igamma", [([1.0], "float16"), ([2.0], "float16")]),
    ("igamma of ints", "igamma", [1, 2]),
    ("igamma of float32 and float64", "igamma", [([1.0], "float32"), ([2.0], "float64")]),
    ("igammac of float64 and float32", "igammac", [([1.0], "float64"), ([2.0], "float32")]),
    ("zeta of float16", "zeta", [([2.0], "float16"), ([1.0], "float16")]),
    ("betainc of float16", "betainc", [([1.0], "float16"), ([2.0], "float16"),
                                       ([0.5], "float16")]),
    ("betainc of shapes [2] and [2, 1]", "betainc", [([1.0, 2.0], "float32"), 2.0,
                                                      ([[0.1], [0.5]], "float32")]),
    ("betainc of shapes [2] and [3]", "betainc", [([1.0, 2.0], "float32"),
                                                   ([2.0, 3.0, 4.0], "float32"), 0.5]),
    ("lbeta of a scalar", "lbeta", [2.0]),
    ("lbeta of ints", "lbeta", [[1, 2]]),
    ("in_top_k of 1-D predictions", "in_top_k", [([1], "int32"), ([0.1, 0.2], "float32"), 1]),
    ("in_top_k of 2-D targets", "in_top_k", [([[1]], "int32"), ([[0.1, 0.2]], "float32"), 1]),
    ("in_top_k of a vector k", "in_top_k", [([1], "int32"), ([[0.1, 0.2]], "float32"), [1, 1]]),
    ("in_top_k of a short target", "in_top_k", [([1], "int32"),
                                                ([[0.1, 0.2], [0.3, 0.1]], "float32"), 1]),
    ("in_top_k of int predictions", "in_top_k", [([1], "int32"), ([[1, 2]], "int32"), 1]),
    ("in_top_k of a float64 array", "in_top_k", [([1], "int32"), np.array([[0.1, 0.2]]), 1]),
    ("in_top_k of float targets", "in_top_k", [np.array([1.0]), ([[0.1, 0.2]], "float32"), 1]),
    ("in_top_k of int64 targets and k", "in_top_k", [([1], "int64"), ([[0.1, 0.2]], "float32"),
                                                     ([2], "int64")]),
]

TOP_K_PREDICTIONS = [[0.1, 0.3, 0.3, 0.2], [0.5, NAN, 0.1, 0.2], [INF, 0.1, 0.2, 0.3],
                     [0.1, 0.2, 0.3, 0.4], [-INF, 1.0, 0.0, 0.0], [0.2, 0.2, 0.2, 0.2]]
TOP_K_TARGETS = [[1, 0, 1, 3, 2, 3], [4, -1, 0, 0, 0, 1]]


def _floats(a):
    return [float(v) for v in np.asarray(a, np.float64).reshape(-1)]


def _tf_arg(tf, a):
    if isinstance(a, tuple):
        return tf.constant(a[0], getattr(tf, a[1]))
    return a


def main():
    import tensorflow as tf
    data = {k: (_floats(v) if isinstance(v, np.ndarray) else [_floats(x) for x in v])
            for k, v in inputs().items()}
    data["lbeta_shape"] = [5, 2]
    out = {"inputs": data, "values": {}, "values32": {}, "grads": {}, "grads2": {},
           "errors": {}, "in_top_k": []}
    ins = inputs()
    for name in UNARY:
        f = getattr(tf.math, name)
        x = ins[UNARY_DOMAIN[name]]
        out["values"][name] = _floats(f(tf.constant(x)).numpy())
        out["values32"][name] = _floats(f(tf.constant(x.astype(np.float32))).numpy())
        g = tf.constant(ins[GRAD_DOMAIN.get(name, "grad_points")])
        with tf.GradientTape() as t2:
            t2.watch(g)
            with tf.GradientTape() as t1:
                t1.watch(g)
                y = f(g)
            d1 = t1.gradient(y, g)
        out["grads"][name] = _floats(d1.numpy())
        out["grads2"][name] = _floats(t2.gradient(d1, g).numpy())
    for name in BINARY + ["betainc"]:
        f = getattr(tf.math, name)
        args = ins["igamma" if name == "igammac" else name]
        out["values"][name] = _floats(f(*[tf.constant(a) for a in args]).numpy())
        out["values32"][name] = _floats(f(*[tf.constant(a.astype(np.float32))
                                            for a in args]).numpy())
        gargs = [tf.constant(a) for a in ins["grad_" + ("igamma" if name == "igammac"
                                                         else name)]]
        with tf.GradientTape() as t:
            t.watch(gargs)
            y = f(*gargs)
        out["grads"][name] = [None if g is None else _floats(g.numpy())
                              for g in t.gradient(y, gargs)]
    out["values"]["igamma_grad_a"] = _floats(tf.raw_ops.IgammaGradA(
        a=tf.constant(ins["igamma"][0]), x=tf.constant(ins["igamma"][1])).numpy())
    lb = tf.constant(ins["lbeta"])
    with tf.GradientTape() as t:
        t.watch(lb)
        y = tf.math.lbeta(lb)
    out["values"]["lbeta"] = _floats(y.numpy())
    out["grads"]["lbeta"] = _floats(t.gradient(y, lb).numpy())
    out["values"]["lbeta_empty"] = _floats(tf.math.lbeta(tf.zeros([2, 0], tf.float64)).numpy())
    # second order of igamma in a: IgammaGradA has no gradient
    a = tf.constant([0.5, 2.0], tf.float64)
    try:
        with tf.GradientTape() as t2:
            t2.watch(a)
            with tf.GradientTape() as t1:
                t1.watch(a)
                y = tf.math.igamma(a, tf.constant([1.0, 3.0], tf.float64))
            d = t1.gradient(y, a)
        t2.gradient(d, a)
        out["errors"]["igamma second order in a"] = None
    except Exception as e:  # noqa: BLE001 - the class is the datum
        out["errors"]["igamma second order in a"] = [type(e).__name__, str(e)[:200]]
    for k in (0, 1, 2, 3, 4, 5, -1):
        for targets in TOP_K_TARGETS:
            for dt in ("float32", "float64", "float16"):
                try:
                    r = tf.math.in_top_k(tf.constant(targets, tf.int32),
                                         tf.constant(TOP_K_PREDICTIONS, getattr(tf, dt)), k)
                    r = r.numpy().tolist()
                except Exception as e:  # noqa: BLE001 - the class is the datum
                    r = type(e).__name__
                out["in_top_k"].append([k, targets, dt, r])
    out["in_top_k_predictions"] = TOP_K_PREDICTIONS
    for label, name, args in ERRORS:
        try:
            getattr(tf.math, name)(*[_tf_arg(tf, a) for a in args])
            out["errors"][label] = None
        except Exception as e:  # noqa: BLE001 - the class is the datum
            out["errors"][label] = [type(e).__name__, str(e)[:200]]
    out["aliases"] = {"nn.in_top_k": tf.nn.in_top_k is tf.math.in_top_k,
                      "special": sorted(n for n in dir(tf.math.special) if n.startswith("bessel_i"))}
    OUT.write_text(json.dumps(out, indent=None, separators=(",", ":")) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
