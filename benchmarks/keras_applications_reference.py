"""Reference data from real Keras 3.15 (TensorFlow backend) for ``keras.applications``:
each architecture's parameter counts, layers (name, class, output shape) and output shape
with ``weights=None``, and every family's ``preprocess_input``, for
tests/test_keras_applications.py.

Run in the bench environment (it needs keras and tensorflow; the tests never import them):

    /work/venv-bench/bin/python -m benchmarks.keras_applications_reference

The manifest is JSON inside the same ``.npz`` (read with ``allow_pickle=False``).
"""
import json
import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import numpy as np  # noqa: E402

OUT = (pathlib.Path(__file__).resolve().parent.parent / "tests" / "data"
       / "keras_applications_reference.npz")

# (case name, constructor, keyword arguments; weights=None is added to each)
MODELS = [
    ("vgg16", "VGG16", {}),
    ("vgg16_top32", "VGG16", {"input_shape": (32, 32, 3), "classes": 10}),
    ("vgg16_notop_avg", "VGG16", {"include_top": False, "input_shape": (32, 32, 3),
                                  "pooling": "avg"}),
    ("vgg19", "VGG19", {"classes": 10, "classifier_activation": None}),
    ("vgg19_notop", "VGG19", {"include_top": False}),
    ("resnet50", "ResNet50", {}),
    ("resnet50_notop_max", "ResNet50", {"include_top": False, "input_shape": (64, 48, 3),
                                        "pooling": "max"}),
    ("resnet101", "ResNet101", {}),
    ("resnet101_notop", "ResNet101", {"include_top": False, "input_shape": (32, 32, 3)}),
    ("resnet152", "ResNet152", {"include_top": False, "pooling": "avg"}),
    ("mobilenetv2", "MobileNetV2", {}),
    ("mobilenetv2_a050_96", "MobileNetV2", {"alpha": 0.5, "include_top": False,
                                            "input_shape": (96, 96, 3)}),
    ("mobilenetv2_a140_33", "MobileNetV2", {"alpha": 1.4, "input_shape": (33, 35, 3),
                                            "classes": 7}),
    ("mobilenetv2_a035_avg", "MobileNetV2", {"alpha": 0.35, "include_top": False,
                                             "pooling": "avg"}),
    ("densenet121", "DenseNet121", {}),
    ("densenet121_notop", "DenseNet121", {"include_top": False, "input_shape": (32, 32, 3),
                                          "pooling": "max"}),
    ("densenet169", "DenseNet169", {"include_top": False}),
    ("densenet121_top40", "DenseNet121", {"input_shape": (40, 40, 3), "classes": 3,
                                          "classifier_activation": "sigmoid"}),
    ("densenet201", "DenseNet201", {"include_top": False}),
    ("efficientnetb0", "EfficientNetB0", {}),
    ("efficientnetb0_notop", "EfficientNetB0", {"include_top": False,
                                                "input_shape": (32, 32, 3),
                                                "pooling": "avg"}),
]
# (family module, mode it uses)
FAMILIES = ["vgg16", "vgg19", "resnet", "resnet50", "mobilenet_v2", "densenet",
            "efficientnet", "imagenet_utils"]


def shape_of(t):
    return [None if d is None else int(d) for d in t.shape]


def main():
    import keras
    arrays, manifest = {}, {"models": [], "preprocess": []}
    for name, ctor, kwargs in MODELS:
        model = getattr(keras.applications, ctor)(weights=None, **kwargs)
        manifest["models"].append({
            "name": name, "ctor": ctor,
            "kwargs": {k: list(v) if isinstance(v, tuple) else v for k, v in kwargs.items()},
            "model_name": model.name,
            "count_params": int(model.count_params()),
            "trainable": int(sum(np.prod(w.shape) for w in model.trainable_weights)),
            "n_weights": len(model.weights),
            "input_shape": shape_of(model.input),
            "output_shape": shape_of(model.output),
            "layers": [[layer.name, type(layer).__name__, shape_of(layer.output)]
                       for layer in model.layers]})
        print(name, model.count_params(), len(model.layers), flush=True)
    rng = np.random.default_rng(9)
    images = {"rgb4": rng.uniform(0, 255, (2, 4, 5, 3)).astype(np.float32),
              "rgb3": rng.uniform(0, 255, (4, 5, 3)).astype(np.float64),
              "uint8": rng.integers(0, 256, (1, 3, 2, 3)).astype(np.uint8),
              "first4": rng.uniform(0, 255, (2, 3, 4, 5)).astype(np.float32),
              "first3": rng.uniform(0, 255, (3, 4, 5)).astype(np.float32)}
    for key, x in images.items():
        arrays[f"image/{key}"] = x
    for family in FAMILIES:
        module = getattr(keras.applications, family)
        for key, x in images.items():
            fmt = "channels_first" if key.startswith("first") else None
            for kind in ("numpy", "tensor"):
                arg = x.copy() if kind == "numpy" else keras.ops.convert_to_tensor(x)
                if kind == "tensor" and x.dtype == np.uint8:
                    continue  # Keras's tensor path divides a uint8 tensor in place: an error
                out = np.asarray(module.preprocess_input(arg, data_format=fmt))
                case = f"{family}/{key}/{kind}"
                arrays[f"pre/{case}"] = out
                if kind == "numpy":  # Keras writes over a float array it is given
                    arrays[f"pre/{case}/after"] = arg
                manifest["preprocess"].append({"case": case, "family": family, "image": key,
                                               "kind": kind, "data_format": fmt})
    arrays["manifest"] = np.asarray(json.dumps(manifest))
    np.savez_compressed(OUT, **arrays)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
