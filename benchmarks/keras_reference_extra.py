"""More reference values from real Keras 3 (TensorFlow backend), for
tests/test_keras_reference_extra.py: channels-first and grouped image layers, ``fit`` with
``class_weight`` and ``sample_weight``, and masking (``Embedding(mask_zero=True)``,
``Masking``, masked pooling, losses and metrics).

Run in the bench environment (it needs keras and tensorflow; the tests never import them):

    /work/venv-bench/bin/python -m benchmarks.keras_reference_extra

The masked models (graphs given as data, built the same way by the tests) run fit,
evaluate and predict on padded sequences.

The layer cases run on Keras's JAX backend: on a CPU, TensorFlow's Conv2D rejects NCHW
without oneDNN, and with oneDNN its NCHW output broadcasts a channel bias along the wrong
axis (Keras's own ``Conv2D(data_format="channels_first")`` adds the bias per column there).
The ``fit`` cases run on the TensorFlow backend. Each part runs in its own process, since
Keras fixes its backend at import.

Inputs and weights are drawn here with NumPy (seeded); the tests rebuild the same layers in
tapegrad, ``set_weights`` the same arrays and compare. The manifest is JSON inside the same
``.npz`` (read with ``allow_pickle=False``).
"""
import os
import pathlib
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402

from benchmarks import reference_parts  # noqa: E402

OUT = (pathlib.Path(__file__).resolve().parent.parent / "tests" / "data"
       / "keras_reference_extra.npz")
CF = {"data_format": "channels_first"}

# (case name, layer class, config, input shape, call kwargs)
LAYERS = [
    ("conv2d_cf", "Conv2D", {"filters": 3, "kernel_size": 3, **CF}, (2, 2, 6, 5), {}),
    ("conv2d_cf_same_strided", "Conv2D", {"filters": 4, "kernel_size": [3, 2],
                                          "strides": 2, "padding": "same", **CF},
     (2, 3, 7, 6), {}),
    ("conv2d_cf_dilated_relu", "Conv2D", {"filters": 2, "kernel_size": 2,
                                          "dilation_rate": 2, "activation": "relu", **CF},
     (1, 2, 6, 6), {}),
    ("conv2d_groups", "Conv2D", {"filters": 6, "kernel_size": 3, "groups": 2},
     (2, 5, 5, 4), {}),
    ("conv2d_cf_groups", "Conv2D", {"filters": 4, "kernel_size": 2, "groups": 2, **CF},
     (2, 4, 5, 5), {}),
    ("conv1d_cf", "Conv1D", {"filters": 3, "kernel_size": 3, **CF}, (2, 2, 9), {}),
    ("conv1d_cf_causal", "Conv1D", {"filters": 2, "kernel_size": 3, "padding": "causal",
                                    "dilation_rate": 2, **CF}, (2, 3, 8), {}),
    ("conv2d_transpose_cf", "Conv2DTranspose", {"filters": 3, "kernel_size": 3,
                                                "strides": 2, **CF}, (2, 2, 4, 3), {}),
    ("conv2d_transpose_cf_same", "Conv2DTranspose", {"filters": 2, "kernel_size": 3,
                                                     "strides": 2, "padding": "same",
                                                     "output_padding": 1, **CF},
     (1, 3, 3, 4), {}),
    ("maxpool2d_cf", "MaxPooling2D", {"pool_size": 2, **CF}, (2, 3, 5, 6), {}),
    ("maxpool2d_cf_same", "MaxPooling2D", {"pool_size": 3, "strides": 2, "padding": "same",
                                           **CF}, (2, 2, 5, 6), {}),
    ("avgpool2d_cf_same", "AveragePooling2D", {"pool_size": 2, "padding": "same", **CF},
     (2, 3, 5, 5), {}),
    ("maxpool1d_cf", "MaxPooling1D", {"pool_size": 2, **CF}, (2, 3, 7), {}),
    ("avgpool1d_cf", "AveragePooling1D", {"pool_size": 3, "strides": 1, **CF}, (2, 2, 6),
     {}),
    ("global_avg_pool2d_cf", "GlobalAveragePooling2D", CF, (2, 3, 4, 5), {}),
    ("global_max_pool2d_cf_keepdims", "GlobalMaxPooling2D", {"keepdims": True, **CF},
     (2, 3, 4, 5), {}),
    ("global_avg_pool1d_cf", "GlobalAveragePooling1D", CF, (2, 3, 6), {}),
    ("global_max_pool1d_cf", "GlobalMaxPooling1D", CF, (2, 3, 6), {}),
    ("zeropadding2d_cf", "ZeroPadding2D", {"padding": [[1, 0], [2, 1]], **CF},
     (1, 2, 3, 4), {}),
    ("upsampling2d_cf", "UpSampling2D", {"size": [2, 3], **CF}, (1, 2, 2, 3), {}),
    ("flatten_cf", "Flatten", CF, (2, 3, 2, 4), {}),
    ("batchnorm_cf_training", "BatchNormalization", {"axis": 1}, (4, 3, 2, 2),
     {"training": True}),
]


def _fit_case(keras, rng, arrays, name, y, loss, fit_kwargs, eval_kwargs):
    xs = rng.normal(size=(len(y), 4)).astype("float32")
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(5, activation="tanh"),
                              keras.layers.Dense(3, activation="softmax")])
    init = [rng.normal(size=w.shape).astype("float32") * 0.5 for w in model.weights]
    model.set_weights(init)
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss=loss, metrics=["accuracy"],
                  weighted_metrics=["accuracy"])
    kwargs = {k: (np.asarray(v, "float32") if k == "sample_weight" else v)
              for k, v in fit_kwargs.items()}
    hist = model.fit(xs, y, batch_size=4, epochs=2, shuffle=False, verbose=0, **kwargs)
    arrays[f"fit/{name}/x"], arrays[f"fit/{name}/y"] = xs, y
    for i, w in enumerate(init):
        arrays[f"fit/{name}/init{i}"] = w
    for i, w in enumerate(model.get_weights()):
        arrays[f"fit/{name}/final{i}"] = w
    arrays[f"fit/{name}/loss"] = np.array(hist.history["loss"], "float32")
    arrays[f"fit/{name}/accuracy"] = np.array(hist.history["accuracy"], "float32")
    arrays[f"fit/{name}/weighted_accuracy"] = np.array(hist.history["weighted_accuracy"],
                                                       "float32")
    ekw = {k: np.asarray(v, "float32") for k, v in eval_kwargs.items()}
    # a dict: with weighted_metrics, Keras 3.15's list form repeats a value
    logs = model.evaluate(xs, y, verbose=0, return_dict=True, **ekw)
    arrays[f"fit/{name}/evaluate"] = np.array([logs[k] for k in sorted(logs)], "float32")


def layer_cases(arrays, manifest):
    import keras

    rng = np.random.default_rng(20261202)
    manifest["layers_backend"] = f"keras {keras.__version__}, {keras.backend.backend()}"
    for name, cls, config, shape, kwargs in LAYERS:
        x = rng.normal(size=shape).astype("float32")
        layer = getattr(keras.layers, cls)(**config)
        layer(x)
        weights = [rng.normal(size=w.shape).astype("float32") for w in layer.weights]
        if cls == "BatchNormalization":
            weights[3] = rng.uniform(0.5, 2.0, size=weights[3].shape).astype("float32")
        layer.set_weights(weights)
        out = keras.ops.convert_to_numpy(layer(x, **kwargs))
        arrays[f"layer/{name}/input0"], arrays[f"layer/{name}/output"] = x, out
        for i, w in enumerate(weights):
            arrays[f"layer/{name}/weight{i}"] = w
        for i, w in enumerate(layer.weights):
            arrays[f"layer/{name}/after{i}"] = np.asarray(w.numpy())
        manifest["layers"].append({"name": name, "class": cls, "config": config,
                                   "weights": len(weights), "kwargs": kwargs,
                                   "weight_names": [w.name for w in layer.weights]})



def fit_cases(arrays, manifest):
    import keras
    import tensorflow as tf

    rng = np.random.default_rng(20261203)
    manifest["fits_backend"] = f"keras {keras.__version__}, tensorflow {tf.__version__}"
    labels = rng.integers(0, 3, 10)
    fits = [
        ("class_weight_sparse", labels.astype("int64"), "sparse_categorical_crossentropy",
         {"class_weight": {0: 1.0, 1: 3.0, 2: 0.5}}, {}),
        ("class_weight_onehot", np.eye(3, dtype="float32")[labels], "categorical_crossentropy",
         {"class_weight": {1: 2.0, 2: 0.25}}, {}),
        ("sample_weight", labels.astype("int64"), "sparse_categorical_crossentropy",
         {"sample_weight": rng.uniform(0.0, 2.0, 10).tolist()},
         {"sample_weight": rng.uniform(0.0, 2.0, 10).tolist()}),
    ]
    for name, y, loss, fit_kwargs, eval_kwargs in fits:
        _fit_case(keras, rng, arrays, name, y, loss, fit_kwargs, eval_kwargs)
        manifest["fits"].append({"name": name, "loss": loss, "fit": fit_kwargs,
                                 "evaluate": eval_kwargs})


# masked models, as graphs: (name, inputs, nodes [name, class, config, input names],
# output, loss, metrics); token 0 is padding
MASKED = [
    ("seq_tagger", [["tokens", [6], "int32"]],
     [["emb", "Embedding", {"input_dim": 9, "output_dim": 4, "mask_zero": True}, ["tokens"]],
      ["tags", "Dense", {"units": 5, "activation": "softmax"}, ["emb"]]],
     "tags", "sparse_categorical_crossentropy", ["accuracy"]),
    ("tagger_batchnorm", [["tokens", [6], "int32"]],
     [["emb", "Embedding", {"input_dim": 9, "output_dim": 4, "mask_zero": True}, ["tokens"]],
      ["norm", "BatchNormalization", {"momentum": 0.5}, ["emb"]],
      ["tags", "Dense", {"units": 3, "activation": "softmax"}, ["norm"]]],
     "tags", "sparse_categorical_crossentropy", ["accuracy"]),
    ("bag_of_embeddings", [["tokens", [6], "int32"]],
     [["emb", "Embedding", {"input_dim": 9, "output_dim": 4, "mask_zero": True}, ["tokens"]],
      ["pool", "GlobalAveragePooling1D", {}, ["emb"]],
      ["out", "Dense", {"units": 3, "activation": "softmax"}, ["pool"]]],
     "out", "sparse_categorical_crossentropy", ["accuracy"]),
    ("masking_layer", [["seq", [5, 3], "float32"]],
     [["mask", "Masking", {"mask_value": 0.0}, ["seq"]],
      ["hidden", "Dense", {"units": 4, "activation": "tanh"}, ["mask"]],
      ["out", "Dense", {"units": 2}, ["hidden"]]],
     "out", "mse", ["mae"]),
    ("merged_masks", [["tokens", [6], "int32"]],
     [["a", "Embedding", {"input_dim": 9, "output_dim": 3, "mask_zero": True}, ["tokens"]],
      ["b", "Embedding", {"input_dim": 9, "output_dim": 3, "mask_zero": True}, ["tokens"]],
      ["c", "Embedding", {"input_dim": 9, "output_dim": 2}, ["tokens"]],
      ["sum", "Add", {}, ["a", "b"]],
      ["joined", "Concatenate", {}, ["sum", "c"]],
      ["pool", "GlobalAveragePooling1D", {}, ["joined"]],
      ["out", "Dense", {"units": 1}, ["pool"]]],
     "out", "mse", []),
]


def build_graph(keras, inputs, nodes, output):
    """The functional model a MASKED entry describes (tests/test_keras_reference_extra.py
    builds it the same way with tapegrad.keras)."""
    made = {name: keras.Input(tuple(shape), dtype=dtype, name=name)
            for name, shape, dtype in inputs}
    for name, cls, config, args in nodes:
        arg = [made[a] for a in args]
        made[name] = getattr(keras.layers, cls)(name=name, **config)(
            arg if len(arg) > 1 else arg[0])
    return keras.Model([made[i[0]] for i in inputs][0], made[output])


def _masked_data(rng, name, inputs, output_units, loss):
    n = 7
    (_, shape, dtype), = inputs
    if dtype == "int32":
        x = rng.integers(1, 9, (n, *shape)).astype("int32")
        for row, length in zip(x, rng.integers(1, shape[0] + 1, n)):
            row[length:] = 0
    else:
        x = rng.normal(size=(n, *shape)).astype("float32")
        for row, length in zip(x, rng.integers(1, shape[0] + 1, n)):
            row[length:] = 0.0
    per_step = name in ("seq_tagger", "tagger_batchnorm", "masking_layer")
    target_shape = (n, shape[0]) if per_step else (n,)
    if loss == "sparse_categorical_crossentropy":
        y = rng.integers(0, output_units, target_shape)
    else:
        y = rng.normal(size=target_shape + (output_units,)).astype("float32")
    return x, y


def masked_cases(arrays, manifest):
    import keras
    import tensorflow as tf

    rng = np.random.default_rng(20261204)
    manifest["masked_backend"] = f"keras {keras.__version__}, tensorflow {tf.__version__}"
    for name, inputs, nodes, output, loss, metrics in MASKED:
        model = build_graph(keras, inputs, nodes, output)
        init = [rng.normal(size=w.shape).astype("float32") * 0.5 for w in model.weights]
        init = [np.abs(v) + 0.5 if w.name == "moving_variance" else v
                for v, w in zip(init, model.weights)]
        model.set_weights(init)
        model.compile(optimizer=keras.optimizers.SGD(0.3), loss=loss, metrics=metrics)
        x, y = _masked_data(rng, name, inputs, nodes[-1][2]["units"], loss)
        p = f"masked/{name}"
        arrays[f"{p}/x"], arrays[f"{p}/y"] = x, y
        for i, w in enumerate(init):
            arrays[f"{p}/init{i}"] = w
        arrays[f"{p}/predict"] = model.predict(x, verbose=0)
        logs = model.evaluate(x, y, verbose=0, return_dict=True)
        arrays[f"{p}/evaluate"] = np.array([logs[k] for k in sorted(logs)], "float32")
        hist = model.fit(x, y, batch_size=3, epochs=2, shuffle=False, verbose=0)
        arrays[f"{p}/history"] = np.array([hist.history[k] for k in sorted(hist.history)],
                                          "float32")
        for i, w in enumerate(model.get_weights()):
            arrays[f"{p}/final{i}"] = w
        manifest["masked"].append({"name": name, "inputs": inputs, "nodes": nodes,
                                   "output": output, "loss": loss, "metrics": metrics,
                                   "logs": sorted(logs), "history": sorted(hist.history)})


def two_heads(keras):
    """A functional model with two outputs (tests/test_keras_reference_extra.py makes the
    same one)."""
    inp = keras.Input((4,), name="features")
    h = keras.layers.Dense(6, activation="tanh", name="trunk")(inp)
    return keras.Model(inp, [keras.layers.Dense(2, name="reg")(h),
                             keras.layers.Dense(3, activation="softmax", name="cls")(h)])


TWO_HEADS = {"loss": {"reg": "mse", "cls": "sparse_categorical_crossentropy"},
             "loss_weights": {"reg": 0.5, "cls": 2.0},
             "metrics": {"reg": ["mae"], "cls": ["accuracy"]},
             "weighted_metrics": [[], ["accuracy"]]}


def multi_output_case(arrays, manifest):
    import keras

    rng = np.random.default_rng(20261205)
    model = two_heads(keras)
    init = [rng.normal(size=w.shape).astype("float32") * 0.5 for w in model.weights]
    model.set_weights(init)
    # run eagerly: compiled, Keras 3.15 weighs each output's logged loss per batch, not
    # per sample (its tf.function sees no batch size), unlike its total loss and its
    # eager mode
    model.compile(optimizer=keras.optimizers.SGD(0.2), run_eagerly=True, **TWO_HEADS)
    x = rng.normal(size=(10, 4)).astype("float32")
    ys = [rng.normal(size=(10, 2)).astype("float32"), rng.integers(0, 3, 10)]
    sw = rng.uniform(0.0, 2.0, 10).astype("float32")
    hist = model.fit(x, ys, sample_weight=sw, batch_size=4, epochs=2, shuffle=False,
                     verbose=0)
    logs = model.evaluate(x, ys, verbose=0, return_dict=True)
    p = "multi_output"
    arrays[f"{p}/x"], arrays[f"{p}/y0"], arrays[f"{p}/y1"] = x, ys[0], ys[1]
    arrays[f"{p}/sample_weight"] = sw
    for i, w in enumerate(init):
        arrays[f"{p}/init{i}"] = w
    for i, w in enumerate(model.get_weights()):
        arrays[f"{p}/final{i}"] = w
    arrays[f"{p}/history"] = np.array([hist.history[k] for k in sorted(hist.history)],
                                      "float32")
    arrays[f"{p}/evaluate"] = np.array([logs[k] for k in sorted(logs)], "float32")
    manifest["multi_output"] = {"history": sorted(hist.history), "logs": sorted(logs)}


PARTS = {"layers": ("jax", layer_cases), "fits": ("tensorflow", fit_cases),
         "masked": ("tensorflow", masked_cases),
         "multi_output": ("tensorflow", multi_output_case)}


KEYS = ("layers", "fits", "masked")


def main():
    manifest = reference_parts.main("benchmarks.keras_reference_extra", PARTS, OUT, KEYS)
    print(f"wrote {OUT}: {len(manifest['layers'])} layers ({manifest['layers_backend']}), "
          f"{len(manifest['fits'])} fits, {len(manifest['masked'])} masked models "
          f"({manifest['fits_backend']})")


if __name__ == "__main__":
    if len(sys.argv) == 3:
        reference_parts.run_part(PARTS, sys.argv[1], sys.argv[2], KEYS)
    else:
        main()
