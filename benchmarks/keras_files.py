"""Two ``.keras`` files written by real Keras 3 (TensorFlow backend), with inputs and
Keras's predictions, for tests/test_keras_saving.py (loading files Keras wrote; it needs
h5py, as the weights are HDF5). Run in the bench environment:

    /work/venv-bench/bin/python -m benchmarks.keras_files
"""
import os
import pathlib

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "keras_files"


def main():
    import keras

    OUT.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(20261206)
    seq = keras.Sequential([keras.Input((6,)), keras.layers.Dense(8, activation="relu"),
                            keras.layers.BatchNormalization(), keras.layers.Dropout(0.2),
                            keras.layers.Dense(3, activation="softmax")])
    seq.compile(optimizer=keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy",
                metrics=["accuracy"])
    x = rng.normal(size=(20, 6)).astype("float32")
    seq.fit(x, rng.integers(0, 3, 20), epochs=2, verbose=0)
    seq.save(OUT / "sequential.keras")

    a, b = keras.Input((4,), name="a"), keras.Input((2,), name="b")
    h = keras.layers.Concatenate()([keras.layers.Dense(5, activation="tanh")(a), b])
    two = keras.Model([a, b], [keras.layers.Dense(1, name="y")(h),
                               keras.layers.Dense(3, activation="softmax", name="c")(h)])
    two.compile(optimizer="sgd", loss=["mse", "sparse_categorical_crossentropy"])
    xa, xb = rng.normal(size=(6, 4)).astype("float32"), rng.normal(size=(6, 2)).astype(
        "float32")
    two.save(OUT / "two_inputs.keras")
    y, c = two.predict([xa, xb], verbose=0)
    np.savez(OUT / "predictions.npz", x=x, sequential=seq.predict(x, verbose=0), xa=xa,
             xb=xb, y=y, c=c, keras_version=np.array(keras.__version__))
    print(f"wrote {OUT} (Keras {keras.__version__})")


if __name__ == "__main__":
    main()
