"""Keras 3's optimizers stepping a ``tf.IndexedSlices`` gradient with repeated rows (an
embedding's), on the TensorFlow backend, for tests/test_sparse_optimizers.py: the variable
after three steps of each optimizer. Keras squares (or takes the absolute value of) the
slices before it sums the rows that repeat, so these differ from the dense gradient's steps.
Also which gradients ``GradientTape.gradient`` gives as IndexedSlices (``TAPE``).
Run in the bench environment:

    /work/venv-bench/bin/python -m benchmarks.sparse_optimizer_reference
"""
import json
import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import numpy as np  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "sparse_optimizers.json"
# (name, constructor keyword arguments)
CASES = [
    ("SGD", {"learning_rate": 0.1}), ("SGD", {"learning_rate": 0.1, "momentum": 0.9}),
    ("SGD", {"learning_rate": 0.1, "momentum": 0.9, "nesterov": True}),
    ("Adam", {}), ("Adam", {"amsgrad": True}), ("AdamW", {}), ("Adamax", {}), ("Nadam", {}),
    ("RMSprop", {}), ("RMSprop", {"centered": True, "momentum": 0.5}), ("Adagrad", {}),
    ("Adadelta", {"learning_rate": 1.0}), ("Ftrl", {}), ("Lamb", {}), ("Lion", {}),
    ("Adafactor", {}),
    # clipping acts on the slices: a norm counts repeated rows apart, a value clips each
    ("Adam", {"clipnorm": 0.5}), ("Adam", {"global_clipnorm": 0.5}),
    ("Adam", {"clipvalue": 0.3}), ("SGD", {"learning_rate": 0.1, "clipvalue": 0.3}),
    ("Adam", {"weight_decay": 0.05}),
]


# GradientTape cases: an expression of v (a (4, 3) variable), c (a watched constant) and
# ids ([1, 1, 3]); the gradient with respect to the source named
TAPE = [
    ("tf.reduce_sum(tf.gather(v, ids) ** 2)", "v"),
    ("tf.reduce_sum(tf.gather(c, ids) ** 2)", "c"),
    ("tf.reduce_sum(tf.gather(v, ids)) + tf.reduce_sum(v * 2.0)", "v"),
    ("tf.reduce_sum(tf.gather(v, ids) * 3.0) + tf.reduce_sum(tf.gather(v, [0]))", "v"),
    ("tf.reduce_sum(tf.gather(v, [[0, 1], [2, 2]]) * tf.gather(c, [[3, 3], [1, 0]]))", "v"),
    ("tf.reduce_sum(tf.gather(v, ids)[:, 1])", "v"),
    ("tf.reduce_sum(tf.nn.embedding_lookup(v, ids) ** 3)", "v"),
    ("tf.reduce_sum(tf.gather(v, [0, 2], axis=1))", "v"),
    ("tf.reduce_sum(tf.gather(v * 1.0, ids))", "v"),
    ("tf.reduce_sum(tf.gather(v, ids)) + tf.reduce_sum(tf.stop_gradient(v))", "v"),
]


def tape_cases(tf):
    """Each TAPE case's gradient: its kind, and its indices and values, or dense value."""
    out = []
    v = tf.Variable(np.arange(12.0).reshape(4, 3).astype(np.float32))
    c = tf.constant((np.arange(12.0).reshape(4, 3) / 7.0).astype(np.float32))
    ids = tf.constant([1, 1, 3])
    for expr, wrt in TAPE:
        with tf.GradientTape() as tape:
            tape.watch(c)
            y = eval(expr, {"tf": tf, "v": v, "c": c, "ids": ids})  # noqa: S307 (our cases)
        g = tape.gradient(y, {"v": v, "c": c}[wrt])
        if isinstance(g, tf.IndexedSlices):
            out.append({"kind": "IndexedSlices", "indices": g.indices.numpy().tolist(),
                        "values": g.values.numpy().tolist(),
                        "dense_shape": g.dense_shape.numpy().tolist()})
        else:
            out.append({"kind": "dense", "value": g.numpy().tolist()})
    return out


def data():
    """The variable's start, and three steps' slices (values, indices) with repeated rows."""
    rng = np.random.default_rng(14)
    start = rng.standard_normal((6, 3)).astype(np.float32)
    steps = [(rng.standard_normal((5, 3)).astype(np.float32),
              np.array(ix, np.int32)) for ix in ([1, 1, 3, 1, 0], [4, 4, 4, 2, 1], [0, 5, 0, 5, 3])]
    return start, steps


def main():
    import keras
    import tensorflow as tf
    start, steps = data()
    out = {}
    for k, (name, kwargs) in enumerate(CASES):
        v = keras.Variable(start)
        opt = getattr(keras.optimizers, name)(**kwargs)
        for values, ix in steps:
            g = tf.IndexedSlices(tf.constant(values), tf.constant(ix), tf.constant([6, 3]))
            opt.apply_gradients([(g, v)])
        dense = keras.Variable(start)
        opt2 = getattr(keras.optimizers, name)(**kwargs)
        for values, ix in steps:
            g = np.zeros((6, 3), np.float32)
            np.add.at(g, ix, values)
            opt2.apply_gradients([(tf.constant(g), dense)])
        out[f"{k}:{name}"] = {"kwargs": kwargs, "sparse": np.asarray(v).tolist(),
                              "dense": np.asarray(dense).tolist()}
    OUT.write_text(json.dumps({"keras": keras.__version__, "tensorflow": tf.__version__,
                               "cases": out, "tape": tape_cases(tf)}, indent=1) + "\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
