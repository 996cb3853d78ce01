"""The callbacks' base class and list, ``History``, ``EarlyStopping``,
``LambdaCallback`` and the progress bar.

>>> from tapegrad import keras
>>> keras.callbacks.History().history
{}
"""
import sys
import time
import warnings

import numpy as np


class Callback:
    """Base class; ``self.model`` is set by ``fit``."""

    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_train_begin(self, logs=None): pass
    def on_train_end(self, logs=None): pass
    def on_epoch_begin(self, epoch, logs=None): pass
    def on_epoch_end(self, epoch, logs=None): pass
    def on_test_begin(self, logs=None): pass
    def on_test_end(self, logs=None): pass
    def on_test_batch_begin(self, batch, logs=None): pass
    def on_test_batch_end(self, batch, logs=None): pass
    def on_predict_begin(self, logs=None): pass
    def on_predict_end(self, logs=None): pass
    def on_predict_batch_begin(self, batch, logs=None): pass
    def on_predict_batch_end(self, batch, logs=None): pass
    # Keras's older names of the training batch hooks, which those call
    def on_batch_begin(self, batch, logs=None): pass
    def on_batch_end(self, batch, logs=None): pass

    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs=logs)


class CallbackList(Callback):
    """Calls every hook on each of its callbacks, in order."""

    def __init__(self, callbacks=None, model=None, **params):
        super().__init__()
        self.callbacks = list(callbacks or [])
        if model is not None:
            self.set_model(model)
        self.set_params(params)

    def set_model(self, model):
        self.model = model
        for c in self.callbacks:
            c.set_model(model)

    def set_params(self, params):
        self.params = params
        for c in self.callbacks:
            c.set_params(params)

    def __getattribute__(self, name):
        if name.startswith("on_"):
            callbacks = object.__getattribute__(self, "callbacks")

            indexed = "epoch" in name or "batch" in name  # (epoch or batch, logs)

            def hook(*args, logs=None):
                # Keras hands every callback one dict (never None): a callback may add
                # to it (the learning rate) for those after it, History last
                args = list(args)
                if len(args) > indexed:
                    logs = args.pop(indexed)
                logs = {} if logs is None else logs
                for c in callbacks:
                    getattr(c, name)(*args, logs)
            return hook
        return object.__getattribute__(self, name)


class History(Callback):
    """``history.history[name]`` is the list of each epoch's value; ``fit`` returns it."""

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)
        self.model.history = self


class EarlyStopping(Callback):
    """Stop training when ``monitor`` has not improved by ``min_delta`` for ``patience``
    epochs; optionally restore the best epoch's weights."""

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto",
                 baseline=None, restore_best_weights=False, start_from_epoch=0):
        super().__init__()
        self.monitor, self.patience, self.verbose = monitor, patience, verbose
        self.baseline, self.restore_best_weights = baseline, restore_best_weights
        self.start_from_epoch = start_from_epoch
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"EarlyStopping mode {mode} is unknown, fallback to auto mode.",
                          stacklevel=2)
            mode = "auto"
        if mode == "auto":
            name = monitor.removeprefix("val_")
            mode = "max" if name in ("acc", "accuracy", "auc") or name.endswith(
                "accuracy") else "min"
        self.mode = mode
        self.min_delta = abs(min_delta) * (1 if mode == "max" else -1)
        self.wait, self.stopped_epoch, self.best, self.best_weights = 0, 0, None, None
        self.best_epoch = 0

    def _is_improvement(self, value, reference):
        if reference is None:
            return True
        if self.mode == "max":
            return value - self.min_delta > reference
        return value - self.min_delta < reference

    def on_train_begin(self, logs=None):
        self.wait, self.stopped_epoch, self.best, self.best_weights = 0, 0, None, None
        self.best_epoch = 0

    def on_epoch_end(self, epoch, logs=None):
        current = (logs or {}).get(self.monitor)
        if current is None:
            warnings.warn(f"Early stopping conditioned on metric `{self.monitor}` which is "
                          f"not available. Available metrics are: {','.join(logs or {})}",
                          stacklevel=2)
            return
        if epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights, self.best_epoch = self.model.get_weights(), epoch
        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best, self.best_epoch = current, epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print("Restoring model weights from the end of the best epoch: "
                      f"{self.best_epoch + 1}.")
            self.model.set_weights(self.best_weights)


class LambdaCallback(Callback):
    """A callback from plain functions: ``LambdaCallback(on_epoch_end=lambda e, logs: ...)``."""

    def __init__(self, **hooks):
        super().__init__()
        for name, fn in hooks.items():
            if not name.startswith("on_"):
                raise ValueError(f"Unrecognized keyword argument for LambdaCallback: {name}")
            setattr(self, name, fn)


class ProgbarLogger(Callback):
    """The progress bar of ``fit(verbose=1)`` (one line per epoch with ``verbose=2``)."""

    def __init__(self, verbose=1, stream=None):
        super().__init__()
        self.verbose, self.stream = verbose, stream

    def _out(self):
        return self.stream or sys.stdout

    def on_epoch_begin(self, epoch, logs=None):
        self._start, self._seen = time.perf_counter(), 0
        if self.verbose:
            self._out().write(f"Epoch {epoch + 1}/{self.params.get('epochs', 1)}\n")

    def on_train_batch_end(self, batch, logs=None):
        self._seen = batch + 1
        if self.verbose == 1:
            self._line(logs, final=False)

    def on_epoch_end(self, epoch, logs=None):
        if self.verbose:
            self._line(logs, final=True)

    def _line(self, logs, final):
        steps = self.params.get("steps")
        elapsed = time.perf_counter() - self._start
        width = 20
        if steps:
            done = int(width * self._seen / steps)
            bar = f"{self._seen}/{steps} " + "\u2501" * done + " " * (width - done)
        else:
            bar = f"{self._seen}"
        per = elapsed / max(self._seen, 1)
        unit = f"{per * 1e3:.0f}ms/step" if per >= 1e-3 else f"{per * 1e6:.0f}us/step"
        items = " - ".join(f"{k}: {_fmt(v)}" for k, v in sorted((logs or {}).items()))
        text = f"{bar} {elapsed:.0f}s {unit}" + (f" - {items}" if items else "")
        self._out().write(("\r" if self.verbose == 1 else "") + text + ("\n" if final else ""))
        self._out().flush()


def _fmt(v):
    a = np.asarray(v)
    if a.ndim:  # a metric with several values (one per threshold)
        return "[" + " ".join(_fmt(x) for x in a.ravel()) + "]"
    v = float(a)
    return f"{v:.4f}" if abs(v) >= 1e-3 or v == 0 else f"{v:.4e}"
