"""Reference values for tests/test_image.py, computed once with real TensorFlow.

Run in the bench environment (``/work/venv-bench/bin/python -m benchmarks.tf_reference_image``);
it writes ``tests/data/tf_image_reference.json``. The tests read that file and never import
TensorFlow.
"""
import json
import pathlib

import numpy as np

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "tf_image_reference.json"

RESIZE = [  # (input shape, size, method, dtype)
    ((5, 6, 2), (3, 4), "bilinear", "float32"),
    ((5, 6, 2), (8, 9), "bilinear", "float32"),
    ((2, 4, 3, 1), (7, 2), "bilinear", "float32"),
    ((3, 3, 1), (3, 3), "bilinear", "float32"),
    ((4, 5, 1), (6, 3), "bilinear", "uint8"),
    ((5, 6, 2), (3, 4), "nearest", "float32"),
    ((5, 6, 2), (11, 13), "nearest", "float32"),
    ((2, 4, 3, 1), (7, 2), "nearest", "int32"),
    ((1, 7, 1), (1, 3), "bilinear", "float32"),
]


def _image(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == "uint8":
        return rng.integers(0, 256, size=shape).astype(np.uint8)
    if dtype == "int32":
        return rng.integers(-50, 50, size=shape).astype(np.int32)
    return rng.normal(size=shape).astype(dtype)


def main():
    import tensorflow as tf
    cases = {"resize": [], "resize_aspect": [], "adjust_contrast": [], "standardize": []}
    for k, (shape, size, method, dtype) in enumerate(RESIZE):
        x = _image(shape, dtype, k)
        y = tf.image.resize(x, size, method=method).numpy()
        cases["resize"].append({"input": x.tolist(), "dtype": dtype, "size": list(size),
                                "method": method, "output": y.tolist(),
                                "output_dtype": y.dtype.name})
    x = _image((4, 8, 1), "float32", 50)
    y = tf.image.resize(x, (5, 5), preserve_aspect_ratio=True).numpy()
    cases["resize_aspect"].append({"input": x.tolist(), "size": [5, 5], "output": y.tolist()})
    for k, (shape, dtype, factor) in enumerate([((3, 4, 2), "float32", 1.7),
                                                ((2, 3, 4, 3), "float32", -0.5),
                                                ((3, 4, 2), "uint8", 1.5),
                                                ((3, 4, 2), "uint8", 0.3)]):
        x = _image(shape, dtype, 100 + k)
        y = tf.image.adjust_contrast(x, factor).numpy()
        cases["adjust_contrast"].append({"input": x.tolist(), "dtype": dtype, "factor": factor,
                                         "output": y.tolist(), "output_dtype": y.dtype.name})
    for k, (shape, dtype) in enumerate([((3, 4, 2), "float32"), ((2, 3, 4, 3), "float32"),
                                        ((3, 4, 2), "uint8"), ((2, 2, 1), "float32")]):
        x = _image(shape, dtype, 200 + k) if k != 3 else np.ones(shape, np.float32)
        y = tf.image.per_image_standardization(x).numpy()
        cases["standardize"].append({"input": x.tolist(), "dtype": dtype, "output": y.tolist(),
                                     "output_dtype": y.dtype.name})
    cases["convert"] = []
    for k, (shape, src, dst) in enumerate([((2, 3, 3), "uint8", "float32"),
                                           ((2, 3, 3), "float32", "uint8"),
                                           ((2, 3, 3), "int32", "float32"),
                                           ((2, 3, 3), "float32", "int16")]):
        x = _image(shape, src, 300 + k)
        if src == "float32":
            x = np.clip(np.abs(x) / 3, 0, 1).astype(np.float32)
        elif src == "int32":
            x = np.abs(x)
        y = tf.image.convert_image_dtype(x, dst).numpy()
        cases["convert"].append({"input": x.tolist(), "dtype": src, "to": dst,
                                 "output": y.tolist()})
    cases["gray"] = []
    for k, dtype in enumerate(["float32", "uint8"]):
        x = _image((2, 2, 3, 3), dtype, 400 + k)
        y = tf.image.rgb_to_grayscale(x).numpy()
        cases["gray"].append({"input": x.tolist(), "dtype": dtype, "output": y.tolist()})
    cases["central_crop"] = []
    for k, (shape, frac) in enumerate([((7, 9, 1), 0.5), ((2, 8, 5, 2), 0.33), ((5, 5, 1), 0.9)]):
        x = _image(shape, "float32", 500 + k)
        y = tf.image.central_crop(x, frac).numpy()
        cases["central_crop"].append({"input": x.tolist(), "fraction": frac, "output": y.tolist()})
    cases["tensorflow_version"] = tf.__version__
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(cases))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
