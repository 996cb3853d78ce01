"""Reference values from real Keras 3 (TensorFlow backend) for tests/test_keras_reference.py.

Run in the bench environment (it needs keras and tensorflow; the tests never import them):

    /work/venv-bench/bin/python -m benchmarks.keras_reference

Every case starts from fixed inputs and weights drawn here with NumPy (seeded), so the
tests can rebuild the same layer in tapegrad, ``set_weights`` the same arrays and compare:
each layer's output, each loss, each metric's result, each schedule's values, each
optimizer's variables after 20 steps and a model after ``fit``. The cases are described by a
JSON manifest stored in the same ``.npz`` (``allow_pickle=False`` reads it).
"""
import json
import os
import pathlib

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "keras_reference.npz"
ACTIVATIONS = ["relu", "tanh", "sigmoid", "softmax", "gelu", "swish", "silu", "linear", "elu",
               "selu", "softplus", "softsign", "leaky_relu", "relu6", "hard_sigmoid",
               "exponential", "mish", "log_softmax", "hard_silu", "celu", "log_sigmoid"]

# (case name, layer class, config, input shapes, call kwargs, integer input)
LAYERS = [
    ("dense", "Dense", {"units": 4}, [(5, 3)], {}, False),
    ("dense_relu", "Dense", {"units": 3, "activation": "relu"}, [(5, 3)], {}, False),
    ("dense_nobias_tanh", "Dense", {"units": 2, "use_bias": False, "activation": "tanh"},
     [(4, 3)], {}, False),
    ("dense_rank3", "Dense", {"units": 2}, [(2, 3, 4)], {}, False),
    ("relu_layer", "ReLU", {"max_value": 1.5, "negative_slope": 0.1, "threshold": 0.2},
     [(4, 5)], {}, False),
    ("leaky_relu_layer", "LeakyReLU", {}, [(4, 5)], {}, False),
    ("leaky_relu_01", "LeakyReLU", {"negative_slope": 0.1}, [(4, 5)], {}, False),
    ("softmax_layer", "Softmax", {}, [(4, 5)], {}, False),
    ("softmax_axis1", "Softmax", {"axis": 1}, [(2, 3, 4)], {}, False),
    ("elu_layer", "ELU", {"alpha": 0.5}, [(4, 5)], {}, False),
    ("batchnorm_inference", "BatchNormalization", {}, [(6, 3)], {}, False),
    ("batchnorm_training", "BatchNormalization", {"momentum": 0.9}, [(6, 3)],
     {"training": True}, False),
    ("batchnorm_axis1_training", "BatchNormalization", {"axis": 1}, [(4, 3, 5)],
     {"training": True}, False),
    ("batchnorm_4d", "BatchNormalization", {"epsilon": 0.01}, [(2, 3, 3, 2)],
     {"training": True}, False),
    ("layernorm", "LayerNormalization", {}, [(4, 6)], {}, False),
    ("layernorm_axes", "LayerNormalization", {"axis": [1, 2], "epsilon": 1e-5},
     [(2, 3, 4)], {}, False),
    ("embedding", "Embedding", {"input_dim": 10, "output_dim": 4}, [(3, 5)], {}, True),
    ("flatten", "Flatten", {}, [(2, 3, 4)], {}, False),
    ("reshape", "Reshape", {"target_shape": [4, 3]}, [(2, 3, 4)], {}, False),
    ("reshape_minus1", "Reshape", {"target_shape": [-1, 2]}, [(2, 3, 4)], {}, False),
    ("zeropadding2d", "ZeroPadding2D", {"padding": [[1, 0], [2, 1]]}, [(1, 3, 4, 2)], {},
     False),
    ("upsampling2d", "UpSampling2D", {"size": [2, 3]}, [(1, 2, 3, 2)], {}, False),
    ("global_avg_pool2d", "GlobalAveragePooling2D", {}, [(2, 3, 4, 5)], {}, False),
    ("global_max_pool2d", "GlobalMaxPooling2D", {}, [(2, 3, 4, 5)], {}, False),
    ("global_avg_pool2d_keepdims", "GlobalAveragePooling2D", {"keepdims": True},
     [(2, 3, 4, 5)], {}, False),
    ("concatenate", "Concatenate", {}, [(2, 3), (2, 4)], {}, False),
    ("concatenate_axis1", "Concatenate", {"axis": 1}, [(2, 3, 2), (2, 1, 2)], {}, False),
    ("add", "Add", {}, [(2, 3), (2, 3), (2, 3)], {}, False),
    ("multiply", "Multiply", {}, [(2, 3), (2, 3)], {}, False),
    ("subtract", "Subtract", {}, [(2, 3), (2, 3)], {}, False),
    ("average", "Average", {}, [(2, 3), (2, 3)], {}, False),
    ("maximum", "Maximum", {}, [(2, 3), (2, 3)], {}, False),
    ("dropout_inference", "Dropout", {"rate": 0.5}, [(3, 4)], {}, False),
    ("conv1d", "Conv1D", {"filters": 4, "kernel_size": 3}, [(2, 9, 3)], {}, False),
    ("conv1d_causal_dilated", "Conv1D", {"filters": 2, "kernel_size": 3, "padding": "causal",
                                         "dilation_rate": 2}, [(2, 9, 3)], {}, False),
    ("conv1d_same_strided", "Conv1D", {"filters": 3, "kernel_size": 4, "strides": 2,
                                       "padding": "same", "activation": "relu"},
     [(2, 9, 2)], {}, False),
    ("conv2d", "Conv2D", {"filters": 4, "kernel_size": 3}, [(2, 7, 6, 3)], {}, False),
    ("conv2d_same_strided", "Conv2D", {"filters": 3, "kernel_size": [3, 2], "strides": 2,
                                       "padding": "same", "activation": "tanh"},
     [(2, 7, 6, 2)], {}, False),
    ("conv2d_dilated_nobias", "Conv2D", {"filters": 2, "kernel_size": 3, "dilation_rate": 2,
                                         "use_bias": False}, [(1, 8, 7, 3)], {}, False),
    ("conv2d_transpose", "Conv2DTranspose", {"filters": 3, "kernel_size": 3},
     [(2, 4, 5, 2)], {}, False),
    ("conv2d_transpose_same_strided", "Conv2DTranspose",
     {"filters": 2, "kernel_size": 3, "strides": 2, "padding": "same"}, [(2, 4, 5, 3)], {},
     False),
    ("conv2d_transpose_valid_strided", "Conv2DTranspose",
     {"filters": 2, "kernel_size": [3, 2], "strides": [2, 3]}, [(1, 3, 4, 2)], {}, False),
    ("conv2d_transpose_output_padding", "Conv2DTranspose",
     {"filters": 2, "kernel_size": 4, "strides": 2, "padding": "same", "output_padding": 1},
     [(1, 3, 4, 2)], {}, False),
    ("maxpool1d", "MaxPooling1D", {}, [(2, 9, 3)], {}, False),
    ("maxpool2d", "MaxPooling2D", {}, [(2, 7, 6, 3)], {}, False),
    ("maxpool2d_same_strided", "MaxPooling2D", {"pool_size": 3, "strides": 2,
                                                "padding": "same"}, [(2, 7, 6, 3)], {}, False),
    ("avgpool2d", "AveragePooling2D", {"pool_size": 2}, [(2, 7, 6, 3)], {}, False),
    ("avgpool2d_same", "AveragePooling2D", {"pool_size": 3, "strides": 2, "padding": "same"},
     [(2, 7, 6, 3)], {}, False),
] + [(f"activation_{a}", "Activation", {"activation": a}, [(3, 5)], {}, False)
     for a in ACTIVATIONS]

# (case name, loss class, config, y_true kind, y_pred kind, sample weight)
LOSSES = [
    ("mse", "MeanSquaredError", {}, "real", "real", False),
    ("mse_sum", "MeanSquaredError", {"reduction": "sum"}, "real", "real", False),
    ("mse_none", "MeanSquaredError", {"reduction": None}, "real", "real", False),
    ("mse_weighted", "MeanSquaredError", {}, "real", "real", True),
    ("mae", "MeanAbsoluteError", {}, "real", "real", False),
    ("huber", "Huber", {}, "real", "real", False),
    ("huber_delta", "Huber", {"delta": 0.3}, "real", "real", True),
    ("kld", "KLDivergence", {}, "probs", "probs", False),
    ("bce", "BinaryCrossentropy", {}, "binary", "unit", False),
    ("bce_logits_smooth", "BinaryCrossentropy",
     {"from_logits": True, "label_smoothing": 0.1}, "binary", "real", False),
    ("bce_weighted_sum", "BinaryCrossentropy", {"reduction": "sum"}, "binary", "unit", True),
    ("cce", "CategoricalCrossentropy", {}, "onehot", "probs", False),
    ("cce_logits_smooth", "CategoricalCrossentropy",
     {"from_logits": True, "label_smoothing": 0.2}, "onehot", "real", False),
    ("cce_unnormalised", "CategoricalCrossentropy", {}, "onehot", "unit", True),
    ("scce", "SparseCategoricalCrossentropy", {}, "sparse", "probs", False),
    ("scce_logits", "SparseCategoricalCrossentropy", {"from_logits": True}, "sparse",
     "real", False),
    ("scce_logits_column", "SparseCategoricalCrossentropy", {"from_logits": True},
     "sparse_column", "real", True),
]
# losses of a Keras softmax / sigmoid output: Keras computes them from the logits it keeps
# (saturated logits show the difference from the clipped probabilities)
LOSSES_OF_ACTIVATIONS = [
    ("cce_of_softmax", "CategoricalCrossentropy", {}, "onehot", "softmax"),
    ("scce_of_softmax", "SparseCategoricalCrossentropy", {}, "sparse", "softmax"),
    ("bce_of_sigmoid", "BinaryCrossentropy", {}, "binary", "sigmoid"),
    ("bce_of_sigmoid_smooth", "BinaryCrossentropy", {"label_smoothing": 0.2}, "binary",
     "sigmoid"),
]
LOSS_FUNCTIONS = [("fn_mse", "mean_squared_error", "real", "real"),
                  ("fn_mae", "mean_absolute_error", "real", "real"),
                  ("fn_bce", "binary_crossentropy", "binary", "unit"),
                  ("fn_cce", "categorical_crossentropy", "onehot", "probs"),
                  ("fn_scce", "sparse_categorical_crossentropy", "sparse", "probs"),
                  ("fn_kld", "kl_divergence", "probs", "probs"),
                  ("fn_huber", "huber", "real", "real")]

METRICS = [("mean", "Mean", "values"),
           ("accuracy", "Accuracy", "labels"),
           ("binary_accuracy", "BinaryAccuracy", "binary"),
           ("categorical_accuracy", "CategoricalAccuracy", "onehot"),
           ("sparse_categorical_accuracy", "SparseCategoricalAccuracy", "sparse"),
           ("metric_mse", "MeanSquaredError", "real")]

OPTIMIZERS = [
    ("sgd", "SGD", {}), ("sgd_momentum", "SGD", {"learning_rate": 0.05, "momentum": 0.9}),
    ("sgd_nesterov", "SGD", {"learning_rate": 0.05, "momentum": 0.8, "nesterov": True}),
    ("adam", "Adam", {"learning_rate": 0.05}),
    ("adam_amsgrad", "Adam", {"learning_rate": 0.05, "amsgrad": True, "beta_2": 0.9}),
    ("adamw", "AdamW", {"learning_rate": 0.05}),
    ("adamw_decay", "AdamW", {"learning_rate": 0.02, "weight_decay": 0.1}),
    ("rmsprop", "RMSprop", {"learning_rate": 0.01}),
    ("rmsprop_centered_momentum", "RMSprop",
     {"learning_rate": 0.01, "momentum": 0.5, "centered": True}),
    ("adagrad", "Adagrad", {"learning_rate": 0.1}),
    ("nadam", "Nadam", {"learning_rate": 0.05}),
    ("adam_clipnorm", "Adam", {"learning_rate": 0.05, "clipnorm": 0.5}),
    ("sgd_clipvalue", "SGD", {"learning_rate": 0.1, "clipvalue": 0.2}),
    ("sgd_global_clipnorm", "SGD", {"learning_rate": 0.1, "global_clipnorm": 0.4}),
    ("sgd_weight_decay", "SGD", {"learning_rate": 0.1, "weight_decay": 0.05}),
    ("adam_exponential_decay", "Adam", {"schedule": ["ExponentialDecay", {
        "initial_learning_rate": 0.1, "decay_steps": 5, "decay_rate": 0.5}]}),
    ("sgd_piecewise", "SGD", {"schedule": ["PiecewiseConstantDecay", {
        "boundaries": [5, 10], "values": [0.1, 0.05, 0.01]}]}),
    ("sgd_cosine", "SGD", {"schedule": ["CosineDecay", {
        "initial_learning_rate": 0.1, "decay_steps": 15, "alpha": 0.1}]}),
    ("rmsprop_inverse_time", "RMSprop", {"schedule": ["InverseTimeDecay", {
        "initial_learning_rate": 0.02, "decay_steps": 4, "decay_rate": 0.5,
        "staircase": True}]}),
]
SCHEDULES = [
    ("exponential", "ExponentialDecay",
     {"initial_learning_rate": 0.1, "decay_steps": 7, "decay_rate": 0.3}),
    ("exponential_staircase", "ExponentialDecay",
     {"initial_learning_rate": 0.1, "decay_steps": 7, "decay_rate": 0.3, "staircase": True}),
    ("piecewise", "PiecewiseConstantDecay",
     {"boundaries": [3, 9], "values": [1.0, 0.5, 0.25]}),
    ("cosine", "CosineDecay", {"initial_learning_rate": 0.2, "decay_steps": 12, "alpha": 0.05}),
    ("cosine_warmup", "CosineDecay", {"initial_learning_rate": 0.0, "decay_steps": 10,
                                      "warmup_target": 0.1, "warmup_steps": 5}),
    ("inverse_time", "InverseTimeDecay",
     {"initial_learning_rate": 0.1, "decay_steps": 3, "decay_rate": 0.5}),
]
STEPS = [0, 1, 2, 3, 5, 7, 9, 10, 14, 20, 30]


def _weights_like(layer_name, shapes, rng):
    out = []
    for i, s in enumerate(shapes):
        w = rng.normal(size=s).astype("float32")
        if layer_name.startswith("batchnorm") and i == 3:
            w = rng.uniform(0.5, 2.0, size=s).astype("float32")  # a variance
        out.append(w)
    return out


def _targets(kind, rng, shape=(4, 3)):
    if kind == "real":
        return rng.normal(size=shape).astype("float32")
    if kind == "unit":
        return rng.uniform(0.05, 0.95, size=shape).astype("float32")
    if kind == "probs":
        p = rng.uniform(0.1, 1.0, size=shape)
        return (p / p.sum(-1, keepdims=True)).astype("float32")
    if kind == "binary":
        return rng.integers(0, 2, size=shape).astype("float32")
    if kind == "onehot":
        return np.eye(shape[-1], dtype="float32")[rng.integers(0, shape[-1], shape[0])]
    if kind == "sparse":
        return rng.integers(0, shape[-1], shape[0]).astype("int64")
    if kind == "sparse_column":
        return rng.integers(0, shape[-1], (shape[0], 1)).astype("int64")
    if kind == "labels":
        return rng.integers(0, 3, shape).astype("float32")
    if kind == "values":
        return rng.normal(size=shape).astype("float32")
    raise ValueError(kind)


def main():
    import keras
    import tensorflow as tf

    rng = np.random.default_rng(20261201)
    arrays, manifest = {}, {"keras_version": keras.__version__,
                            "tensorflow_version": tf.__version__, "layers": [], "losses": [],
                            "metrics": [], "optimizers": [], "schedules": []}

    for name, cls, config, shapes, kwargs, integer in LAYERS:
        inputs = [rng.integers(0, 10, s).astype("int32") if integer else
                  rng.normal(size=s).astype("float32") for s in shapes]
        layer = getattr(keras.layers, cls)(**config)
        arg = inputs if len(inputs) > 1 else inputs[0]
        layer(arg)  # build
        weights = _weights_like(name, [tuple(w.shape) for w in layer.weights], rng)
        layer.set_weights(weights)
        out = keras.ops.convert_to_numpy(layer(arg, **kwargs))
        after = [np.asarray(w.numpy()) for w in layer.weights]
        for i, x in enumerate(inputs):
            arrays[f"layer/{name}/input{i}"] = x
        for i, w in enumerate(weights):
            arrays[f"layer/{name}/weight{i}"] = w
            arrays[f"layer/{name}/after{i}"] = after[i]
        arrays[f"layer/{name}/output"] = out
        manifest["layers"].append({"name": name, "class": cls, "config": config,
                                   "inputs": len(inputs), "weights": len(weights),
                                   "kwargs": kwargs,
                                   "weight_names": [w.name for w in layer.weights]})

    for name, cls, config, tkind, pkind, weighted in LOSSES:
        classes = 5
        y_true = _targets(tkind, rng, (6, classes))
        y_pred = _targets(pkind, rng, (6, classes))
        sw = rng.uniform(0.0, 2.0, 6).astype("float32") if weighted else None
        value = keras.losses.get({"class_name": cls, "config": config})(y_true, y_pred, sw)
        arrays[f"loss/{name}/y_true"], arrays[f"loss/{name}/y_pred"] = y_true, y_pred
        if weighted:
            arrays[f"loss/{name}/sample_weight"] = sw
        arrays[f"loss/{name}/value"] = np.asarray(value)
        manifest["losses"].append({"name": name, "class": cls, "config": config,
                                   "weighted": weighted})
    for name, cls, config, tkind, activation in LOSSES_OF_ACTIVATIONS:
        y_true = _targets(tkind, rng, (6, 5))
        logits = (rng.normal(size=(6, 5)) * 12).astype("float32")  # some saturate
        y_pred = getattr(keras.activations, activation)(tf.constant(logits))
        value = getattr(keras.losses, cls)(**config)(y_true, y_pred)
        arrays[f"lossact/{name}/y_true"], arrays[f"lossact/{name}/logits"] = y_true, logits
        arrays[f"lossact/{name}/value"] = np.asarray(value)
        manifest["losses"].append({"name": name, "class": cls, "config": config,
                                   "activation": activation})
    for name, fn, tkind, pkind in LOSS_FUNCTIONS:
        y_true, y_pred = _targets(tkind, rng, (6, 4)), _targets(pkind, rng, (6, 4))
        arrays[f"lossfn/{name}/y_true"], arrays[f"lossfn/{name}/y_pred"] = y_true, y_pred
        arrays[f"lossfn/{name}/value"] = np.asarray(getattr(keras.losses, fn)(y_true, y_pred))
        manifest["losses"].append({"name": name, "function": fn})

    for name, cls, kind in METRICS:
        metric = getattr(keras.metrics, cls)()
        for step in range(2):
            sw = rng.uniform(0.0, 2.0, 6).astype("float32")
            if cls == "Mean":
                values = _targets("values", rng, (6,))
                metric.update_state(values, sample_weight=sw)
                arrays[f"metric/{name}/values{step}"] = values
            else:
                y_true = _targets(kind, rng, (6, 4))
                if kind in ("onehot", "sparse"):
                    y_pred = _targets("probs", rng, (6, 4))
                elif kind == "labels":
                    y_pred = np.where(rng.uniform(size=(6, 4)) < 0.5, y_true,
                                      _targets("labels", rng, (6, 4))).astype("float32")
                elif kind == "binary":
                    y_pred = _targets("unit", rng, (6, 4))
                else:
                    y_pred = _targets("real", rng, (6, 4))
                metric.update_state(y_true, y_pred, sample_weight=sw)
                arrays[f"metric/{name}/y_true{step}"] = y_true
                arrays[f"metric/{name}/y_pred{step}"] = y_pred
            arrays[f"metric/{name}/sample_weight{step}"] = sw
        arrays[f"metric/{name}/result"] = np.asarray(metric.result())
        manifest["metrics"].append({"name": name, "class": cls})

    for name, cls, config in SCHEDULES:
        schedule = getattr(keras.optimizers.schedules, cls)(**config)
        arrays[f"schedule/{name}/values"] = np.array([float(schedule(s)) for s in STEPS],
                                                     "float32")
        manifest["schedules"].append({"name": name, "class": cls, "config": config,
                                      "steps": STEPS})

    x = rng.normal(size=(8, 3)).astype("float32")
    w0 = rng.normal(size=(3, 2)).astype("float32")
    b0 = rng.normal(size=(2,)).astype("float32")
    arrays["optimizer/x"], arrays["optimizer/w0"], arrays["optimizer/b0"] = x, w0, b0
    for name, cls, config in OPTIMIZERS:
        config = dict(config)
        schedule = config.pop("schedule", None)
        if schedule is not None:
            config["learning_rate"] = getattr(keras.optimizers.schedules, schedule[0])(
                **schedule[1])
        opt = getattr(keras.optimizers, cls)(**config)
        w, b = tf.Variable(w0), tf.Variable(b0)
        for _ in range(20):
            with tf.GradientTape() as tape:
                loss = (tf.reduce_sum(tf.tanh(tf.matmul(x, w) + b) ** 2)
                        + 0.1 * tf.reduce_sum(w ** 2))
            grads = tape.gradient(loss, [w, b])
            opt.apply_gradients(zip(grads, [w, b]))
        arrays[f"optimizer/{name}/w"], arrays[f"optimizer/{name}/b"] = w.numpy(), b.numpy()
        spec = dict(OPTIMIZERS[[o[0] for o in OPTIMIZERS].index(name)][2])
        manifest["optimizers"].append({"name": name, "class": cls, "config": spec})

    # a model trained with fit: batching, the loss's reduction and the loss log
    xs = rng.normal(size=(20, 3)).astype("float32")
    ys = rng.normal(size=(20, 1)).astype("float32")
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="tanh"),
                              keras.layers.Dense(1)])
    init = [rng.normal(size=w.shape).astype("float32") * 0.5 for w in model.weights]
    model.set_weights(init)
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse", metrics=["mae"])
    hist = model.fit(xs, ys, batch_size=6, epochs=3, shuffle=False, verbose=0)
    arrays["fit/x"], arrays["fit/y"] = xs, ys
    for i, w in enumerate(init):
        arrays[f"fit/init{i}"] = w
    for i, w in enumerate(model.get_weights()):
        arrays[f"fit/final{i}"] = w
    arrays["fit/loss"] = np.array(hist.history["loss"], "float32")
    arrays["fit/mae"] = np.array(hist.history["mae"], "float32")
    arrays["fit/evaluate"] = np.array(model.evaluate(xs, ys, verbose=0), "float32")
    arrays["fit/predict"] = model.predict(xs[:5], verbose=0)

    arrays["manifest"] = np.array(json.dumps(manifest, sort_keys=True))
    OUT.parent.mkdir(exist_ok=True)
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {OUT}: {len(manifest['layers'])} layers, {len(manifest['losses'])} losses, "
          f"{len(manifest['metrics'])} metrics, {len(manifest['schedules'])} schedules, "
          f"{len(manifest['optimizers'])} optimizers, one fit (Keras {keras.__version__})")


if __name__ == "__main__":
    main()
