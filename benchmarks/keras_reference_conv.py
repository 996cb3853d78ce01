"""Reference values from real Keras 3 for tests/test_keras_conv_layers.py: the depthwise,
separable, 3-D and transposed convolutions, 3-D pooling and GroupNormalization (outputs,
and the gradients of a random projection of the output with respect to the input and to
every weight), and ``fit`` of a MobileNet-style block and of a small 3-D CNN.

Run in the bench environment (it needs keras, jax and tensorflow; the tests never import
them):

    /work/venv-bench/bin/python -m benchmarks.keras_reference_conv

The layer cases run on Keras's JAX backend (TensorFlow's CPU kernels reject most
channels-first convolutions), their gradients by ``jax.vjp`` of ``stateless_call``; the
``fit`` cases run on the TensorFlow backend. Each part runs in its own process, since Keras
fixes its backend at import. Inputs, weights and cotangents are drawn here with NumPy
(seeded); the manifest is JSON inside the same ``.npz``.
"""
import os
import pathlib
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402

from benchmarks import reference_parts  # noqa: E402

OUT = (pathlib.Path(__file__).resolve().parent.parent / "tests" / "data"
       / "keras_reference_conv.npz")
CF = {"data_format": "channels_first"}

# (case name, layer class, config, input shape)
LAYERS = [
    ("depthwise2d", "DepthwiseConv2D", {"kernel_size": 3, "depth_multiplier": 2},
     (2, 6, 5, 3)),
    ("depthwise2d_same_strided", "DepthwiseConv2D", {"kernel_size": [3, 2], "strides": 2,
                                                     "padding": "same",
                                                     "activation": "relu"}, (2, 7, 6, 2)),
    ("depthwise2d_dilated_nobias", "DepthwiseConv2D", {"kernel_size": 2, "dilation_rate": 2,
                                                       "use_bias": False}, (1, 6, 6, 3)),
    ("depthwise2d_strided_dilated", "DepthwiseConv2D", {"kernel_size": 3, "strides": 2,
                                                        "dilation_rate": 2,
                                                        "padding": "same"}, (1, 9, 8, 2)),
    ("separable1d_strided_dilated", "SeparableConv1D", {"filters": 3, "kernel_size": 2,
                                                        "strides": 2, "dilation_rate": 3},
     (2, 11, 2)),
    ("depthwise2d_cf", "DepthwiseConv2D", {"kernel_size": 3, "depth_multiplier": 3, **CF},
     (2, 2, 6, 5)),
    ("depthwise1d", "DepthwiseConv1D", {"kernel_size": 3, "depth_multiplier": 2,
                                        "padding": "same"}, (2, 8, 3)),
    ("depthwise1d_cf_strided", "DepthwiseConv1D", {"kernel_size": 2, "strides": 2, **CF},
     (2, 3, 9)),
    ("separable2d", "SeparableConv2D", {"filters": 4, "kernel_size": 3}, (2, 6, 6, 3)),
    ("separable2d_same_mult", "SeparableConv2D", {"filters": 5, "kernel_size": 3,
                                                  "padding": "same", "depth_multiplier": 2,
                                                  "strides": 2, "activation": "tanh"},
     (2, 7, 7, 2)),
    ("separable2d_dilated_cf", "SeparableConv2D", {"filters": 3, "kernel_size": 2,
                                                   "dilation_rate": 2, **CF}, (1, 2, 7, 6)),
    ("separable1d", "SeparableConv1D", {"filters": 4, "kernel_size": 3, "padding": "same",
                                        "depth_multiplier": 2}, (2, 9, 3)),
    ("separable1d_cf_nobias", "SeparableConv1D", {"filters": 2, "kernel_size": 3,
                                                  "use_bias": False, **CF}, (2, 3, 8)),
    ("conv1d_transpose", "Conv1DTranspose", {"filters": 3, "kernel_size": 3, "strides": 2},
     (2, 5, 4)),
    ("conv1d_transpose_same_op", "Conv1DTranspose", {"filters": 2, "kernel_size": 4,
                                                     "strides": 3, "padding": "same",
                                                     "output_padding": 1}, (2, 4, 3)),
    ("conv1d_transpose_cf_dilated", "Conv1DTranspose", {"filters": 2, "kernel_size": 3,
                                                        "dilation_rate": 2, **CF},
     (1, 3, 6)),
    ("conv3d", "Conv3D", {"filters": 3, "kernel_size": 2}, (2, 4, 5, 3, 2)),
    ("conv3d_same_strided", "Conv3D", {"filters": 2, "kernel_size": 3, "strides": 2,
                                       "padding": "same", "activation": "relu"},
     (1, 5, 6, 4, 3)),
    ("conv3d_cf_groups", "Conv3D", {"filters": 4, "kernel_size": [2, 3, 2], "groups": 2,
                                    **CF}, (2, 4, 4, 5, 3)),
    ("conv3d_transpose", "Conv3DTranspose", {"filters": 2, "kernel_size": 3, "strides": 2},
     (1, 3, 2, 3, 3)),
    ("conv3d_transpose_same_cf", "Conv3DTranspose", {"filters": 3, "kernel_size": 2,
                                                     "strides": 2, "padding": "same", **CF},
     (1, 2, 2, 3, 2)),
    ("maxpool3d", "MaxPooling3D", {}, (2, 4, 5, 4, 3)),
    ("maxpool3d_same_cf", "MaxPooling3D", {"pool_size": 3, "strides": 2, "padding": "same",
                                           **CF}, (1, 2, 5, 4, 6)),
    ("avgpool3d", "AveragePooling3D", {"pool_size": [2, 1, 2]}, (2, 4, 3, 5, 2)),
    ("avgpool3d_same", "AveragePooling3D", {"pool_size": 2, "padding": "same"},
     (1, 3, 5, 3, 2)),
    ("global_avg_pool3d_cf", "GlobalAveragePooling3D", CF, (2, 3, 2, 3, 4)),
    ("global_max_pool3d_keepdims", "GlobalMaxPooling3D", {"keepdims": True},
     (2, 2, 3, 4, 3)),
    ("groupnorm", "GroupNormalization", {"groups": 2}, (3, 5, 4)),
    ("groupnorm_image", "GroupNormalization", {"groups": 3, "epsilon": 1e-5},
     (2, 4, 3, 6)),
    ("groupnorm_instance_cf", "GroupNormalization", {"groups": -1, "axis": 1},
     (2, 3, 4, 5)),
    ("groupnorm_one_group_noscale", "GroupNormalization", {"groups": 1, "scale": False},
     (2, 3, 4)),
    ("groupnorm_axis2", "GroupNormalization", {"groups": 2, "axis": 2, "center": False},
     (2, 3, 4, 5)),
]


def layer_cases(arrays, manifest):
    import jax
    import jax.numpy as jnp
    import keras

    rng = np.random.default_rng(20261208)
    manifest["layers_backend"] = f"keras {keras.__version__}, {keras.backend.backend()}"
    for name, cls, config, shape in LAYERS:
        x = rng.normal(size=shape).astype("float32")
        layer = getattr(keras.layers, cls)(**config)
        layer(x)
        weights = [rng.normal(size=w.shape).astype("float32") for w in layer.weights]
        layer.set_weights(weights)
        out = np.asarray(layer(x))
        ct = rng.normal(size=out.shape).astype("float32")

        def f(ws, xs):
            y, _ = layer.stateless_call(ws, [], xs)
            return y

        _, vjp = jax.vjp(f, [jnp.asarray(w) for w in weights], jnp.asarray(x))
        dws, dx = vjp(jnp.asarray(ct))
        p = f"layer/{name}"
        arrays[f"{p}/input"], arrays[f"{p}/output"], arrays[f"{p}/cotangent"] = x, out, ct
        arrays[f"{p}/dinput"] = np.asarray(dx)
        for i, (w, dw) in enumerate(zip(weights, dws)):
            arrays[f"{p}/weight{i}"], arrays[f"{p}/dweight{i}"] = w, np.asarray(dw)
        manifest["layers"].append({"name": name, "class": cls, "config": config,
                                   "weight_names": [w.name for w in layer.weights],
                                   "built_config": layer.get_config()})


def mobilenet_block(keras):
    """A MobileNet-style block (tests/test_keras_conv_layers.py makes the same one)."""
    return keras.Sequential([
        keras.Input((8, 8, 3)),
        keras.layers.Conv2D(4, 3, strides=2, padding="same", use_bias=False),
        keras.layers.BatchNormalization(),
        keras.layers.ReLU(6.0),
        keras.layers.DepthwiseConv2D(3, padding="same", use_bias=False),
        keras.layers.BatchNormalization(),
        keras.layers.ReLU(6.0),
        keras.layers.Conv2D(6, 1, use_bias=False),
        keras.layers.SeparableConv2D(6, 3, padding="same", depth_multiplier=2),
        keras.layers.GroupNormalization(groups=3),
        keras.layers.Activation("relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(3, activation="softmax")])


def cnn3d(keras):
    """A small 3-D CNN (tests/test_keras_conv_layers.py makes the same one)."""
    return keras.Sequential([
        keras.Input((6, 6, 6, 2)),
        keras.layers.Conv3D(4, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling3D(2),
        keras.layers.Conv3DTranspose(3, 2, strides=2, activation="tanh"),
        keras.layers.AveragePooling3D(3),
        keras.layers.Flatten(),
        keras.layers.Dense(1)])


FITS = {"mobilenet": (mobilenet_block, (10, 8, 8, 3), "sparse_categorical_crossentropy",
                      "adam"),
        "cnn3d": (cnn3d, (12, 6, 6, 6, 2), "mse", "sgd")}


def fit_cases(arrays, manifest):
    import keras
    import tensorflow as tf

    rng = np.random.default_rng(20261209)
    manifest["fits_backend"] = f"keras {keras.__version__}, tensorflow {tf.__version__}"
    for name, (make, shape, loss, opt) in FITS.items():
        model = make(keras)
        init = [rng.normal(size=w.shape).astype("float32") * 0.4 for w in model.weights]
        init = [np.abs(v) + 0.5 if w.name == "moving_variance" else v
                for v, w in zip(init, model.weights)]
        model.set_weights(init)
        x = rng.normal(size=shape).astype("float32")
        y = (rng.integers(0, 3, shape[0]) if loss.startswith("sparse")
             else rng.normal(size=(shape[0], 1)).astype("float32"))
        optimizer = (keras.optimizers.Adam(0.01) if opt == "adam"
                     else keras.optimizers.SGD(0.05))
        model.compile(optimizer=optimizer, loss=loss)
        hist = model.fit(x, y, batch_size=4, epochs=1, steps_per_epoch=3, shuffle=False,
                         verbose=0)
        p = f"fit/{name}"
        arrays[f"{p}/x"], arrays[f"{p}/y"] = x, y
        for i, w in enumerate(init):
            arrays[f"{p}/init{i}"] = w
        for i, w in enumerate(model.get_weights()):
            arrays[f"{p}/final{i}"] = w
        arrays[f"{p}/loss"] = np.array(hist.history["loss"], "float32")
        arrays[f"{p}/predict"] = model.predict(x, verbose=0)
        manifest["fits"].append({"name": name,
                                 "weight_names": [w.name for w in model.weights]})


# tf.nn.separable_conv2d: (case name, input shape, depthwise shape, pointwise shape,
# strides, padding, dilations)
SEPARABLE = [
    ("valid", (2, 6, 5, 3), (3, 3, 3, 2), (1, 1, 6, 4), [1, 1, 1, 1], "VALID", None),
    ("same_strided", (2, 7, 7, 2), (3, 2, 2, 3), (1, 1, 6, 3), [1, 2, 2, 1], "SAME", None),
    ("same_dilated", (1, 8, 7, 3), (2, 3, 3, 1), (1, 1, 3, 5), [1, 1, 1, 1], "SAME", [2, 2]),
]


def nn_cases(arrays, manifest):
    import tensorflow as tf

    rng = np.random.default_rng(20261210)
    for name, xs, ds, ps, strides, padding, dilations in SEPARABLE:
        x, d, pw = (rng.normal(size=s).astype("float32") for s in (xs, ds, ps))
        ct = None
        args = [tf.constant(v) for v in (x, d, pw)]
        with tf.GradientTape() as tape:
            tape.watch(args)
            y = tf.nn.separable_conv2d(*args, strides, padding, dilations=dilations)
            ct = rng.normal(size=y.shape).astype("float32")
            loss = tf.reduce_sum(y * ct)
        grads = tape.gradient(loss, args)
        p = f"separable/{name}"
        for k, v in zip(("x", "depthwise", "pointwise", "output", "cotangent"),
                        (x, d, pw, y.numpy(), ct)):
            arrays[f"{p}/{k}"] = v
        for k, g in zip(("x", "depthwise", "pointwise"), grads):
            arrays[f"{p}/d{k}"] = g.numpy()
        manifest["separable"].append({"name": name, "strides": strides, "padding": padding,
                                      "dilations": dilations})


# keras.ops: (case name, op, input shape, kernel shapes, keyword arguments)
OPS = [
    ("conv2d_same_strided", "conv", (2, 7, 6, 3), [(3, 3, 3, 4)], {"strides": 2,
                                                                   "padding": "same"}),
    ("conv1d_grouped_dilated_cf", "conv", (2, 4, 9), [(3, 2, 4)],
     {"dilation_rate": 2, "data_format": "channels_first"}),
    ("conv3d", "conv", (1, 4, 5, 4, 2), [(2, 2, 2, 2, 3)], {}),
    ("depthwise2d", "depthwise_conv", (2, 6, 6, 3), [(3, 3, 3, 2)], {"padding": "same"}),
    ("depthwise1d_strided_dilated", "depthwise_conv", (1, 12, 2), [(3, 2, 2)],
     {"strides": 2, "dilation_rate": 2}),
    ("separable2d_cf", "separable_conv", (1, 2, 7, 7), [(3, 3, 2, 2), (1, 1, 4, 3)],
     {"strides": 2, "data_format": "channels_first"}),
    ("conv_transpose2d", "conv_transpose", (2, 4, 3, 3), [(3, 3, 2, 3)], {"strides": 2}),
    ("conv_transpose1d_same_op", "conv_transpose", (2, 5, 2), [(4, 3, 2)],
     {"strides": 3, "padding": "same", "output_padding": 1}),
    ("conv_transpose3d_cf", "conv_transpose", (1, 2, 2, 3, 2), [(2, 2, 2, 3, 2)],
     {"strides": 2, "data_format": "channels_first"}),
    ("max_pool2d_same", "max_pool", (2, 5, 6, 3), [], {"pool_size": 3, "strides": 2,
                                                       "padding": "same"}),
    ("average_pool1d_cf", "average_pool", (2, 3, 7), [], {"pool_size": 2,
                                                          "data_format": "channels_first"}),
    ("average_pool3d_same", "average_pool", (1, 3, 5, 4, 2), [], {"pool_size": 2,
                                                                  "padding": "same"}),
]


def ops_cases(arrays, manifest):
    import keras

    rng = np.random.default_rng(20261214)
    for name, op, shape, kernels, kwargs in OPS:
        x = rng.normal(size=shape).astype("float32")
        ks = [rng.normal(size=k).astype("float32") for k in kernels]
        out = np.asarray(getattr(keras.ops, op)(x, *ks, **kwargs))
        arrays[f"ops/{name}/x"], arrays[f"ops/{name}/output"] = x, out
        for i, k in enumerate(ks):
            arrays[f"ops/{name}/kernel{i}"] = k
        manifest["ops"].append({"name": name, "op": op, "kernels": len(ks),
                                "kwargs": kwargs})


PARTS = {"layers": ("jax", layer_cases), "fits": ("tensorflow", fit_cases),
         "nn": ("tensorflow", nn_cases), "ops": ("tensorflow", ops_cases)}


KEYS = ("layers", "fits", "separable", "ops")


def main():
    manifest = reference_parts.main("benchmarks.keras_reference_conv", PARTS, OUT, KEYS)
    print(f"wrote {OUT}: {len(manifest['layers'])} layers ({manifest['layers_backend']}), "
          f"{len(manifest['fits'])} fits ({manifest['fits_backend']})")


if __name__ == "__main__":
    if len(sys.argv) == 3:
        reference_parts.run_part(PARTS, sys.argv[1], sys.argv[2], KEYS)
    else:
        main()
