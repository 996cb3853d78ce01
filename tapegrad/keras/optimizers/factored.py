"""Ftrl and Adafactor: Keras 3's update rules, operation for operation (so float32 results
match Keras's). Ftrl is elementwise, written as ``rules.py``'s are; Adafactor's step reads
whole-variable statistics (the RMS of the variable and of the update, and for a matrix its
factored second moments: a row and a column mean), so it is Keras's ``update_step``.

>>> import tapegrad as tf
>>> v = tf.Variable([[1.0, -2.0], [0.5, 3.0]])
>>> opt = tf.keras.optimizers.Adafactor(learning_rate=0.1)
>>> _ = opt.apply_gradients([(tf.constant([[0.5, -3.0], [1.0, 0.0]]), v)])
>>> [tuple(w.shape) for w in opt.variables][2:]  # the row and column means, the velocity
[(2,), (2,), (2, 2)]
"""
from tapegrad.keras import _tf as tf
from tapegrad.keras.layers.base import set_variable_path
from tapegrad.keras.optimizers.base import Optimizer


class Ftrl(Optimizer):
    """Follow The Regularized Leader (McMahan et al.), with L1, L2 and L2-shrinkage
    regularisation: ``accumulator`` sums squared gradients (from
    ``initial_accumulator_value``), ``linear`` the shifted gradients."""

    _elementwise_rule = True
    _slots = ("accumulator", "linear")

    def __init__(self, learning_rate=0.001, learning_rate_power=-0.5,
                 initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, l2_shrinkage_regularization_strength=0.0,
                 beta=0.0, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        for name, value in (("initial_accumulator_value", initial_accumulator_value),
                            ("l1_regularization_strength", l1_regularization_strength),
                            ("l2_regularization_strength", l2_regularization_strength),
                            ("l2_shrinkage_regularization_strength",
                             l2_shrinkage_regularization_strength)):
            if value < 0.0:
                raise ValueError(f"`{name}` needs to be positive or zero. Received: "
                                 f"{name}={value}.")
        if learning_rate_power > 0.0:
            raise ValueError("`learning_rate_power` needs to be negative or zero. Received: "
                             f"learning_rate_power={learning_rate_power}.")
        self.learning_rate_power = learning_rate_power
        self.initial_accumulator_value = initial_accumulator_value
        self.l1_regularization_strength = l1_regularization_strength
        self.l2_regularization_strength = l2_regularization_strength
        self.l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength
        self.beta = beta

    @property
    def _slot_initializer(self):
        from tapegrad.keras.initializers import Constant
        return (Constant(self.initial_accumulator_value), "zeros")

    def _constants(self, xp, lr, step, dtype):
        return lr, self.l2_regularization_strength + self.beta / (2.0 * lr)

    def _rule(self, xp, g, v, slots, c):
        lr, l2_reg = c
        power = -self.learning_rate_power
        accum, linear = slots
        grad = g + (2 * self.l2_shrinkage_regularization_strength) * v
        new_accum = accum + xp.square(g)
        new_power = xp.power(new_accum, power)
        linear = linear + (grad - ((new_power - xp.power(accum, power)) / lr) * v)
        quadratic = new_power / lr + 2 * l2_reg
        l1 = self.l1_regularization_strength
        clipped = xp.minimum(xp.maximum(linear, -l1), l1)
        return (clipped - linear) / quadratic, (new_accum, linear)


class Adafactor(Optimizer):
    """Adafactor (Shazeer & Stern): second moments factored into row and column means for
    variables of rank >= 2 (their last two axes), the step scaled by the variable's RMS
    (at least ``epsilon_2``) and clipped by the update's RMS (``clip_threshold``); with
    ``relative_step`` the learning rate is at most ``1 / sqrt(step)``."""

    def __init__(self, learning_rate=0.001, beta_2_decay=-0.8, epsilon_1=1e-30,
                 epsilon_2=1e-3, clip_threshold=1.0, relative_step=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_2_decay, self.epsilon_1, self.epsilon_2 = beta_2_decay, epsilon_1, epsilon_2
        self.clip_threshold, self.relative_step = clip_threshold, relative_step

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._r, self._c, self._v = [], [], []
        for var in var_list:  # Keras's order: each variable's r, c and velocity
            name = var.name.split(":")[0]
            shape = tuple(var.shape)
            if len(shape) < 2:  # Keras's int32 placeholders: a vector is not factored
                for factors in (self._r, self._c):
                    factors.append(self.add_variable((), dtype="int32", name=name))
                    set_variable_path(factors[-1], name)  # Keras makes them outside its scope
            else:
                self._r.append(self.add_variable(shape[:-1], dtype=var.dtype.name, name=name))
                self._c.append(self.add_variable(shape[:-2] + shape[-1:], dtype=var.dtype.name,
                                                 name=name))
            self._v.append(self.add_variable_from_reference(var, "velocity"))

    @staticmethod
    def _rms(x):
        return tf.sqrt(tf.reduce_mean(tf.square(x)))

    def update_step(self, gradient, variable, learning_rate):
        dtype = variable.dtype
        lr = tf.cast(learning_rate, dtype)
        slices = None
        if isinstance(gradient, tf.IndexedSlices):  # an embedding's: squared per slice
            n = tf.cast(gradient.dense_shape[0], "int32")
            values = tf.cast(gradient.values, dtype)
            slices = (values, gradient.indices, n)
            grad_square = tf.math.unsorted_segment_sum(tf.square(values), gradient.indices, n)
            gradient = tf.math.unsorted_segment_sum(values, gradient.indices, n)
        else:
            gradient = tf.cast(gradient, dtype)
            grad_square = tf.square(gradient)
        epsilon_2 = tf.cast(self.epsilon_2, dtype)
        one = tf.cast(1.0, dtype)
        local_step = tf.cast(self.iterations + 1, dtype)
        if not callable(self._learning_rate) and self.relative_step:
            lr = tf.minimum(lr, 1 / tf.sqrt(local_step))
        i = self._get_variable_index(variable)
        r, c, v = self._r[i], self._c[i], self._v[i]
        rho_t = tf.minimum(lr, 1 / tf.sqrt(local_step))
        alpha_t = tf.maximum(epsilon_2, self._rms(variable)) * rho_t
        grad_square = grad_square + self.epsilon_1
        beta_2_t = 1 - tf.pow(local_step, self.beta_2_decay)
        if len(variable.shape) >= 2:
            r.assign(beta_2_t * r + (1 - beta_2_t) * tf.reduce_mean(grad_square, axis=-1))
            c.assign(beta_2_t * c + (1 - beta_2_t) * tf.reduce_mean(grad_square, axis=-2))
            v.assign(tf.expand_dims(r / tf.reduce_mean(r, axis=-1, keepdims=True), -1)
                     * tf.expand_dims(c, -2))
        else:
            v.assign(beta_2_t * v + (1 - beta_2_t) * grad_square)
        u_t = gradient / tf.sqrt(v)
        if slices is None:
            rms_u = self._rms(u_t)
        else:  # Keras's update is per slice too: its root mean square sums squared slices
            values, indices, n = slices
            u_rows = values / tf.gather(tf.sqrt(v), indices)
            rms_u = tf.sqrt(tf.reduce_mean(
                tf.math.unsorted_segment_sum(tf.square(u_rows), indices, n)))
        u_t_hat = u_t / tf.maximum(one, rms_u / self.clip_threshold)
        variable.assign_sub(alpha_t * u_t_hat)
