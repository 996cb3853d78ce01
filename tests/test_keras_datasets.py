"""keras.datasets read Keras's cached files ($KERAS_HOME/datasets) in Keras's formats, split
as Keras splits them, and say where a missing file must go (nothing is downloaded)."""
import gzip

import numpy as np
import pytest

from tapegrad import keras


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    (tmp_path / "datasets").mkdir()
    return tmp_path / "datasets"


def test_mnist_reads_the_cached_npz(home):
    rng = np.random.default_rng(0)
    arrays = {"x_train": rng.integers(0, 256, (6, 28, 28), dtype=np.uint8),
              "y_train": rng.integers(0, 10, 6, dtype=np.uint8),
              "x_test": rng.integers(0, 256, (2, 28, 28), dtype=np.uint8),
              "y_test": rng.integers(0, 10, 2, dtype=np.uint8)}
    np.savez(home / "mnist.npz", **arrays)
    (x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data()
    for got, key in ((x_train, "x_train"), (y_train, "y_train"), (x_test, "x_test"),
                     (y_test, "y_test")):
        np.testing.assert_array_equal(got, arrays[key])
        assert got.dtype == np.uint8
    # the tutorial's next lines
    model = keras.Sequential([keras.Input((28, 28)), keras.layers.Flatten(),
                              keras.layers.Dense(10)])
    model.compile(optimizer="adam", metrics=["accuracy"],
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    hist = model.fit(x_train / 255.0, y_train, epochs=1, verbose=0)
    assert np.isfinite(hist.history["loss"]).all()


def test_fashion_mnist_reads_the_cached_idx_files(home):
    d = home / "fashion-mnist"
    d.mkdir()
    rng = np.random.default_rng(1)
    want = []
    for prefix, n in (("train", 5), ("t10k", 3)):
        y = rng.integers(0, 10, n, dtype=np.uint8)
        x = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
        with gzip.open(d / f"{prefix}-labels-idx1-ubyte.gz", "wb") as f:
            f.write(b"\0" * 8 + y.tobytes())
        with gzip.open(d / f"{prefix}-images-idx3-ubyte.gz", "wb") as f:
            f.write(b"\0" * 16 + x.tobytes())
        want.append((x, y))
    got = keras.datasets.fashion_mnist.load_data()
    for (gx, gy), (wx, wy) in zip(got, want):
        np.testing.assert_array_equal(gx, wx)
        np.testing.assert_array_equal(gy, wy)


def test_boston_housing_splits_as_keras(home):
    x = np.arange(50 * 13, dtype=np.float64).reshape(50, 13)
    y = np.arange(50, dtype=np.float64)
    np.savez(home / "boston_housing.npz", x=x, y=y)
    (x_train, y_train), (x_test, y_test) = keras.datasets.boston_housing.load_data()
    order = np.arange(50)
    np.random.RandomState(113).shuffle(order)  # Keras's shuffle
    np.testing.assert_array_equal(y_train, order[:40])
    np.testing.assert_array_equal(y_test, order[40:])
    np.testing.assert_array_equal(x_train, x[order[:40]])
    with pytest.raises(ValueError, match="Invalid `test_split` argument: 1"):
        keras.datasets.boston_housing.load_data(test_split=1)


def test_a_missing_file_says_where_to_put_it(home):
    with pytest.raises(FileNotFoundError) as info:
        keras.datasets.mnist.load_data()
    text = str(info.value)
    assert str(home / "mnist.npz") in text and "downloads nothing" in text
    assert "https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz" in text
