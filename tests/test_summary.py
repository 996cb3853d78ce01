"""tf.summary and keras.callbacks.TensorBoard write TensorBoard event files in TensorFlow 2's
format: TFRecord framing with masked CRC-32C checksums around Event protocol buffers (read
back here by tapegrad.summary.events; TensorFlow 2.21's summary_iterator reads these files:
checked by hand, as tests never import TensorFlow)."""
import glob
import os

import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras
from tapegrad.summary import events


def test_crc32c_and_record_framing():
    assert events.crc32c(b"123456789") == 0xE3069283  # the standard check value
    assert events.crc32c(b"") == 0
    recs = [b"", b"abc", bytes(range(256)) * 3]
    data = b"".join(events.frame(r) for r in recs)
    assert events.unframe(data) == recs
    bad = bytearray(data)
    bad[13] ^= 1
    with pytest.raises(ValueError):
        events.unframe(bytes(bad))


def _read(logdir):
    (path,) = glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
    return events.read_events(path)


def test_scalars_and_histograms_round_trip(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    data = np.random.default_rng(0).normal(size=200)
    with writer.as_default():
        for step in range(3):
            assert tf.summary.scalar("loss", tf.constant(1.0 / (step + 1)), step=step)
        assert tf.summary.histogram("w", data, step=4)
        tf.summary.experimental.set_step(7)
        assert tf.summary.scalar("lr", 0.5)
        tf.summary.experimental.set_step(None)
        with pytest.raises(ValueError, match="No step set"):
            tf.summary.scalar("lr", 0.5)
        with tf.summary.record_if(False):
            assert not tf.summary.scalar("skipped", 1.0, step=0)
    assert not tf.summary.scalar("outside", 1.0, step=0)
    writer.close()
    evs = _read(tmp_path)
    assert evs[0]["file_version"] == "brain.Event:2"
    got = [(e["step"], s["tag"], s["plugin"], s["value"]) for e in evs[1:] for s in e["summary"]]
    assert [(st, tag, pl) for st, tag, pl, _ in got] == [
        (0, "loss", "scalars"), (1, "loss", "scalars"), (2, "loss", "scalars"),
        (4, "w", "histograms"), (7, "lr", "scalars")]
    assert [float(v) for _, tag, _, v in got if tag == "loss"] == [1.0, 0.5, np.float32(1 / 3)]
    hist = got[3][3]
    assert hist.shape == (30, 3) and hist[:, 2].sum() == 200
    assert hist[0, 0] == data.min() and hist[-1, 1] == data.max()
    np.testing.assert_allclose(hist[1:, 0], hist[:-1, 1])


def test_histogram_buckets_edge_cases():
    assert np.array_equal(tf.summary.histogram_buckets([]), np.zeros((30, 3)))
    one = tf.summary.histogram_buckets([2.0, 2.0, 2.0], 5)
    assert one[:, :2].tolist() == [[2.0, 2.0]] * 5 and one[:, 2].tolist() == [0, 0, 0, 0, 3]
    h = tf.summary.histogram_buckets([0.0, 1.0, 2.0, 3.0, 4.0], 4)
    assert h[:, 2].tolist() == [1, 1, 1, 2]  # the maximum falls in the last bucket


def test_summaries_inside_tf_function_raise():
    writer = tf.summary.create_noop_writer()

    @tf.function
    def f(x):
        tf.summary.scalar("x", x, step=0)
        return x

    with writer.as_default():
        with pytest.raises(NotImplementedError, match="cannot call back into Python"):
            f(tf.constant(1.0))


def test_keras_tensorboard_callback_writes_keras_tags(tmp_path):
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(32, 3)).astype("float32"), rng.normal(size=(32, 1)).astype("float32")
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, name="hidden"),
                              keras.layers.Dense(1, name="out")])
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse", metrics=["mae"])
    cb = keras.callbacks.TensorBoard(log_dir=str(tmp_path), histogram_freq=1, update_freq=2)
    hist = model.fit(x, y, epochs=2, batch_size=8, validation_split=0.25, verbose=0,
                     callbacks=[cb])
    train = _read(tmp_path / "train")
    scalars = {}
    for e in train[1:]:
        for s in e["summary"]:
            scalars.setdefault(s["tag"], []).append((e["step"], s["value"]))
    assert [float(v) for _, v in scalars["epoch_loss"]] == [
        np.float32(v) for v in hist.history["loss"]]
    assert [st for st, _ in scalars["epoch_loss"]] == [0, 1]
    # the histograms are tagged with the weights' paths ('sequential/hidden/kernel')
    assert {"epoch_mae", "epoch_learning_rate", "batch_loss",
            f"{model.name}/hidden/kernel/histogram", f"{model.name}/out/bias/histogram"
            } <= set(scalars)
    assert [st for st, _ in scalars["batch_loss"]] == [2, 4, 6]  # every 2nd of 6 batches
    val = _read(tmp_path / "validation")
    vtags = {s["tag"] for e in val[1:] for s in e["summary"]}
    assert {"epoch_loss", "epoch_mae", "evaluation_loss_vs_iterations"} <= vtags
    vloss = [float(s["value"]) for e in val[1:] for s in e["summary"] if s["tag"] == "epoch_loss"]
    assert vloss == [np.float32(v) for v in hist.history["val_loss"]]
