"""Learning-rate schedules: called with the optimizer's step (a tensor), they return the
learning rate, with Keras 3's formulas.

>>> import tapegrad as tf
>>> s = tf.keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
>>> round(float(s(10)), 6)
0.05
"""
import math

from tapegrad.keras import _tf as tf


class LearningRateSchedule:
    """Base class: ``__call__(step)`` returns the learning rate at ``step``."""

    def __call__(self, step):
        raise NotImplementedError(f"Learning rate schedule '{self.__class__.__name__}' must "
                                  "override `__call__(self, step)`.")

    def get_config(self):
        raise NotImplementedError

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _check_steps(decay_steps):
    if decay_steps <= 0:
        raise ValueError(f"Argument `decay_steps` must be > 0. Received: "
                         f"decay_steps={decay_steps}")


class ExponentialDecay(LearningRateSchedule):
    """initial * decay_rate ** (step / decay_steps) (floored if ``staircase``)."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False,
                 name="ExponentialDecay"):
        self.initial_learning_rate, self.decay_steps = initial_learning_rate, decay_steps
        self.decay_rate, self.staircase, self.name = decay_rate, staircase, name
        _check_steps(decay_steps)

    def __call__(self, step):
        lr = tf.convert_to_tensor(self.initial_learning_rate)
        p = tf.cast(step, lr.dtype) / tf.cast(self.decay_steps, lr.dtype)
        if self.staircase:
            p = tf.floor(p)
        return lr * tf.pow(tf.cast(self.decay_rate, lr.dtype), p)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "decay_rate": self.decay_rate,
                "staircase": self.staircase, "name": self.name}


class InverseTimeDecay(ExponentialDecay):
    """initial / (1 + decay_rate * step / decay_steps) (floored if ``staircase``)."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False,
                 name="InverseTimeDecay"):
        super().__init__(initial_learning_rate, decay_steps, decay_rate, staircase, name)

    def __call__(self, step):
        lr = tf.convert_to_tensor(self.initial_learning_rate)
        p = tf.cast(step, lr.dtype) / tf.cast(self.decay_steps, lr.dtype)
        if self.staircase:
            p = tf.floor(p)
        return lr / (1.0 + tf.cast(self.decay_rate, lr.dtype) * p)


class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[i]`` for ``boundaries[i-1] < step <= boundaries[i]``."""

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        if len(boundaries) != len(values) - 1:
            raise ValueError("The length of boundaries should be 1 less than the length of "
                             f"values. Received: boundaries={boundaries} of length "
                             f"{len(boundaries)}, and values={values} of length "
                             f"{len(values)}.")
        self.boundaries, self.values, self.name = list(boundaries), list(values), name

    def __call__(self, step):
        step = tf.convert_to_tensor(step)
        values = [tf.convert_to_tensor(v) for v in self.values]
        dtype = values[0].dtype
        bounds = [tf.cast(b, step.dtype) for b in self.boundaries]
        out = tf.cast(step <= bounds[0], dtype) * values[0]
        out = out + tf.cast(step > bounds[-1], dtype) * values[-1]
        for low, high, v in zip(bounds[:-1], bounds[1:], values[1:-1]):
            out = out + tf.cast(tf.logical_and(step > low, step <= high), dtype) * v
        return out

    def get_config(self):
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class CosineDecay(LearningRateSchedule):
    """Cosine decay from the initial rate (or ``warmup_target`` after a linear warmup) to
    ``alpha`` times it over ``decay_steps``."""

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name="CosineDecay",
                 warmup_target=None, warmup_steps=0):
        _check_steps(decay_steps)
        self.initial_learning_rate, self.decay_steps = initial_learning_rate, decay_steps
        self.alpha, self.name = alpha, name
        self.warmup_target, self.warmup_steps = warmup_target, warmup_steps

    def _decay(self, step, decay_steps, start):
        fraction = step / decay_steps
        cosine = 0.5 * (1.0 + tf.cos(tf.cast(math.pi, step.dtype) * fraction))
        return start * ((1 - self.alpha) * cosine + self.alpha)

    def __call__(self, step):
        lr = tf.convert_to_tensor(self.initial_learning_rate)
        dtype = lr.dtype
        decay_steps = tf.cast(self.decay_steps, dtype)
        step = tf.cast(step, dtype)
        if self.warmup_target is None:
            return self._decay(tf.minimum(step, decay_steps), decay_steps, lr)
        target = tf.cast(self.warmup_target, dtype)
        warmup = tf.cast(self.warmup_steps, dtype)
        step = tf.minimum(step, decay_steps + warmup)
        warm = (target - lr) * (step / warmup) + lr if self.warmup_steps else lr
        return tf.where(step < warmup, warm, self._decay(step - warmup, decay_steps, target))

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "alpha": self.alpha, "name": self.name,
                "warmup_target": self.warmup_target, "warmup_steps": self.warmup_steps}


class PolynomialDecay(LearningRateSchedule):
    """``(initial - end) * (1 - step / decay_steps) ** power + end``; the step stops at
    ``decay_steps``, or with ``cycle`` the horizon grows to the next multiple of it."""

    def __init__(self, initial_learning_rate, decay_steps, end_learning_rate=0.0001,
                 power=1.0, cycle=False, name="PolynomialDecay"):
        self.initial_learning_rate, self.decay_steps = initial_learning_rate, decay_steps
        self.end_learning_rate, self.power, self.cycle = end_learning_rate, power, cycle
        self.name = name
        if decay_steps <= 0:
            raise ValueError(f"Argument `decay_steps` must be > 0. Received: "
                             f"decay_steps={decay_steps}")

    def __call__(self, step):
        lr = tf.convert_to_tensor(self.initial_learning_rate)
        dtype = lr.dtype
        end, power = tf.cast(self.end_learning_rate, dtype), tf.cast(self.power, dtype)
        step = tf.cast(step, dtype)
        horizon = tf.cast(self.decay_steps, dtype)
        if self.cycle:
            multiplier = tf.where(tf.equal(step, 0), tf.ones_like(step),
                                  tf.math.ceil(step / self.decay_steps))
            horizon = horizon * multiplier
        else:
            step = tf.minimum(step, horizon)
        p = step / horizon
        return (lr - end) * tf.pow(1 - p, power) + end

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "end_learning_rate": self.end_learning_rate,
                "power": self.power, "cycle": self.cycle, "name": self.name}


class CosineDecayRestarts(LearningRateSchedule):
    """Cosine decay that restarts: period ``first_decay_steps``, each next period
    ``t_mul`` times longer and ``m_mul`` times lower, decaying to ``alpha * initial``."""

    def __init__(self, initial_learning_rate, first_decay_steps, t_mul=2.0, m_mul=1.0,
                 alpha=0.0, name="SGDRDecay"):
        self.initial_learning_rate, self.first_decay_steps = (initial_learning_rate,
                                                              first_decay_steps)
        self._t_mul, self._m_mul, self.alpha, self.name = t_mul, m_mul, alpha, name
        if first_decay_steps <= 0:
            raise ValueError("Argument `first_decay_steps` must be > 0. Received: "
                             f"first_decay_steps={first_decay_steps}")

    def __call__(self, step):
        lr = tf.convert_to_tensor(self.initial_learning_rate)
        dtype = lr.dtype
        first, alpha = tf.cast(self.first_decay_steps, dtype), tf.cast(self.alpha, dtype)
        t_mul, m_mul = tf.cast(self._t_mul, dtype), tf.cast(self._m_mul, dtype)
        fraction = tf.cast(step, dtype) / first
        if self._t_mul == 1.0:
            i_restart = tf.floor(fraction)
            fraction = fraction - i_restart
        else:  # periods grow geometrically: find the restart, then the fraction within it
            i_restart = tf.floor(tf.math.log(1.0 - fraction * (1.0 - t_mul)) /
                                 tf.math.log(t_mul))
            sum_r = (1.0 - tf.pow(t_mul, i_restart)) / (1.0 - t_mul)
            fraction = (fraction - sum_r) / tf.pow(t_mul, i_restart)
        m_fac = tf.pow(m_mul, i_restart)
        cosine = 0.5 * m_fac * (1.0 + tf.cos(tf.cast(math.pi, dtype) * fraction))
        return lr * ((1 - alpha) * cosine + alpha)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "first_decay_steps": self.first_decay_steps, "t_mul": self._t_mul,
                "m_mul": self._m_mul, "alpha": self.alpha, "name": self.name}
