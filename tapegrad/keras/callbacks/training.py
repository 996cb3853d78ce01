"""The callbacks of the Keras guides beyond ``EarlyStopping``: ``ModelCheckpoint``,
``LearningRateScheduler``, ``ReduceLROnPlateau``, ``CSVLogger`` and ``TerminateOnNaN``
(``keras.callbacks``), with Keras 3's rules: the learning-rate callbacks log
``learning_rate`` each epoch, a ``mode`` of ``"auto"`` maximises a monitored name holding
``acc``.

>>> from tapegrad import keras
>>> keras.callbacks.ReduceLROnPlateau(factor=0.5).monitor
'val_loss'
"""
import csv
import os
import warnings

import numpy as np

from tapegrad.keras.callbacks.base import Callback


def _mode(mode, monitor, name):
    if mode not in ("auto", "min", "max"):
        warnings.warn(f"{name} mode {mode} is unknown, fallback to auto mode.", stacklevel=3)
        mode = "auto"
    if mode == "auto":
        mode = "max" if "acc" in monitor or monitor.startswith("fmeasure") else "min"
    return mode


def _learning_rate(model):
    return float(np.asarray(model.optimizer.learning_rate))


class ModelCheckpoint(Callback):
    """Save the model (a ``.keras`` file) or its weights (``.weights.h5`` names, as Keras
    requires) after each epoch or every ``save_freq`` batches; ``filepath`` may name the
    epoch and the logs (``"model_{epoch:02d}_{val_loss:.2f}.keras"``). With
    ``save_best_only`` it saves only when ``monitor`` improves."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False,
                 save_weights_only=False, mode="auto", save_freq="epoch",
                 initial_value_threshold=None):
        super().__init__()
        self.filepath, self.monitor, self.verbose = os.fspath(filepath), monitor, verbose
        self.save_best_only, self.save_weights_only = save_best_only, save_weights_only
        if save_freq != "epoch" and not isinstance(save_freq, int):
            raise ValueError(f"Unrecognized save_freq: {save_freq}. Expected save_freq are "
                             "'epoch' or integer values")
        self.save_freq = save_freq
        self.mode = _mode(mode, monitor, "ModelCheckpoint")
        self.best = initial_value_threshold if initial_value_threshold is not None else (
            -np.inf if self.mode == "max" else np.inf)
        if save_weights_only and not self.filepath.endswith(".weights.h5"):
            raise ValueError("When using `save_weights_only=True` in `ModelCheckpoint`, the "
                             "filepath provided must end in `.weights.h5` (Keras weights "
                             f"format). Received: filepath={self.filepath}")
        if not save_weights_only and not self.filepath.endswith(".keras"):
            raise ValueError("The filepath provided must end in `.keras` (Keras model "
                             f"format). Received: filepath={self.filepath}")
        self._batches, self._epoch = 0, 0

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if isinstance(self.save_freq, int):
            self._batches += 1
            if self._batches % self.save_freq == 0:
                self._save(self._epoch, batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        if self.save_freq == "epoch":
            self._save(epoch, None, logs)

    def _save(self, epoch, batch, logs):
        logs = logs or {}
        path = self.filepath.format(epoch=epoch + 1, batch=None if batch is None else
                                    batch + 1, **logs)
        if self.save_best_only:
            current = logs.get(self.monitor)
            if current is None:
                warnings.warn(f"Can save best model only with {self.monitor} available, "
                              "skipping.", stacklevel=3)
                return
            better = current > self.best if self.mode == "max" else current < self.best
            if not better:
                if self.verbose > 0:
                    print(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from "
                          f"{self.best:.5f}")
                return
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1}: {self.monitor} improved from {self.best:.5f} "
                      f"to {current:.5f}, saving model to {path}")
            self.best = current
        elif self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: saving model to {path}")
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        if self.save_weights_only:
            self.model.save_weights(path, overwrite=True)
        else:
            self.model.save(path, overwrite=True)


class LearningRateScheduler(Callback):
    """Set the optimizer's learning rate at each epoch's start to ``schedule(epoch, lr)``
    (or ``schedule(epoch)``, Keras's older form)."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule, self.verbose = schedule, verbose

    def on_epoch_begin(self, epoch, logs=None):
        if not hasattr(self.model.optimizer, "learning_rate"):
            raise ValueError('Optimizer must have a "learning_rate" attribute.')
        try:
            lr = self.schedule(epoch, _learning_rate(self.model))
        except TypeError:  # the one-argument form
            lr = self.schedule(epoch)
        if not isinstance(lr, (float, np.float32, np.float64)):
            raise ValueError("The output of the `schedule` function should be a float. "
                             f"Got: {lr}")
        self.model.optimizer.learning_rate = lr
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to "
                  f"{lr}.")

    def on_epoch_end(self, epoch, logs=None):
        logs["learning_rate"] = _learning_rate(self.model)


class ReduceLROnPlateau(Callback):
    """Multiply the learning rate by ``factor`` when ``monitor`` has not improved by
    ``min_delta`` for ``patience`` epochs (not below ``min_lr``; then wait ``cooldown``
    epochs)."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto",
                 min_delta=1e-4, cooldown=0, min_lr=0.0, **kwargs):
        super().__init__()
        if factor >= 1.0:
            raise ValueError("ReduceLROnPlateau does not support a factor >= 1.0. "
                             f"Received factor={factor}")
        self.monitor, self.factor, self.patience, self.verbose = monitor, factor, patience, \
            verbose
        self.min_delta, self.cooldown, self.min_lr = min_delta, cooldown, min_lr
        self.mode = _mode(mode, monitor, "Learning rate reduction")
        self._reset()

    def _reset(self):
        self.best = -np.inf if self.mode == "max" else np.inf
        self.wait = self.cooldown_counter = 0

    def _better(self, current):
        if self.mode == "max":
            return np.greater(current, self.best + self.min_delta)
        return np.less(current, self.best - self.min_delta)

    def on_train_begin(self, logs=None):
        self._reset()

    def on_epoch_end(self, epoch, logs=None):
        logs["learning_rate"] = _learning_rate(self.model)
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn("Learning rate reduction is conditioned on metric "
                          f"`{self.monitor}` which is not available. Available metrics "
                          f"are: {','.join(logs)}.", stacklevel=2)
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self._better(current):
            self.best, self.wait = current, 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                old = _learning_rate(self.model)
                if old > np.float32(self.min_lr):
                    new = max(old * self.factor, self.min_lr)
                    self.model.optimizer.learning_rate = new
                    if self.verbose > 0:
                        print(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning "
                              f"rate to {new}.")
                    self.cooldown_counter, self.wait = self.cooldown, 0


class CSVLogger(Callback):
    """Write each epoch's logs as a row of a CSV file (``epoch`` and the sorted names)."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename, self.sep, self.append = os.fspath(filename), separator, append
        self._file = self._writer = self._keys = None

    def on_train_begin(self, logs=None):
        exists = self.append and os.path.exists(self.filename) and os.path.getsize(
            self.filename) > 0
        self._file = open(self.filename, "a" if self.append else "w", newline="")
        self._header = not exists
        self._writer = None

    def on_epoch_end(self, epoch, logs=None):
        if self._writer is None:
            self._keys = sorted(logs)
            self._writer = csv.DictWriter(self._file, fieldnames=["epoch", *self._keys],
                                          delimiter=self.sep)
            if self._header:
                self._writer.writeheader()
        row = {"epoch": epoch, **{k: logs.get(k, "NA") for k in self._keys}}
        self._writer.writerow(row)
        self._file.flush()

    def on_train_end(self, logs=None):
        if self._file is not None:
            self._file.close()
            self._file = self._writer = None


class TerminateOnNaN(Callback):
    """Stop training at the first batch whose loss is NaN or infinite."""

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not np.isfinite(loss):
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True
