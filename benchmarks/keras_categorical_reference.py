"""Reference values from real Keras 3 (TensorFlow backend) for ``CategoryEncoding`` and
``Discretization`` (given boundaries and ``adapt``), for tests/test_keras_categorical.py.

Run in the bench environment (it needs keras and tensorflow; the tests never import them):

    /work/venv-bench/bin/python -m benchmarks.keras_categorical_reference

The manifest is JSON inside the same ``.npz`` (read with ``allow_pickle=False``).
"""
import json
import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import numpy as np  # noqa: E402

OUT = (pathlib.Path(__file__).resolve().parent.parent / "tests" / "data"
       / "keras_categorical_reference.npz")
IDS = {"1d": [0, 3, 1, 1, 7], "2d": [[0, 1, 1, 9], [3, 2, 0, 0]], "col": [[2], [0], [3]],
       "3d": [[[0, 1], [2, 2]]], "0d": 2, "float": [[0.0, 1.7, 3.2]]}
NUMBERS = [[-1.5, 0.0, 0.2, 1.0, np.nan, np.inf, -np.inf, 2.0, 0.99999994, 1.0000001]]

# (case name, layer class, config, input name, call kwargs)
CASES = [(f"encode_{mode}_{name}", "CategoryEncoding", {"num_tokens": 8, "output_mode": mode},
          name, {}) for mode in ("one_hot", "multi_hot", "count") for name in IDS
         if not (mode == "one_hot" and name == "0d")]
CASES += [("encode_int32", "CategoryEncoding", {"num_tokens": 4, "dtype": "int32"}, "col", {}),
          ("encode_binary", "CategoryEncoding", {"num_tokens": 5, "output_mode": "binary"},
           "2d", {}),
          ("encode_weights", "CategoryEncoding", {"num_tokens": 10, "output_mode": "count"},
           "2d", {"count_weights": [[0.5, 1.0, 2.0, 0.25], [1.0, 1.0, 3.0, -1.0]]})]
CASES += [(f"discretize_{mode}", "Discretization",
           {"bin_boundaries": [0.0, 1.0, 2.0], "output_mode": mode}, "numbers", {})
          for mode in ("int", "one_hot", "multi_hot", "count")]
ADAPT = [("normal", (100, 3), 4, 0.01), ("uniform", (1000,), 5, 0.01),
         ("uniform_coarse", (57, 2), 3, 0.1), ("ints", (50,), 3, 0.01)]


def main():
    import keras
    rng = np.random.default_rng(8)
    arrays, manifest = {}, {"layers": [], "adapt": []}
    for name, cls, config, input_name, kwargs in CASES:
        x = np.asarray(NUMBERS if input_name == "numbers" else IDS[input_name])
        if input_name == "numbers":
            x = x.astype(np.float32)
        out = getattr(keras.layers, cls)(**config)(x, **kwargs)
        arrays[f"layer/{name}/input"] = x
        arrays[f"layer/{name}/output"] = np.asarray(out)
        manifest["layers"].append({"name": name, "class": cls, "config": config,
                                   "kwargs": kwargs})
    for name, shape, num_bins, epsilon in ADAPT:
        data = (rng.integers(0, 5, shape).astype(np.float64) if name == "ints"
                else rng.normal(size=shape) if name == "normal" else rng.uniform(size=shape))
        layer = keras.layers.Discretization(num_bins=num_bins, epsilon=epsilon)
        layer.adapt(data)
        batched = keras.layers.Discretization(num_bins=num_bins, epsilon=epsilon)
        batched.adapt([data[i:i + 7] for i in range(0, len(data), 7)])
        arrays[f"adapt/{name}/data"] = data
        arrays[f"adapt/{name}/boundaries"] = np.asarray(layer.bin_boundaries)
        arrays[f"adapt/{name}/batched"] = np.asarray(batched.bin_boundaries)
        manifest["adapt"].append({"name": name, "num_bins": num_bins, "epsilon": epsilon})
    arrays["manifest"] = np.array(json.dumps(manifest, sort_keys=True))
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {OUT}: {len(manifest['layers'])} layers, {len(manifest['adapt'])} adapts "
          f"(keras {keras.__version__})")


if __name__ == "__main__":
    main()
