"""The Keras guide "Writing your own callbacks" and the built-in callbacks of the training
guides (ModelCheckpoint, EarlyStopping, LearningRateScheduler, ReduceLROnPlateau,
CSVLogger, TerminateOnNaN), run with ``import tapegrad as tf``: which hooks run, with which
log keys, and what each callback does to the model."""
import csv
import os

import numpy as np
import pytest

from tapegrad import keras
from tapegrad.keras import layers


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.random((n, 4)).astype("float32")
    return x, x.sum(1, keepdims=True)


def _model(lr=0.05, seed=0):
    keras.utils.set_random_seed(seed)
    model = keras.Sequential([keras.Input((4,)), layers.Dense(8, activation="relu"),
                              layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.RMSprop(learning_rate=lr),
                  loss="mean_squared_error", metrics=["mean_absolute_error"])
    return model


class Recorder(keras.callbacks.Callback):
    """Every hook with the keys of its logs, as the guide's CustomCallback prints them."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def __getattribute__(self, name):
        if name.startswith("on_") and not name.startswith("on_batch"):
            calls = object.__getattribute__(self, "calls")

            def hook(*args):
                calls.append((name, *args[:-1], sorted(args[-1])))
            return hook
        return object.__getattribute__(self, name)


def test_hooks_and_their_log_keys_in_fit_evaluate_and_predict():
    x, y = _data()
    model = _model()
    rec = Recorder()
    model.fit(x, y, batch_size=30, epochs=1, verbose=0, validation_split=0.5, callbacks=[rec])
    metrics = ["loss", "mean_absolute_error"]
    assert rec.calls == [
        ("on_train_begin", []), ("on_epoch_begin", 0, []),
        ("on_train_batch_begin", 0, []), ("on_train_batch_end", 0, metrics),
        ("on_test_begin", []),  # the validation runs the test hooks
        ("on_test_batch_begin", 0, []), ("on_test_batch_end", 0, metrics),
        ("on_test_end", metrics),
        ("on_epoch_end", 0, metrics + ["val_loss", "val_mean_absolute_error"]),
        ("on_train_end", metrics + ["val_loss", "val_mean_absolute_error"])]
    rec.calls.clear()
    model.evaluate(x, y, batch_size=30, verbose=0, callbacks=[rec])
    assert [c[0] for c in rec.calls] == ["on_test_begin"] + [
        "on_test_batch_begin", "on_test_batch_end"] * 2 + ["on_test_end"]
    assert rec.calls[2] == ("on_test_batch_end", 0, metrics)
    rec.calls.clear()
    model.predict(x, batch_size=30, verbose=0, callbacks=[rec])
    assert rec.calls[0] == ("on_predict_begin", []) and rec.calls[-1] == ("on_predict_end", [])
    assert rec.calls[2] == ("on_predict_batch_end", 0, ["outputs"])


def test_batch_logs_are_running_means_and_on_batch_end_is_the_old_name():
    x, y = _data()
    model = _model()
    batch_losses = []

    class Old(keras.callbacks.Callback):
        def on_batch_end(self, batch, logs=None):  # Keras's older name still runs
            batch_losses.append(logs["loss"])
    history = model.fit(x, y, batch_size=20, epochs=1, verbose=0, callbacks=[Old()])
    assert len(batch_losses) == 3 and batch_losses[-1] == history.history["loss"][0]


def test_the_guides_early_stopping_at_min_loss():
    class EarlyStoppingAtMinLoss(keras.callbacks.Callback):
        def __init__(self, patience=0):
            super().__init__()
            self.patience = patience
            self.best_weights = None

        def on_train_begin(self, logs=None):
            self.wait, self.stopped_epoch, self.best = 0, 0, np.inf

        def on_epoch_end(self, epoch, logs=None):
            current = logs.get("loss")
            if np.less(current, self.best):
                self.best, self.wait = current, 0
                self.best_weights = self.model.get_weights()
            else:
                self.wait += 1
                if self.wait >= self.patience:
                    self.stopped_epoch = epoch
                    self.model.stop_training = True
                    self.model.set_weights(self.best_weights)
    x, y = _data()
    model = _model(lr=1.0)  # too large a step: the loss soon rises
    cb = EarlyStoppingAtMinLoss()
    history = model.fit(x, y, batch_size=60, epochs=30, verbose=0, callbacks=[cb])
    assert cb.stopped_epoch == len(history.history["loss"]) - 1 < 29
    best = min(history.history["loss"])
    assert history.history["loss"][-1] > best
    for w, b in zip(model.get_weights(), cb.best_weights):
        np.testing.assert_array_equal(w, b)


def test_a_callback_setting_the_learning_rate():
    class CustomLearningRateScheduler(keras.callbacks.Callback):
        def __init__(self, schedule):
            super().__init__()
            self.schedule = schedule

        def on_epoch_begin(self, epoch, logs=None):
            lr = self.model.optimizer.learning_rate
            self.model.optimizer.learning_rate = self.schedule(epoch, lr)
    seen = []
    model = _model()
    x, y = _data()
    model.fit(x, y, epochs=4, verbose=0, callbacks=[
        CustomLearningRateScheduler(lambda epoch, lr: 0.01 if epoch == 2 else lr),
        keras.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: seen.append(
            float(model.optimizer.learning_rate)))])
    np.testing.assert_allclose(seen, [0.05, 0.05, 0.01, 0.01], rtol=1e-6)


def test_learning_rate_scheduler_logs_the_rate(capsys):
    model = _model(lr=0.1)
    x, y = _data()
    history = model.fit(x, y, epochs=4, verbose=0, callbacks=[
        keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr if epoch < 2 else lr * 0.5,
                                              verbose=1)])
    np.testing.assert_allclose(history.history["learning_rate"], [0.1, 0.1, 0.05, 0.025],
                               rtol=1e-6)
    assert "Epoch 3: LearningRateScheduler setting learning rate to 0.05" in capsys.readouterr().out
    old_form = keras.callbacks.LearningRateScheduler(lambda epoch: 0.2)  # one argument
    model.fit(x, y, epochs=1, verbose=0, callbacks=[old_form])
    assert float(model.optimizer.learning_rate) == pytest.approx(0.2)
    with pytest.raises(ValueError, match="should be a float"):
        model.fit(x, y, epochs=1, verbose=0, callbacks=[
            keras.callbacks.LearningRateScheduler(lambda epoch, lr: "fast")])


def test_reduce_lr_on_plateau_patience_cooldown_and_floor():
    class Scripted(keras.callbacks.Callback):
        """Overrides the monitored value: a plateau after the first epoch."""

        def on_epoch_end(self, epoch, logs=None):
            logs["val_loss"] = [1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5][epoch]
    x, y = _data()
    model = _model(lr=0.1)
    reduce = keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=2,
                                               cooldown=1, min_lr=0.02)
    history = model.fit(x, y, epochs=8, verbose=0, callbacks=[Scripted(), reduce])
    # the rate logged at each epoch's end is the one that epoch trained with; it halves at
    # the end of the second epoch without improvement (epochs 2-3), the wait restarting
    # after the cooldown epoch (4: then 5), and never goes below min_lr (7)
    np.testing.assert_allclose(history.history["learning_rate"],
                               [0.1, 0.1, 0.1, 0.1, 0.05, 0.05, 0.025, 0.025], rtol=1e-6)
    assert float(model.optimizer.learning_rate) == pytest.approx(0.02)
    with pytest.raises(ValueError, match="factor >= 1.0"):
        keras.callbacks.ReduceLROnPlateau(factor=2.0)


def test_model_checkpoint_best_only_and_reloaded_predictions(tmp_path, capsys):
    x, y = _data()
    model = _model()
    path = os.path.join(tmp_path, "ckpt", "model_{epoch}.keras")
    cbs = [keras.callbacks.ModelCheckpoint(path, save_best_only=True, monitor="val_loss",
                                           verbose=1),
           keras.callbacks.EarlyStopping(monitor="val_loss", patience=2,
                                         restore_best_weights=True)]
    history = model.fit(x, y, epochs=6, batch_size=20, validation_split=0.25, callbacks=cbs,
                        verbose=0)
    val = history.history["val_loss"]
    improved = [i for i in range(len(val)) if val[i] < min(val[:i], default=np.inf)]
    saved = sorted(os.listdir(os.path.join(tmp_path, "ckpt")))
    assert saved == sorted(f"model_{i + 1}.keras" for i in improved)
    assert "val_loss improved from inf to" in capsys.readouterr().out
    best = keras.models.load_model(os.path.join(tmp_path, "ckpt",
                                                f"model_{improved[-1] + 1}.keras"))
    # EarlyStopping restored the best epoch's weights: the checkpoint of that epoch
    np.testing.assert_allclose(best.predict(x, verbose=0), model.predict(x, verbose=0),
                               rtol=1e-6)
    weights = keras.callbacks.ModelCheckpoint(os.path.join(tmp_path, "w.weights.h5"),
                                              save_weights_only=True)
    model.fit(x, y, epochs=1, verbose=0, callbacks=[weights])
    other = _model(seed=1)
    other.load_weights(os.path.join(tmp_path, "w.weights.h5"))
    np.testing.assert_array_equal(other.predict(x, verbose=0), model.predict(x, verbose=0))
    with pytest.raises(ValueError, match=r"must end in `\.keras`"):
        keras.callbacks.ModelCheckpoint(os.path.join(tmp_path, "model.h5"))
    with pytest.raises(ValueError, match=r"must end in `\.weights\.h5`"):
        keras.callbacks.ModelCheckpoint(os.path.join(tmp_path, "w.keras"),
                                        save_weights_only=True)


def test_model_checkpoint_every_n_batches_and_formatted_names(tmp_path):
    x, y = _data()
    model = _model()
    pattern = os.path.join(tmp_path, "m_{epoch:02d}_{batch}.keras")
    model.fit(x, y, epochs=2, batch_size=20, verbose=0, callbacks=[
        keras.callbacks.ModelCheckpoint(pattern, save_freq=2)])
    # every second of the three batches of each epoch; the batch counted from 1 as in Keras
    assert sorted(os.listdir(tmp_path)) == ["m_01_2.keras", "m_02_1.keras", "m_02_3.keras"]


def test_csv_logger_and_terminate_on_nan(tmp_path, capsys):
    x, y = _data()
    model = _model()
    log = os.path.join(tmp_path, "log.csv")
    history = model.fit(x, y, epochs=3, verbose=0, validation_split=0.2,
                        callbacks=[keras.callbacks.CSVLogger(log)])
    with open(log, newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["epoch", "loss", "mean_absolute_error", "val_loss",
                             "val_mean_absolute_error"]
    assert [int(r["epoch"]) for r in rows] == [0, 1, 2]
    np.testing.assert_allclose([float(r["val_loss"]) for r in rows],
                               history.history["val_loss"], rtol=1e-6)
    model.fit(x, y, epochs=1, verbose=0, callbacks=[keras.callbacks.CSVLogger(log,
                                                                              append=True)])
    with open(log, newline="") as f:
        assert len(list(csv.DictReader(f))) == 4
    bad = x.copy()
    bad[25] = np.nan
    linear = keras.Sequential([keras.Input((4,)), layers.Dense(1)])
    linear.compile(optimizer="sgd", loss="mse")
    history = linear.fit(bad, y, epochs=3, batch_size=10, shuffle=False, verbose=0,
                         callbacks=[keras.callbacks.TerminateOnNaN()])
    assert "Batch 2: Invalid loss, terminating training" in capsys.readouterr().out
    assert len(history.history["loss"]) == 1 and np.isnan(history.history["loss"][0])
