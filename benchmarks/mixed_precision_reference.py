"""Reference data from real Keras 3.15 (TensorFlow backend) for ``keras.mixed_precision``:
the mixed-precision guide's model (Dense layers under 'mixed_float16', a float32 softmax)
trained with ``train_on_batch``, the dtypes Keras gives its layers, outputs and gradients,
and dynamic loss scaling where the first steps overflow float16 (the scale halves, the
step is skipped) and then grows every ``dynamic_growth_steps``; for
tests/test_mixed_precision.py.

Run in the bench environment (the tests never import Keras):

    /work/venv-bench/bin/python -m benchmarks.mixed_precision_reference
"""
import json
import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import numpy as np  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / \
    "mixed_precision_reference.json"


def inputs():
    """The data and initial weights (the test makes the same ones)."""
    rng = np.random.default_rng(11)
    x = rng.normal(size=(16, 6)).astype(np.float32)
    y = rng.integers(0, 4, 16)
    w = [rng.normal(scale=0.4, size=(6, 8)).astype(np.float32), np.zeros(8, np.float32),
         rng.normal(scale=0.4, size=(8, 4)).astype(np.float32), np.zeros(4, np.float32)]
    return x, y, w


def build(keras):
    inp = keras.Input(shape=(6,))
    h = keras.layers.Dense(8, activation="relu", name="dense_1")(inp)
    logits = keras.layers.Dense(4, name="dense_logits")(h)
    out = keras.layers.Activation("softmax", dtype="float32", name="predictions")(logits)
    return keras.Model(inp, out)


def main():
    import keras
    x, y, w = inputs()
    keras.mixed_precision.set_global_policy("mixed_float16")
    model = build(keras)
    model.set_weights(w)
    layers = {l.name: {"compute": l.compute_dtype, "variable": l.variable_dtype,
                       "dtype": l.dtype, "policy": l.dtype_policy.name}
              for l in model.layers[1:]}
    out_dtypes = {l.name: l.output.dtype for l in model.layers[1:]}
    opt = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.1),
                                              initial_scale=2.0 ** 20, dynamic_growth_steps=2)
    model.compile(optimizer=opt, loss="sparse_categorical_crossentropy")
    steps = []
    for _ in range(10):
        loss = model.train_on_batch(x, y)
        steps.append({"loss": float(loss), "scale": float(opt.dynamic_scale.numpy()),
                      "counter": int(opt.step_counter.numpy()),
                      "iterations": int(opt.iterations.numpy())})
    pred = np.asarray(model(x))
    # the guide's compile: a plain optimizer is wrapped
    model2 = build(keras)
    model2.compile(optimizer=keras.optimizers.RMSprop(), loss="sparse_categorical_crossentropy")
    wrapped = type(model2.optimizer).__name__
    keras.mixed_precision.set_global_policy("float32")
    data = {"layers": layers, "outputs": out_dtypes, "steps": steps,
            "weights": [np.asarray(v).tolist() for v in model.get_weights()],
            "prediction": pred.tolist(), "prediction_dtype": str(pred.dtype),
            "compiled_optimizer": wrapped, "lso_config": opt.get_config()["initial_scale"]}
    OUT.write_text(json.dumps(data))
    print("wrote", OUT)


if __name__ == "__main__":
    main()
