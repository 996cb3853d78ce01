"""Reference values from real Keras 3.15 (TensorFlow backend) for ``IntegerLookup``, for
tests/test_keras_lookup.py: outputs and dtypes of given vocabularies in every output mode,
and the vocabularies (and IDF weights) ``adapt`` learns.

Run in the bench environment (it needs keras and tensorflow; the tests never import them):

    /work/venv-bench/bin/python -m benchmarks.keras_lookup_reference

The manifest is JSON inside the same ``.npz`` (read with ``allow_pickle=False``).
"""
import json
import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

OUT = (pathlib.Path(__file__).resolve().parent.parent / "tests" / "data"
       / "keras_lookup_reference.npz")
VOCAB = [12, 36, 1138, 42]
INPUTS = {"2d": [[12, 1138, 42], [42, 1000, 36]], "1d": [12, 5, 42, 42],
          "col": [[12], [7], [36]], "neg": [[-3, 12, 2**40, 0]], "0d": 42,
          "ids": [[1, 2, 0, 4, 7]]}
CONFIGS = [
    ("plain", {"vocabulary": VOCAB}, ["2d", "1d", "col", "neg", "0d"]),
    ("mask", {"vocabulary": VOCAB, "mask_token": 0}, ["neg", "2d"]),
    ("oov3", {"vocabulary": VOCAB, "num_oov_indices": 3}, ["neg", "2d"]),
    ("oov3_mask", {"vocabulary": VOCAB, "num_oov_indices": 3, "mask_token": 0}, ["neg"]),
    ("special_given", {"vocabulary": [-1, 12, 36]}, ["2d"]),
    ("oov_token", {"vocabulary": VOCAB, "oov_token": 99}, ["2d"]),
    ("invert", {"vocabulary": VOCAB, "invert": True}, ["ids"]),
    ("invert_mask", {"vocabulary": VOCAB, "invert": True, "mask_token": 0}, ["ids"]),
    ("invert_oov2", {"vocabulary": VOCAB, "invert": True, "num_oov_indices": 2}, ["ids"]),
]
for mode in ("multi_hot", "count", "one_hot"):
    CONFIGS += [(f"{mode}", {"vocabulary": VOCAB, "output_mode": mode}, ["2d", "1d", "col"]),
                (f"{mode}_mask", {"vocabulary": VOCAB, "output_mode": mode, "mask_token": 0},
                 ["neg"]),
                (f"{mode}_pad", {"vocabulary": VOCAB, "output_mode": mode, "max_tokens": 9,
                                 "pad_to_max_tokens": True}, ["2d", "1d"])]
CONFIGS += [("tf_idf", {"vocabulary": VOCAB, "output_mode": "tf_idf",
                        "idf_weights": [0.5, 0.25, 2.0, 1.0]}, ["2d", "1d"]),
            ("tf_idf_pad", {"vocabulary": VOCAB, "output_mode": "tf_idf", "max_tokens": 7,
                            "pad_to_max_tokens": True, "idf_weights": [0.5, 0.25, 2.0, 1.0]},
             ["2d"])]
ADAPT_DATA = {"rows": [[12, 1138, 42], [42, 1000, 36], [36, 36, 5]],
              "flat": [3, 3, 1, 2, 2, 0, 0, 0, -1, 7, 7, 7],
              "floats": [[1.0, 2.5, 2.0], [3.7, 1.0, 1.2]]}
ADAPTS = [("rows", {}, "rows"), ("max", {"max_tokens": 3, "mask_token": 0}, "flat"),
          ("max_oov2", {"max_tokens": 5, "num_oov_indices": 2}, "flat"),
          ("floats", {}, "floats"),
          ("tf_idf", {"output_mode": "tf_idf"}, "rows"),
          ("tf_idf_pad", {"output_mode": "tf_idf", "max_tokens": 10,
                          "pad_to_max_tokens": True}, "rows"),
          ("multi_hot", {"output_mode": "multi_hot", "mask_token": 0}, "flat")]


def main():
    import keras
    arrays, manifest = {}, {"calls": [], "adapt": []}
    for key, value in INPUTS.items():
        arrays[f"input/{key}"] = np.asarray(value, np.int64)
    for name, config, inputs in CONFIGS:
        layer = keras.layers.IntegerLookup(**config)
        for key in inputs:
            out = np.asarray(layer(np.asarray(INPUTS[key], np.int64)))
            arrays[f"call/{name}/{key}"] = out
            manifest["calls"].append({"name": name, "config": config, "input": key})
        arrays[f"vocab/{name}"] = np.asarray(layer.get_vocabulary(), np.int64)
        arrays[f"vocab_size/{name}"] = np.asarray(layer.vocabulary_size())
    for key, value in ADAPT_DATA.items():
        arrays[f"adapt_data/{key}"] = np.asarray(value)
    for name, config, data in ADAPTS:
        layer = keras.layers.IntegerLookup(**config)
        layer.adapt(np.asarray(ADAPT_DATA[data]))
        arrays[f"adapt/{name}/vocab"] = np.asarray(layer.get_vocabulary(), np.int64)
        probe = np.asarray([[36, 42, 7, 0, 3, 2]], np.int64)
        arrays[f"adapt/{name}/out"] = np.asarray(layer(probe))
        manifest["adapt"].append({"name": name, "config": config, "data": data})
    arrays["manifest"] = np.asarray(json.dumps(manifest))
    np.savez_compressed(OUT, **arrays)
    print("wrote", OUT, len(arrays))


if __name__ == "__main__":
    main()
