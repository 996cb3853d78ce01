"""``compile``, ``fit``, ``evaluate``, ``predict`` and the overridable ``train_step``,
``test_step`` and ``predict_step``, as in Keras 3.

``fit`` takes NumPy arrays or tensors (sliced into batches, shuffled each epoch), or any
iterable of batches (``(x, y)``, ``(x, y, sample_weight)`` or ``x``), such as a
``tf.data.Dataset``. The steps run eagerly (``run_eagerly``); ``jit_compile=True`` runs
``train_step`` through ``tf.function``.
"""
import numpy as np

from tapegrad.keras import _tf as tf
from tapegrad.keras import callbacks as callbacks_module
from tapegrad.keras import losses as losses_module
from tapegrad.keras import metrics as metrics_module
from tapegrad.keras import optimizers as optimizers_module
from tapegrad.keras.models import data
from tapegrad.keras.models.compile_utils import _CompiledLoss, _CompiledMetrics


class Trainer:
    def __init__(self):
        self.optimizer = None
        self.compiled = False
        self.stop_training = False
        self.history = None
        self.loss = None
        self._loss_tracker = None
        self.compiled_loss = None
        self.compiled_metrics = None
        self._jit_step = None

    def compile(self, optimizer="rmsprop", loss=None, loss_weights=None, metrics=None,
                weighted_metrics=None, run_eagerly=False, steps_per_execution=1,
                jit_compile="auto", auto_scale_loss=True):
        """Set the optimizer, the loss and the metrics that ``fit`` and ``evaluate`` use."""
        self.optimizer = optimizers_module.get(optimizer)
        policy = getattr(self, "dtype_policy", None)
        if auto_scale_loss and getattr(policy, "name", None) == "mixed_float16" and not \
                isinstance(self.optimizer, optimizers_module.LossScaleOptimizer):
            # Keras: float16 gradients underflow without dynamic loss scaling
            self.optimizer = optimizers_module.LossScaleOptimizer(
                self.optimizer, name="loss_scale_optimizer")
        if isinstance(loss, str):
            losses_module.get(loss)  # unknown names fail now, as in Keras
        self.loss = loss
        names = self.output_names
        self.compiled_loss = _CompiledLoss(loss, loss_weights, names) if loss is not None \
            else None
        self.compiled_metrics = _CompiledMetrics(metrics, weighted_metrics, names)
        self._loss_tracker = metrics_module.Mean(name="loss")
        self.run_eagerly = run_eagerly
        self.jit_compile = jit_compile is True
        self._jit_step = None
        self.compiled = True
        self.stop_training = False
        self._compile_args = {"loss_weights": loss_weights, "metrics": metrics,
                              "weighted_metrics": weighted_metrics,
                              "run_eagerly": run_eagerly, "jit_compile": jit_compile}

    def get_compile_config(self):
        """What ``compile`` was given, as a config (None before ``compile``)."""
        if not self.compiled:
            return None
        from tapegrad.keras.serialization import serialize_keras_object, serialize_value
        a = self._compile_args
        return {"optimizer": serialize_keras_object(self.optimizer),
                "loss": serialize_value(self.loss),
                "loss_weights": serialize_value(a["loss_weights"]),
                "metrics": serialize_value(a["metrics"]),
                "weighted_metrics": serialize_value(a["weighted_metrics"]),
                "run_eagerly": a["run_eagerly"], "steps_per_execution": 1,
                "jit_compile": a["jit_compile"]}

    def compile_from_config(self, config, custom_objects=None):
        """``compile`` with the settings of ``get_compile_config``."""
        from tapegrad.keras.serialization import deserialize_keras_object
        args = {k: deserialize_keras_object(config.get(k), custom_objects)
                for k in ("optimizer", "loss", "loss_weights", "metrics", "weighted_metrics")}
        self.compile(**args, run_eagerly=config.get("run_eagerly", False),
                     jit_compile=config.get("jit_compile", "auto"))

    # -- the steps -----------------------------------------------------------------------
    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The compiled loss plus the model's added and regularisation losses."""
        extra = self.losses
        if self.compiled_loss is None:
            if not extra:
                raise ValueError("No loss to compute. Provide a `loss` argument in "
                                 "`compile()`.")
            return tf.add_n([tf.convert_to_tensor(v) for v in extra])
        return self.compiled_loss(y, y_pred, sample_weight, regularization_losses=extra,
                                  eager=self.run_eagerly)

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        self.compiled_metrics.update_state(y, y_pred, sample_weight)
        return self.get_metrics_result()

    def _metrics_result_or_logs(self, logs):
        # Keras: the metrics' results, unless a custom train_step returned other logs
        results = self.get_metrics_result()
        if isinstance(logs, dict) and set(_flat_logs(logs)) != set(results):
            return logs
        return results

    def get_metrics_result(self):
        """The metrics' results by name, the compiled metrics' container expanded."""
        return _flat_logs({m.name: m.result() for m in self.metrics})

    @property
    def metrics(self):
        """As in Keras 3: the loss tracker, each output's loss, and the compiled metrics as
        one container named ``compile_metrics`` (its ``result()`` is a dict by name)."""
        out = [self._loss_tracker] if self._loss_tracker is not None else []
        if self.compiled_loss is not None and self.compiled_loss.trackers:
            out.extend(self.compiled_loss.trackers)  # each output's loss
        if self.compiled_metrics is not None and self.compiled_metrics.given:
            out.append(self.compiled_metrics)
        return out

    @property
    def output_names(self):
        """The names of a functional model's output layers (None for other models)."""
        outputs = getattr(self, "_flat_outputs", None)
        if not outputs:
            return None
        return [kt._history[0].layer.name if kt._history else kt.name for kt in outputs]

    @property
    def metrics_names(self):
        return [m.name for m in self.metrics]

    def reset_metrics(self):
        for m in self.metrics:
            m.reset_state()

    def train_step(self, data):
        """One optimisation step on a batch; returns the metrics' results."""
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight)
            scaled = self.optimizer.scale_loss(loss)  # (the same loss without a scale)
        self._loss_tracker.update_state(loss, sample_weight=_batch_size(x))
        variables = self.trainable_variables
        grads = tape.gradient(scaled, variables)
        self.optimizer.apply_gradients(zip(grads, variables))
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def test_step(self, data):
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        y_pred = self(x, training=False)
        loss = self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight,
                                 training=False)
        self._loss_tracker.update_state(loss, sample_weight=_batch_size(x))
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def predict_step(self, data):
        x, _, _ = unpack_x_y_sample_weight(data)
        return self(x, training=False)

    def _train_function(self):
        if not self.jit_compile or self.run_eagerly:
            return self.train_step
        if self._jit_step is None:
            self._jit_step = tf.function(self.train_step)
        return self._jit_step

    def _require_compiled(self, what):
        if not self.compiled:
            raise ValueError(f"You must call `compile()` before using the model ({what}).")

    # -- the loops -----------------------------------------------------------------------
    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, class_weight=None,
            sample_weight=None, initial_epoch=0, steps_per_epoch=None,
            validation_steps=None, validation_batch_size=None, validation_freq=1):
        """Train for ``epochs`` epochs; returns a ``History``."""
        self._require_compiled("fit")
        verbose = 1 if verbose == "auto" else int(verbose)
        if validation_split and validation_data is None:
            (x, y, sample_weight), validation_data = data.split(x, y, sample_weight,
                                                                validation_split)
        train = data.batches(x, y, sample_weight, batch_size, shuffle, steps_per_epoch,
                             class_weight)
        history = callbacks_module.History()
        cbs = list(callbacks or [])
        if verbose:
            cbs.append(callbacks_module.ProgbarLogger(verbose))
        cbs.append(history)
        cb = callbacks_module.CallbackList(cbs, model=self, epochs=epochs, verbose=verbose,
                                           steps=train.steps)
        step_fn = self._train_function()
        self.stop_training = False
        cb.on_train_begin()
        logs = epoch_logs = {}
        for epoch in range(initial_epoch, epochs):
            self.reset_metrics()
            cb.on_epoch_begin(epoch)
            for step, batch in enumerate(train.epoch()):
                cb.on_train_batch_begin(step)
                logs = step_fn(batch)
                cb.on_train_batch_end(step, _floats(logs))
                if self.stop_training:
                    break
            epoch_logs = _floats(self._metrics_result_or_logs(logs))
            if validation_data is not None and (epoch + 1) % validation_freq == 0:
                vx, vy, vsw = data.unpack_validation(validation_data)
                val = self.evaluate(vx, vy, sample_weight=vsw,
                                    batch_size=validation_batch_size or batch_size,
                                    steps=validation_steps, verbose=0, return_dict=True,
                                    callbacks=cb)  # Keras: the test hooks run too
                epoch_logs.update({f"val_{k}": v for k, v in val.items()})
            cb.on_epoch_end(epoch, epoch_logs)
            if self.stop_training:
                break
        if hasattr(self.optimizer, "finalize_variable_values"):
            self.optimizer.finalize_variable_values(self.trainable_variables)
        cb.on_train_end(epoch_logs)
        return history

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None,
                 steps=None, callbacks=None, return_dict=False):
        """The loss and metrics over the data (a scalar if there is only the loss)."""
        self._require_compiled("evaluate")
        batches = data.batches(x, y, sample_weight, batch_size, False, steps)
        cb = callbacks if isinstance(callbacks, callbacks_module.CallbackList) else \
            callbacks_module.CallbackList(callbacks, model=self, steps=batches.steps)
        self.reset_metrics()
        cb.on_test_begin()
        for step, batch in enumerate(batches.epoch()):
            cb.on_test_batch_begin(step)
            step_logs = self.test_step(batch)
            cb.on_test_batch_end(step, _floats(step_logs) if cb.callbacks else None)
        logs = _floats(self.get_metrics_result())
        cb.on_test_end(logs)
        if return_dict:
            return logs
        values = [logs[n] for n in logs]
        return values[0] if len(values) == 1 else values

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """The model's outputs over the data, batch by batch, as NumPy arrays."""
        batches = data.batches(x, None, None, batch_size, False, steps)
        cb = callbacks_module.CallbackList(callbacks, model=self, steps=batches.steps)
        cb.on_predict_begin()
        outs = []
        for step, b in enumerate(batches.epoch()):
            cb.on_predict_batch_begin(step)
            outs.append(tf.nest.map_structure(lambda t: np.asarray(t), self.predict_step(b)))
            cb.on_predict_batch_end(step, {"outputs": outs[-1]})
        cb.on_predict_end()
        if not outs:
            raise ValueError("Unexpected result of `predict_function` (Empty batch_outputs). "
                             "Please use `Model.compile(..., run_eagerly=True)`, or "
                             "`tf.config.run_functions_eagerly(True)` for more information "
                             "of where went wrong, or file a issue/bug to `tf.keras`.")
        flat = [tf.nest.flatten(o) for o in outs]
        joined = [np.concatenate(parts) for parts in zip(*flat)]
        return tf.nest.pack_sequence_as(outs[0], joined)

    def train_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        self._require_compiled("train_on_batch")
        self.reset_metrics()
        logs = _floats(self._train_function()((x, y, sample_weight)))
        return logs if return_dict else (list(logs.values()) if len(logs) > 1 else
                                         next(iter(logs.values())))

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        self.reset_metrics()
        logs = _floats(self.test_step((x, y, sample_weight)))
        return logs if return_dict else (list(logs.values()) if len(logs) > 1 else
                                         next(iter(logs.values())))

    def predict_on_batch(self, x):
        return np.asarray(self.predict_step((x,)))


def unpack_x_y_sample_weight(data):
    """``(x,)``, ``(x, y)`` or ``(x, y, sample_weight)`` as a triple; a lone x too."""
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if len(data) == 1:
        return data[0], None, None
    if len(data) == 2:
        return data[0], data[1], None
    if len(data) == 3:
        return data
    raise ValueError("Data is expected to be in format `x`, `(x,)`, `(x, y)`, or "
                     f"`(x, y, sample_weight)`, found: {data}")


def _batch_size(x):
    first = tf.nest.flatten(x)[0]
    return tf.cast(tf.shape(first)[0], "float32")


def _flat_logs(logs):
    """Logs with nested dicts (a metric container's result) merged in, as Keras does."""
    out = {}
    for k, v in logs.items():
        if isinstance(v, dict):
            out.update(_flat_logs(v))
        else:
            out[k] = v
    return out


def _floats(logs):
    # scalars become floats; a metric with several values (Recall at several thresholds)
    # stays a NumPy array, as in Keras
    out = {}
    for k, v in _flat_logs(logs or {}).items():
        a = np.asarray(v)
        out[k] = float(a) if a.ndim == 0 else a
    return out
