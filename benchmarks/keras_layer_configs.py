"""Keras 3's ``get_config()`` of every layer class tapegrad.keras has, made with the fewest
arguments it needs, for tests/test_keras_layer_configs.py (key sets and values, defaults
included). Run in the bench environment:

    /work/venv-bench/bin/python -m benchmarks.keras_layer_configs

It writes tests/data/keras_layer_configs.json: per case the class, the arguments it was
made with, and its config with nested objects (initializers, regularizers, sublayers,
dtype policies) serialized as Keras serializes them.
"""
import json
import os
import pathlib

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "keras_layer_configs.json"

CONV = {"filters": 2, "kernel_size": 3}
# case -> (class name, constructor arguments); a nested layer is ("layer", class, args)
CASES = {
    "Dense": ("Dense", {"units": 4}),
    "EinsumDense": ("EinsumDense", {"equation": "ab,bc->ac", "output_shape": 4}),
    "Embedding": ("Embedding", {"input_dim": 10, "output_dim": 3}),
    "Activation": ("Activation", {"activation": "relu"}),
    "ActivityRegularization": ("ActivityRegularization", {}),
    "Flatten": ("Flatten", {}),
    "Reshape": ("Reshape", {"target_shape": [2, 2]}),
    "Permute": ("Permute", {"dims": [2, 1]}),
    "RepeatVector": ("RepeatVector", {"n": 2}),
    "Masking": ("Masking", {}),
    "Dropout": ("Dropout", {"rate": 0.5}),
    "AlphaDropout": ("AlphaDropout", {"rate": 0.5}),
    "GaussianDropout": ("GaussianDropout", {"rate": 0.5}),
    "GaussianNoise": ("GaussianNoise", {"stddev": 0.1}),
    "SpatialDropout1D": ("SpatialDropout1D", {"rate": 0.5}),
    "SpatialDropout2D": ("SpatialDropout2D", {"rate": 0.5}),
    "SpatialDropout3D": ("SpatialDropout3D", {"rate": 0.5}),
    "BatchNormalization": ("BatchNormalization", {}),
    "LayerNormalization": ("LayerNormalization", {}),
    "GroupNormalization": ("GroupNormalization", {}),
    "Normalization": ("Normalization", {}),
    "Rescaling": ("Rescaling", {"scale": 0.5}),
    "Resizing": ("Resizing", {"height": 4, "width": 4}),
    "CenterCrop": ("CenterCrop", {"height": 4, "width": 4}),
    "RandomCrop": ("RandomCrop", {"height": 4, "width": 4}),
    "RandomFlip": ("RandomFlip", {}),
    "RandomRotation": ("RandomRotation", {"factor": 0.1}),
    "RandomTranslation": ("RandomTranslation", {"height_factor": 0.1, "width_factor": 0.1}),
    "RandomZoom": ("RandomZoom", {"height_factor": 0.1}),
    "RandomContrast": ("RandomContrast", {"factor": 0.1}),
    "RandomBrightness": ("RandomBrightness", {"factor": 0.1}),
    "CategoryEncoding": ("CategoryEncoding", {"num_tokens": 4}),
    "Discretization": ("Discretization", {"bin_boundaries": [0.0, 1.0]}),
    "LeakyReLU": ("LeakyReLU", {}),
    "ELU": ("ELU", {}),
    "ReLU": ("ReLU", {}),
    "PReLU": ("PReLU", {}),
    "Softmax": ("Softmax", {}),
    "Add": ("Add", {}), "Subtract": ("Subtract", {}), "Multiply": ("Multiply", {}),
    "Average": ("Average", {}), "Maximum": ("Maximum", {}), "Minimum": ("Minimum", {}),
    "Concatenate": ("Concatenate", {}),
    "Attention": ("Attention", {}),
    "AdditiveAttention": ("AdditiveAttention", {}),
    "MultiHeadAttention": ("MultiHeadAttention", {"num_heads": 2, "key_dim": 4}),
    "SimpleRNN": ("SimpleRNN", {"units": 4}),
    "LSTM": ("LSTM", {"units": 4}),
    "GRU": ("GRU", {"units": 4}),
    "Bidirectional": ("Bidirectional", {"layer": ("layer", "LSTM", {"units": 4})}),
    "TimeDistributed": ("TimeDistributed", {"layer": ("layer", "Dense", {"units": 4})}),
    "Cropping1D": ("Cropping1D", {}), "Cropping2D": ("Cropping2D", {}),
    "ZeroPadding1D": ("ZeroPadding1D", {}), "ZeroPadding2D": ("ZeroPadding2D", {}),
    "UpSampling1D": ("UpSampling1D", {}), "UpSampling2D": ("UpSampling2D", {}),
}
for d in ("1D", "2D", "3D"):
    CASES[f"Conv{d}"] = (f"Conv{d}", dict(CONV))
    CASES[f"Conv{d}Transpose"] = (f"Conv{d}Transpose", dict(CONV))
    for kind in ("Max", "Average"):
        CASES[f"{kind}Pooling{d}"] = (f"{kind}Pooling{d}", {"pool_size": 2})
        CASES[f"Global{kind}Pooling{d}"] = (f"Global{kind}Pooling{d}", {})
for d in ("1D", "2D"):
    CASES[f"DepthwiseConv{d}"] = (f"DepthwiseConv{d}", {"kernel_size": 3})
    CASES[f"SeparableConv{d}"] = (f"SeparableConv{d}", dict(CONV))


def make(layers, cls, args):
    args = {k: make(layers, v[1], v[2]) if isinstance(v, tuple) and v[0] == "layer" else v
            for k, v in args.items()}
    return getattr(layers, cls)(**args)


def main():
    import keras

    out = {"keras_version": keras.__version__, "cases": {}}
    for case, (cls, args) in sorted(CASES.items()):
        layer = make(keras.layers, cls, args)
        config = keras.saving.serialize_keras_object(layer)["config"]
        out["cases"][case] = {"class": cls, "args": args, "config": config}
    OUT.write_text(json.dumps(out, indent=1, sort_keys=True, default=repr) + "\n")
    print(f"wrote {OUT} (Keras {keras.__version__}, {len(CASES)} layers)")


if __name__ == "__main__":
    main()
