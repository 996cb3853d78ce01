"""Keras 3's optimizer variables, in order, for tests/test_keras_optimizer_order.py: for
every optimizer tapegrad has (and its variants: SGD momentum/nesterov, Adam amsgrad,
RMSprop momentum/centered, ...) built on a model of two same-shaped Dense layers, the
names, paths, shapes and dtypes of ``optimizer.variables``, and their values after two
steps with fixed gradients, and again after a third. Run in the bench environment:

    /work/venv-bench/bin/python -m benchmarks.keras_optimizer_reference

It writes tests/data/keras_optimizer_reference.npz (arrays, ``<case>/<k>``) and
tests/data/keras_optimizer_reference.json (per case: constructor arguments and the
variables' names, paths, shapes, dtypes).
"""
import json
import os
import pathlib

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data"

# case -> (class name, constructor arguments)
CASES = {
    "sgd": ("SGD", {"learning_rate": 0.1}),
    "sgd_momentum": ("SGD", {"learning_rate": 0.1, "momentum": 0.9}),
    "sgd_nesterov": ("SGD", {"learning_rate": 0.1, "momentum": 0.9, "nesterov": True}),
    "adam": ("Adam", {"learning_rate": 0.01}),
    "adam_amsgrad": ("Adam", {"learning_rate": 0.01, "amsgrad": True}),
    "adamw": ("AdamW", {"learning_rate": 0.01}),
    "adamw_amsgrad": ("AdamW", {"learning_rate": 0.01, "amsgrad": True}),
    "adamax": ("Adamax", {"learning_rate": 0.01}),
    "nadam": ("Nadam", {"learning_rate": 0.01}),
    "rmsprop": ("RMSprop", {"learning_rate": 0.01}),
    "rmsprop_momentum": ("RMSprop", {"learning_rate": 0.01, "momentum": 0.5}),
    "rmsprop_centered": ("RMSprop", {"learning_rate": 0.01, "centered": True}),
    "rmsprop_momentum_centered": ("RMSprop", {"learning_rate": 0.01, "momentum": 0.5,
                                              "centered": True}),
    "adagrad": ("Adagrad", {"learning_rate": 0.1}),
    "adadelta": ("Adadelta", {"learning_rate": 1.0}),
    "ftrl": ("Ftrl", {"learning_rate": 0.1}),
    "ftrl_shrinkage": ("Ftrl", {"learning_rate": 0.1, "l2_shrinkage_regularization_strength":
                                0.01, "beta": 0.5}),
    "lion": ("Lion", {"learning_rate": 0.01}),
    "adafactor": ("Adafactor", {"learning_rate": 0.01}),
    "lamb": ("Lamb", {"learning_rate": 0.01}),
}


def model_and_gradients(keras):
    """Two Dense layers of the same shapes (kernels 3x3, biases 3): a slot put on the
    wrong variable has the right shape, and only its values tell."""
    rng = np.random.default_rng(20261209)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(3, name="first"),
                              keras.layers.Dense(3, name="second")])
    for v in model.trainable_variables:
        v.assign(rng.normal(size=v.shape).astype("float32"))
    grads = [[rng.normal(size=v.shape).astype("float32") for v in model.trainable_variables]
             for _ in range(3)]
    return model, grads


def main():
    import keras

    meta, arrays = {"keras_version": keras.__version__, "cases": {}}, {}
    for case, (cls, kwargs) in CASES.items():
        model, grads = model_and_gradients(keras)
        opt = getattr(keras.optimizers, cls)(**kwargs)
        opt.build(model.trainable_variables)
        if case == "sgd":
            arrays["initial_weights"] = np.stack([v.numpy() for v in model.trainable_variables
                                                  if v.shape == (3, 3)])
            arrays["initial_biases"] = np.stack([v.numpy() for v in model.trainable_variables
                                                 if v.shape == (3,)])
            for s, g in enumerate(grads):
                for k, a in enumerate(g):
                    arrays[f"gradient/{s}/{k}"] = a
        for g in grads[:2]:
            opt.apply_gradients(zip(g, model.trainable_variables))
        meta["cases"][case] = {
            "class": cls, "kwargs": kwargs, "optimizer_name": opt.name,
            "model_variables": [v.path for v in model.trainable_variables],
            "variables": [{"name": v.name, "path": v.path, "shape": list(v.shape),
                           "dtype": str(v.dtype)} for v in opt.variables]}
        for k, v in enumerate(opt.variables):
            arrays[f"{case}/after2/{k}"] = np.asarray(v.numpy())
        for k, v in enumerate(model.trainable_variables):
            arrays[f"{case}/model2/{k}"] = np.asarray(v.numpy())
        opt.apply_gradients(zip(grads[2], model.trainable_variables))
        for k, v in enumerate(model.trainable_variables):
            arrays[f"{case}/model3/{k}"] = np.asarray(v.numpy())
        for k, v in enumerate(opt.variables):
            arrays[f"{case}/after3/{k}"] = np.asarray(v.numpy())
    np.savez(OUT / "keras_optimizer_reference.npz", **arrays)
    (OUT / "keras_optimizer_reference.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"wrote {OUT}/keras_optimizer_reference.* (Keras {keras.__version__})")


if __name__ == "__main__":
    main()
