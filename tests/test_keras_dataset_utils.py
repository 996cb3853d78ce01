"""keras.utils's data helpers against Keras 3.15 (tests/data/keras_dataset_utils_reference.json,
made by benchmarks/keras_dataset_utils_reference.py): timeseries windows, pad_sequences,
split_dataset, PyDataset in fit, and the TF time-series tutorial's window pipeline."""
import json
import pathlib

import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras

REF = json.loads((pathlib.Path(__file__).parent / "data" /
                  "keras_dataset_utils_reference.json").read_text())
DATA = np.arange(100 * 2).reshape(100, 2)
TARGETS = np.arange(100) * 10


@pytest.mark.parametrize("case", REF["windows"], ids=lambda c: f"{c['kw']}-{c['targets']}")
def test_timeseries_windows_are_keras_windows(case):
    kw = case["kw"]
    ds = keras.utils.timeseries_dataset_from_array(
        DATA, TARGETS if case["targets"] else None, **kw)
    if case["targets"]:
        got = [[np.asarray(x).tolist(), np.asarray(y).tolist()] for x, y in ds]
    else:
        got = [np.asarray(b).tolist() for b in ds]
    if kw.get("shuffle"):
        got = sorted(map(json.dumps, got[0] if not case["targets"] else
                         [list(p) for p in zip(*got[0])]))
    assert got == case["out"]


def test_shuffled_windows_are_keras_permutation_and_reproducible():
    # the window order before the local shuffle is NumPy's RandomState(seed) permutation
    a = [np.asarray(b).tolist() for b in keras.utils.timeseries_dataset_from_array(
        DATA, None, 5, shuffle=True, seed=7, batch_size=None)]
    b = [np.asarray(b).tolist() for b in keras.utils.timeseries_dataset_from_array(
        DATA, None, 5, shuffle=True, seed=7, batch_size=None)]
    assert a == b and len(a) == 96
    assert sorted(w[0][0] // 2 for w in a) == list(range(96))


@pytest.mark.parametrize("case", REF["pad"], ids=lambda c: str(c["kw"]) + str(c.get("steps", "")))
def test_pad_sequences_match_keras(case):
    seqs = [[[1, 0], [2, 0]], [[3, 1]]] if case.get("steps") else [[1, 2, 3], [4, 5], [],
                                                                   [6, 7, 8, 9, 10]]
    out = keras.utils.pad_sequences(seqs, **case["kw"])
    assert out.tolist() == case["out"] and str(out.dtype) == case["dtype"]
    assert keras.preprocessing.sequence.pad_sequences(seqs, **case["kw"]).tolist() == case["out"]


@pytest.mark.parametrize("case", REF["split"], ids=lambda c: str(c["kw"]))
def test_split_dataset_sizes_match_keras(case):
    left, right = keras.utils.split_dataset(np.arange(10), **case["kw"])
    assert [int(v) for v in left] == case["left"]
    assert [int(v) for v in right] == case["right"]


@pytest.mark.parametrize("case", REF["errors"], ids=lambda c: f"{c['fn']}-{c['kw']}")
def test_bad_arguments_get_keras_errors(case):
    kw = case["kw"]
    err = {"ValueError": ValueError, "TypeError": TypeError}[case["type"]]
    with pytest.raises(err) as info:
        if case["fn"] == "split":
            keras.utils.split_dataset(np.arange(10), **kw)
        elif case["fn"] == "timeseries":
            keras.utils.timeseries_dataset_from_array(DATA, None, 4, **kw)
        else:
            keras.utils.pad_sequences([[1, 2, 3], [4, 5], [], [6, 7, 8, 9, 10]], **kw)
    assert str(info.value) == case["msg"]


def test_split_dataset_of_tuples_and_batched_datasets_keeps_structure():
    x, y = np.arange(20).reshape(10, 2), np.arange(10) * 3
    left, right = keras.utils.split_dataset((x, y), left_size=0.6, shuffle=True, seed=1)
    lx = [(a.numpy().tolist(), int(b)) for a, b in left]
    rx = [(a.numpy().tolist(), int(b)) for a, b in right]
    assert len(lx) == 6 and len(rx) == 4
    assert sorted(lx + rx) == [(x[i].tolist(), int(y[i])) for i in range(10)]
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(4)
    left, right = keras.utils.split_dataset(ds, right_size=3)
    shapes = [tuple(a.shape) for a, _ in left]
    assert shapes == [(4, 2), (3, 2)]
    assert [b.numpy().tolist() for _, b in right] == [[21, 24, 27]]


def test_pack_and_unpack_match_keras():
    u = keras.utils.unpack_x_y_sample_weight
    p = keras.utils.pack_x_y_sample_weight
    assert u(1) == (1, None, None) and u((1,)) == (1, None, None)
    assert u([1, 2]) == (1, 2, None) and u((1, 2, 3)) == (1, 2, 3)
    with pytest.raises(ValueError, match="Data is expected to be in format"):
        u((1, 2, 3, 4))
    assert p(1) == 1 and p((1, 2)) == ((1, 2),) and p([1, 2]) == [1, 2]
    assert p(1, 2) == (1, 2) and p(1, 2, 3) == (1, 2, 3)


def test_pydataset_trains_with_epoch_hooks():
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(12, 3)).astype("float32")
    ys = (xs @ np.array([[1.0], [-2.0], [0.5]], "float32")).astype("float32")

    class Batches(keras.utils.PyDataset):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.ends = 0
            self.order = np.arange(12)

        def __len__(self):
            return 3

        def __getitem__(self, i):
            idx = self.order[i * 4:(i + 1) * 4]
            return xs[idx], ys[idx]

        def on_epoch_end(self):
            self.ends += 1
            self.order = np.roll(self.order, 4)

    data = Batches(workers=2)
    assert data.num_batches == 3 and data.workers == 2
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    hist = model.fit(data, epochs=4, verbose=0)
    assert data.ends == 4
    assert hist.history["loss"][-1] < hist.history["loss"][0]
    assert keras.utils.Sequence is keras.utils.PyDataset


def test_tf_time_series_tutorial_window_pipeline_trains():
    # the TF "Time series forecasting" tutorial's WindowGenerator.make_dataset and split_window
    data = np.random.default_rng(1).normal(size=(300, 3)).astype("float32")
    input_width, label_width, shift = 12, 1, 1
    total = input_width + shift

    def split_window(features):
        inputs = features[:, slice(0, input_width), :]
        labels = features[:, slice(total - label_width, None), :]
        labels = tf.stack([labels[:, :, 0]], axis=-1)
        inputs.set_shape([None, input_width, None])
        labels.set_shape([None, label_width, None])
        return inputs, labels

    ds = keras.utils.timeseries_dataset_from_array(
        data=data, targets=None, sequence_length=total, sequence_stride=1, shuffle=True,
        batch_size=32).map(split_window)
    x, y = next(iter(ds))
    assert tuple(x.shape) == (32, 12, 3) and tuple(y.shape) == (32, 1, 1)
    k = int(np.flatnonzero((data == x.numpy()[0, 0]).all(axis=1))[0])  # the window's start
    np.testing.assert_array_equal(x.numpy()[0], data[k:k + 12])
    np.testing.assert_array_equal(y.numpy()[0, 0, 0], data[k + 12, 0])
    model = keras.Sequential([keras.layers.LSTM(4), keras.layers.Dense(1),
                              keras.layers.Reshape([1, 1])])
    model.compile(loss=keras.losses.MeanSquaredError(), optimizer=keras.optimizers.Adam(),
                  metrics=[keras.metrics.MeanAbsoluteError()])
    hist = model.fit(ds, epochs=2, verbose=0, callbacks=[
        keras.callbacks.EarlyStopping(monitor="loss", patience=2, mode="min")])
    assert np.isfinite(hist.history["loss"]).all()


def test_set_shape_checks_as_tensorflow():
    t = tf.zeros((2, 3))
    assert t.set_shape([None, 3]) is None and t.set_shape(None) is None
    for bad in ([2, 4], [2], [None, None, None]):
        with pytest.raises(ValueError, match=r"Tensor's shape \(2, 3\) is not compatible"):
            t.set_shape(bad)
