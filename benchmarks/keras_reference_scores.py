"""Reference values from real Keras 3 and TensorFlow for tests/test_keras_scores.py: the
F-beta, F-1 and R2 metrics (results after each of two updates), an R2 metric in
``compile()`` (fit's history), Ftrl and Adafactor trajectories over 20 steps, and
``tf.math.rint`` / ``tf.dtypes.saturate_cast`` on special values.

Run in the bench environment (it needs keras and tensorflow; the tests never import them):

    /work/venv-bench/bin/python -m benchmarks.keras_reference_scores

Everything runs on Keras's TensorFlow backend. Inputs are drawn here with NumPy (seeded);
the manifest is JSON inside the same ``.npz``.
"""
import os
import pathlib
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402

from benchmarks import reference_parts  # noqa: E402

OUT = (pathlib.Path(__file__).resolve().parent.parent / "tests" / "data"
       / "keras_reference_scores.npz")

# (case name, class, config, kind of data, with sample weights)
METRICS = [
    ("f1_none", "F1Score", {}, "onehot", False),
    ("f1_threshold", "F1Score", {"threshold": 0.5}, "multilabel", False),
    ("f1_micro", "F1Score", {"average": "micro", "threshold": 0.4}, "multilabel", True),
    ("f1_macro", "F1Score", {"average": "macro"}, "onehot", True),
    ("f1_weighted", "F1Score", {"average": "weighted", "threshold": 0.3}, "multilabel",
     False),
    ("fbeta_2", "FBetaScore", {"beta": 2.0}, "onehot", False),
    ("fbeta_half_micro", "FBetaScore", {"beta": 0.5, "average": "micro",
                                        "threshold": 0.6}, "multilabel", True),
    ("fbeta_weighted", "FBetaScore", {"beta": 1.5, "average": "weighted"}, "onehot", True),
    ("r2", "R2Score", {}, "regression", False),
    ("r2_weighted", "R2Score", {}, "regression", True),
    ("r2_variance_weighted", "R2Score", {"class_aggregation": "variance_weighted_average"},
     "regression", False),
    ("r2_raw", "R2Score", {"class_aggregation": None}, "regression", True),
    ("r2_adjusted", "R2Score", {"num_regressors": 2}, "regression", False),
    ("r2_one_column", "R2Score", {}, "column", False),
]

# (case name, class, config, steps); the gradient of step t is 2 (v - target) + noise_t
OPTIMIZERS = [
    ("ftrl", "Ftrl", {}, 20),
    ("ftrl_lr", "Ftrl", {"learning_rate": 0.1}, 20),
    ("ftrl_regularized", "Ftrl", {"learning_rate": 0.2, "l1_regularization_strength": 0.01,
                                  "l2_regularization_strength": 0.05,
                                  "l2_shrinkage_regularization_strength": 0.02,
                                  "beta": 0.3, "learning_rate_power": -0.7,
                                  "initial_accumulator_value": 0.5}, 20),
    ("ftrl_power0_clip", "Ftrl", {"learning_rate": 0.05, "learning_rate_power": 0.0,
                                  "initial_accumulator_value": 0.0, "clipnorm": 1.0}, 20),
    ("adafactor", "Adafactor", {}, 20),
    ("adafactor_lr", "Adafactor", {"learning_rate": 0.05, "relative_step": False}, 20),
    ("adafactor_options", "Adafactor", {"learning_rate": 0.5, "beta_2_decay": -0.5,
                                        "epsilon_2": 1e-2, "clip_threshold": 0.5,
                                        "weight_decay": 0.01}, 20),
    ("adafactor_schedule", "Adafactor", {"schedule": ["ExponentialDecay", {
        "initial_learning_rate": 0.3, "decay_steps": 5, "decay_rate": 0.5}]}, 20),
]
SHAPES = [(3,), (4, 5), (2, 3, 4), ()]


def _metric_data(rng, kind, n=12, classes=4):
    if kind == "onehot":
        labels = rng.integers(0, classes, n)
        y_true = np.eye(classes, dtype="float32")[labels]
        y_pred = rng.dirichlet(np.ones(classes), n).astype("float32")
    elif kind == "multilabel":
        y_true = rng.integers(0, 2, (n, classes)).astype("float32")
        y_pred = rng.uniform(0, 1, (n, classes)).astype("float32")
    elif kind == "regression":
        y_true = rng.normal(size=(n, 3)).astype("float32")
        y_pred = (y_true + 0.5 * rng.normal(size=(n, 3))).astype("float32")
    else:  # one column given as a vector, as a regression model's targets often are
        y_true = rng.normal(size=(n,)).astype("float32")
        y_pred = (y_true[:, None] + 0.3 * rng.normal(size=(n, 1))).astype("float32")
    return y_true, y_pred


def metric_cases(arrays, manifest):
    import keras

    rng = np.random.default_rng(20261211)
    manifest["backend"] = f"keras {keras.__version__}, {keras.backend.backend()}"
    for name, cls, config, kind, weighted in METRICS:
        metric = getattr(keras.metrics, cls)(**config)
        p = f"metric/{name}"
        for batch in range(2):
            y_true, y_pred = _metric_data(rng, kind)
            sw = rng.uniform(0, 2, len(y_true)).astype("float32") if weighted else None
            metric.update_state(y_true, y_pred, sample_weight=sw)
            arrays[f"{p}/y_true{batch}"], arrays[f"{p}/y_pred{batch}"] = y_true, y_pred
            if weighted:
                arrays[f"{p}/sample_weight{batch}"] = sw
            arrays[f"{p}/result{batch}"] = np.asarray(metric.result())
        manifest["metrics"].append({"name": name, "class": cls, "config": config,
                                    "weighted": weighted, "get_config": metric.get_config(),
                                    "variables": [v.name for v in metric.variables]})


def compile_case(arrays, manifest):
    """An R2 and an F1 metric in compile(): a regression MLP and a classifier, 2 epochs."""
    import keras

    rng = np.random.default_rng(20261212)
    x = rng.normal(size=(20, 4)).astype("float32")
    for name, units, loss, metrics, y in (
            ("regression", 2, "mse", ["r2_score", keras.metrics.R2Score(name="r2")],
             (x[:, :2] * [1.5, -0.5] + 0.1 * rng.normal(size=(20, 2))).astype("float32")),
            ("classifier", 3, "categorical_crossentropy",
             [keras.metrics.F1Score(average="macro"), "f1_score"],
             np.eye(3, dtype="float32")[rng.integers(0, 3, 20)])):
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(6, activation="tanh"),
                                  keras.layers.Dense(units, activation=None if units == 2
                                                     else "softmax")])
        init = [rng.normal(size=w.shape).astype("float32") * 0.5 for w in model.weights]
        model.set_weights(init)
        model.compile(optimizer=keras.optimizers.SGD(0.1), loss=loss, metrics=metrics)
        hist = model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
        logs = model.evaluate(x, y, verbose=0, return_dict=True)
        p = f"compile/{name}"
        arrays[f"{p}/x"], arrays[f"{p}/y"] = x, y
        for i, w in enumerate(init):
            arrays[f"{p}/init{i}"] = w
        for k in sorted(hist.history):
            arrays[f"{p}/history/{k}"] = np.asarray(hist.history[k], "float32")
        for k in sorted(logs):
            arrays[f"{p}/evaluate/{k}"] = np.asarray(logs[k], "float32")
        manifest["compile"].append({"name": name, "history": sorted(hist.history),
                                    "evaluate": sorted(logs)})


def optimizer_cases(arrays, manifest):
    import keras

    rng = np.random.default_rng(20261213)
    for name, cls, config, steps in OPTIMIZERS:
        config = dict(config)
        schedule = config.pop("schedule", None)
        if schedule:
            config["learning_rate"] = getattr(keras.optimizers.schedules, schedule[0])(
                **schedule[1])
        opt = getattr(keras.optimizers, cls)(**config)
        start = [rng.normal(size=s).astype("float32") for s in SHAPES]
        targets = [rng.normal(size=s).astype("float32") for s in SHAPES]
        noise = [[rng.normal(size=s).astype("float32") * 0.3 for s in SHAPES]
                 for _ in range(steps)]
        variables = [keras.Variable(v, name=f"v{i}") for i, v in enumerate(start)]
        p = f"optimizer/{name}"
        for t in range(steps):
            grads = [2.0 * (v.numpy() - tg) + nz for v, tg, nz in zip(variables, targets,
                                                                     noise[t])]
            opt.apply_gradients(zip(grads, variables))
            for i, v in enumerate(variables):
                arrays[f"{p}/step{t}/var{i}"] = v.numpy()
        for i in range(len(SHAPES)):
            arrays[f"{p}/start{i}"], arrays[f"{p}/target{i}"] = start[i], targets[i]
            arrays[f"{p}/noise{i}"] = np.stack([nz[i] for nz in noise])
        manifest["optimizers"].append({
            "name": name, "class": cls, "config": dict(OPTIMIZERS[[o[0] for o in OPTIMIZERS]
                                                                  .index(name)][2]),
            "steps": steps,
            "variables": [[v.name, list(v.shape), str(v.dtype)] for v in opt.variables],
            "get_config": {k: v for k, v in opt.get_config().items()
                           if not isinstance(v, dict)}})


def math_cases(arrays, manifest):
    import tensorflow as tf

    special = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, -0.0, 0.0, 0.49999997, 1e8 + 0.5, np.nan,
               np.inf, -np.inf, 3.7, -3.2, 127.9, 128.0, 255.5, 256.0, -129.0, 300.7,
               65504.0, 65520.0, 70000.0, 2.0 ** 31, -2.0 ** 31, 2.0 ** 32, 3e9, 2.0 ** 63,
               2.0 ** 64, -2.0 ** 63, 1e30, -1e30]
    for dtype in ("float32", "float64"):  # TensorFlow has no CPU kernel for float16's
        x = np.array(special, dtype)
        arrays[f"rint/{dtype}/x"] = x
        arrays[f"rint/{dtype}/y"] = tf.math.rint(x).numpy()
    ints = {"int8": [-128, 127, 0, 5], "int32": [-2 ** 31, 2 ** 31 - 1, -1, 0, 300, 70000],
            "int64": [-2 ** 63, 2 ** 63 - 1, 2 ** 40, -3, 0, 255, 256],
            "uint8": [0, 255, 7], "uint32": [0, 2 ** 32 - 1, 2 ** 31], "int16": [-5, 300]}
    outs = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "float16",
            "float32", "float64"]
    for src in ("float32", "float64", "float16", *ints):
        if src.startswith("float"):
            x = np.array([v for v in special if src != "float16" or abs(v) < 6e4
                          or not np.isfinite(v)], src)
        else:
            x = np.array(ints[src], src)
        arrays[f"saturate/{src}/x"] = x
        ran = []
        for dst in outs:
            try:
                with np.errstate(all="ignore"):
                    y = tf.dtypes.saturate_cast(tf.constant(x), dst).numpy()
            except tf.errors.NotFoundError:  # no CPU kernel (uint32's clip)
                continue
            arrays[f"saturate/{src}/{dst}"] = y
            ran.append(dst)
        manifest["saturate"].append({"src": src, "outs": ran})
    # gradients: through the clamp (1 inside the target's range, 0 outside)
    x = tf.Variable(np.array([1.3, 70000.0, -70000.0, 300.0, np.inf], "float32"))
    with tf.GradientTape() as tape:
        y = tf.dtypes.saturate_cast(x, tf.float16)
    arrays["saturate_grad/x"] = x.numpy()
    arrays["saturate_grad/float16"] = tape.gradient(y, x).numpy()


PARTS = {"metrics": ("tensorflow", metric_cases), "compile": ("tensorflow", compile_case),
         "optimizers": ("tensorflow", optimizer_cases), "math": ("tensorflow", math_cases)}
KEYS = ("metrics", "compile", "optimizers", "saturate")


def main():
    manifest = reference_parts.main("benchmarks.keras_reference_scores", PARTS, OUT, KEYS)
    print(f"wrote {OUT}: {len(manifest['metrics'])} metrics, {len(manifest['compile'])} "
          f"compiled models, {len(manifest['optimizers'])} optimizers, "
          f"{len(manifest['saturate'])} saturate_cast sources ({manifest['backend']})")


if __name__ == "__main__":
    if len(sys.argv) == 3:
        reference_parts.run_part(PARTS, sys.argv[1], sys.argv[2], KEYS)
    else:
        main()
