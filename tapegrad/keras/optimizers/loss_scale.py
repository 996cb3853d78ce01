"""Keras 3's ``LossScaleOptimizer``: dynamic loss scaling for float16 training.

The loss is multiplied by ``dynamic_scale`` (``scale_loss``) so that small float16
gradients do not underflow; ``apply`` divides the gradients by it again. A step whose
gradients hold an inf or a NaN is skipped and halves the scale; after
``dynamic_growth_steps`` finite steps in a row the scale doubles. (Keras 3 has no
``get_scaled_loss`` / ``get_unscaled_gradients``: those were TF 2's tf.keras.)

>>> import tapegrad as tf
>>> from tapegrad import keras
>>> opt = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.1), initial_scale=8.0)
>>> v = tf.Variable([1.0])
>>> float(opt.scale_loss(tf.constant(2.0)))
16.0
>>> opt.apply([tf.constant([8.0])], [v])           # the gradient of the scaled loss
>>> round(float(v[0]), 6), float(opt.dynamic_scale)
(0.9, 8.0)
>>> opt.apply([tf.constant([float("inf")])], [v])  # skipped, and the scale halves
>>> round(float(v[0]), 6), float(opt.dynamic_scale)
(0.9, 4.0)
"""
import numpy as np

from tapegrad.control_flow.ops import cond

from tapegrad.keras import _tf as tf
from tapegrad.keras.layers.base import set_variable_path
from tapegrad.keras.optimizers.base import Optimizer

_BASE_DEFAULTS = {"weight_decay": None, "clipnorm": None, "global_clipnorm": None,
                  "clipvalue": None, "use_ema": False, "ema_momentum": 0.99,
                  "ema_overwrite_frequency": None, "loss_scale_factor": None,
                  "gradient_accumulation_steps": None}


class LossScaleOptimizer(Optimizer):
    """Wraps ``inner_optimizer`` with dynamic loss scaling (Keras 3's arguments and
    errors); ``learning_rate`` and ``iterations`` are the inner optimizer's."""

    def __init__(self, inner_optimizer, initial_scale=2.0 ** 15, dynamic_growth_steps=2000,
                 name=None, **kwargs):
        if not kwargs.pop("dynamic", True):
            raise ValueError("LossScaleOptimizer no longer supports `dynamic=False`. Instead, "
                             "simply set `loss_scale_factor` directly on the "
                             "`inner_optimizer`.")
        for arg, default in _BASE_DEFAULTS.items():
            if arg in kwargs:
                value = kwargs.pop(arg)
                if (default is None and value is not None) or value != default:
                    raise ValueError(f"LossScaleOptimizer does not support `{arg}`. "
                                     f"Instead, set `{arg}` on the `inner_optimizer`.")
        if kwargs:
            raise ValueError("LossScaleOptimizer does not support arguments: "
                             f"`{'`, `'.join(kwargs.keys())}`.")
        super().__init__(learning_rate=0.0, name=name)
        self._variables = [self._iterations]  # its own: the counter and the scale, once built
        self.inner_optimizer = inner_optimizer
        self.initial_scale = initial_scale
        self.dynamic_growth_steps = dynamic_growth_steps
        self.inner_optimizer.loss_scale_factor = None

    def build(self, var_list):
        if self.built:
            return
        self.step_counter = self._own(np.int64(0), "step_counter")
        self.dynamic_scale = self._own(np.float32(self.initial_scale), "dynamic_scale")
        self.inner_optimizer.build(var_list)
        self._trainable_variables = list(var_list)
        self._index = {id(v): i for i, v in enumerate(var_list)}
        self.built = True

    def _own(self, value, name):
        v = tf.Variable(value, trainable=False)
        v.name = name
        set_variable_path(v, f"{self.name}/{name}")
        self._variables.append(v)
        return v

    @property
    def variables(self):
        return list(self._variables) + self.inner_optimizer.variables

    @property
    def iterations(self):
        return self.inner_optimizer.iterations

    @property
    def learning_rate(self):
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        self.inner_optimizer.learning_rate = value

    lr = learning_rate

    def scale_loss(self, loss):
        """``loss`` times the current scale (``initial_scale`` before the first step)."""
        scale = self.dynamic_scale if self.built else self.initial_scale
        return tf.multiply(loss, tf.cast(scale, tf.convert_to_tensor(loss).dtype))

    def check_finite(self, grads):
        """A boolean tensor: whether every gradient is finite."""
        flags = [tf.reduce_all(tf.math.is_finite(g)) for g in grads if g is not None]
        return tf.reduce_all(tf.stack(flags)) if flags else tf.constant(True)

    def apply(self, grads, trainable_variables=None):
        if not self.built:
            self.build(trainable_variables)
        finite = self.check_finite(grads)
        if getattr(finite, "_symbolic", False):  # inside tf.function: both branches staged
            cond(finite, lambda: self._finite_step(grads, trainable_variables),
                    self._non_finite_step)
        elif bool(finite):
            self._finite_step(grads, trainable_variables)
        else:
            self._non_finite_step()

    def _finite_step(self, grads, trainable_variables):
        scale = self.dynamic_scale
        unscaled = [g if g is None else tf.divide(g, tf.cast(scale, g.dtype)) for g in grads]
        self.inner_optimizer.apply(unscaled, trainable_variables)
        grow = tf.equal(self.step_counter, self.dynamic_growth_steps - 1)
        self.step_counter.assign(tf.where(grow, tf.constant(np.int64(0)),
                                          self.step_counter + 1))
        self.dynamic_scale.assign(tf.where(grow, self.dynamic_scale * 2.0,
                                           tf.identity(self.dynamic_scale)))
        return tf.constant(True)

    def _non_finite_step(self):
        self.step_counter.assign(np.int64(0))
        self.dynamic_scale.assign(self.dynamic_scale * 0.5)
        return tf.constant(False)

    def finalize_variable_values(self, var_list):
        self.inner_optimizer.finalize_variable_values(var_list)

    def get_config(self):
        from tapegrad.keras.serialization import serialize_keras_object
        return {"name": self.name,
                "inner_optimizer": serialize_keras_object(self.inner_optimizer),
                "initial_scale": self.initial_scale,
                "dynamic_growth_steps": self.dynamic_growth_steps}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from tapegrad.keras.serialization import deserialize_keras_object
        config = dict(config)
        inner = deserialize_keras_object(config.pop("inner_optimizer"), custom_objects)
        return cls(inner, **config)
