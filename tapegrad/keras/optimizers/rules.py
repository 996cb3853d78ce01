"""The optimizers, each an update rule with Keras 3's defaults and arithmetic (the same
operations in the same order, so float32 results match Keras's).

>>> import tapegrad as tf
>>> v = tf.Variable([1.0, 2.0])
>>> opt = tf.keras.optimizers.SGD(learning_rate=0.1)
>>> _ = opt.apply_gradients([(tf.constant([1.0, 1.0]), v)])
>>> v.numpy().tolist(), int(opt.iterations)
([0.8999999761581421, 1.899999976158142], 1)
"""
from tapegrad.keras.layers.base import set_variable_path
from tapegrad.keras.optimizers.base import Optimizer


class SGD(Optimizer):
    """Gradient descent, with optional (Nesterov) momentum."""

    _elementwise_rule = True

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        if not isinstance(momentum, float) or momentum < 0 or momentum > 1:
            raise ValueError("`momentum` must be a float between [0, 1].")
        self.momentum, self.nesterov = momentum, nesterov
        self._slots = ("momentum",) if momentum != 0 else ()

    def _rule(self, xp, g, v, slots, lr):
        if self.momentum == 0:
            return v - g * lr, ()
        m = slots[0] * self.momentum - g * lr
        if self.nesterov:
            return v + (m * self.momentum - g * lr), (m,)
        return v + m, (m,)


class Adam(Optimizer):
    """Adam (Kingma & Ba), optionally AMSGrad; Keras's epsilon-outside-the-root form."""

    _elementwise_rule = True

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_1, self.beta_2, self.epsilon, self.amsgrad = beta_1, beta_2, epsilon, amsgrad
        self._slots = ("momentum", "velocity") + (("velocity_hat",) if amsgrad else ())
        self._slot_groups = (("momentum", "velocity"), ("velocity_hat",))  # Keras's order

    def _constants(self, xp, lr, step, dtype):
        b1_power = xp.power(xp.cast(self.beta_1, dtype), step)
        b2_power = xp.power(xp.cast(self.beta_2, dtype), step)
        return lr * xp.sqrt(1 - b2_power) / (1 - b1_power)

    def _rule(self, xp, g, v, slots, alpha):
        m = slots[0] + (g - slots[0]) * (1 - self.beta_1)
        vel = slots[1] + (xp.square(g) - slots[1]) * (1 - self.beta_2)
        new = (m, vel)
        if self.amsgrad:
            vel = xp.maximum(slots[2], vel)
            new = (m, new[1], vel)
        return v - (m * alpha) / (xp.sqrt(vel) + self.epsilon), new


class AdamW(Adam):
    """Adam with decoupled weight decay (``weight_decay=0.004`` by default)."""

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-7, amsgrad=False, **kwargs):
        super().__init__(learning_rate=learning_rate, beta_1=beta_1, beta_2=beta_2,
                         epsilon=epsilon, amsgrad=amsgrad, weight_decay=weight_decay, **kwargs)
        if self.weight_decay is None:
            raise ValueError("Argument `weight_decay` must be a float. Received: "
                             "weight_decay=None")


class RMSprop(Optimizer):
    """RMSprop, optionally centred and with momentum."""

    _elementwise_rule = True

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7,
                 centered=False, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.rho, self.momentum, self.epsilon, self.centered = rho, momentum, epsilon, centered
        self._slots = ("velocity",) + (("momentum",) if momentum > 0 else ()) + (
            ("average_gradient",) if centered else ())
        self._slot_groups = tuple((k,) for k in self._slots)  # Keras: kind after kind

    def _rule(self, xp, g, v, slots, lr):
        rho = self.rho
        vel = rho * slots[0] + (1 - rho) * xp.square(g)
        new = [vel]
        if self.centered:
            avg = rho * slots[-1] + (1 - rho) * g
            denominator = vel - xp.square(avg) + self.epsilon
        else:
            denominator = vel + self.epsilon
        increment = (lr * g) / xp.sqrt(denominator)
        if self.momentum > 0:
            mom = self.momentum * slots[1] + increment
            new.append(mom)
            v = v - mom
        else:
            v = v - increment
        if self.centered:
            new.append(avg)
        return v, new


class Adagrad(Optimizer):
    """Adagrad; the accumulators start at ``initial_accumulator_value``."""

    _elementwise_rule = True

    _slots = ("accumulator",)

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7,
                 **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.initial_accumulator_value, self.epsilon = initial_accumulator_value, epsilon

    @property
    def _slot_initializer(self):
        from tapegrad.keras.initializers import Constant
        return Constant(self.initial_accumulator_value)

    def _rule(self, xp, g, v, slots, lr):
        acc = slots[0] + xp.square(g)
        return v - (lr * g) / xp.sqrt(acc + self.epsilon), (acc,)


class Nadam(Optimizer):
    """Adam with Nesterov momentum (Dozat), with Keras's momentum schedule (decay 0.96)."""

    _elementwise_rule = True

    _slots = ("momentum", "velocity")

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        dtype = var_list[0].dtype.name if var_list else "float32"
        # Keras makes it unnamed and outside the optimizer's scope: name and path "variable"
        self._u_product = self.add_variable((), initializer="ones", dtype=dtype)
        set_variable_path(self._u_product, "variable")

    def _begin(self, xp, step):
        u = xp.read(self._u_product)
        step = xp.cast(step, u.dtype)
        xp.write(self._u_product, u * self.beta_1 * (1.0 - 0.5 * xp.power(
            xp.cast(0.96, u.dtype), step)))

    def _constants(self, xp, lr, step, dtype):
        decay, beta_1 = xp.cast(0.96, dtype), xp.cast(self.beta_1, dtype)
        u_t = beta_1 * (1.0 - 0.5 * xp.power(decay, step))
        u_t_1 = beta_1 * (1.0 - 0.5 * xp.power(decay, step + 1))
        u_product_t = xp.cast(xp.read(self._u_product), dtype)
        b2_power = xp.power(xp.cast(self.beta_2, dtype), step)
        return lr, u_t, u_t_1, u_product_t, u_product_t * u_t_1, b2_power

    def _rule(self, xp, g, v, slots, c):
        lr, u_t, u_t_1, u_product_t, u_product_t_1, b2_power = c
        beta_1, beta_2 = xp.cast(self.beta_1, v.dtype), xp.cast(self.beta_2, v.dtype)
        m = slots[0] + (g - slots[0]) * (1 - beta_1)
        vel = slots[1] + (xp.square(g) - slots[1]) * (1 - beta_2)
        m_hat = (u_t_1 * m) / (1 - u_product_t_1) + ((1 - u_t) * g) / (1 - u_product_t)
        v_hat = vel / (1 - b2_power)
        return v - (m_hat * lr) / (xp.sqrt(v_hat) + self.epsilon), (m, vel)
