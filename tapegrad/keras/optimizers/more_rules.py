"""Adamax, Adadelta, Lion and Lamb: Keras 3's update rules, operation for operation (so float32
results match Keras's), written as ``rules.py``'s are.

>>> import tapegrad as tf
>>> v = tf.Variable([1.0, -2.0])
>>> opt = tf.keras.optimizers.Lion(learning_rate=0.1)
>>> _ = opt.apply_gradients([(tf.constant([0.5, -3.0]), v)])
>>> [round(x, 6) for x in v.numpy().tolist()]
[0.9, -1.9]
"""
from tapegrad.keras.optimizers.base import Optimizer


class Adamax(Optimizer):
    """Adam with the infinity norm: ``u = max(beta_2 u, |g|)`` in place of the second
    moment, ``v -= lr m / ((1 - beta_1^t) (u + epsilon))``."""

    _elementwise_rule = True
    _slots = ("momentum", "norm")

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon

    def _constants(self, xp, lr, step, dtype):
        return lr, 1 - xp.power(xp.cast(self.beta_1, dtype), step)

    def _rule(self, xp, g, v, slots, c):
        lr, correction = c
        m = slots[0] + (g - slots[0]) * (1 - self.beta_1)
        u = xp.maximum(self.beta_2 * slots[1], xp.abs(g))
        return v - (lr * m) / (correction * (u + self.epsilon)), (m, u)


class Adadelta(Optimizer):
    """Adadelta (Zeiler): steps of ``rms(accumulated deltas) / rms(accumulated
    gradients)``, scaled by ``learning_rate`` (Keras's default 0.001)."""

    _elementwise_rule = True
    _slots = ("accumulated_grad", "accumulated_delta_var")

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.rho, self.epsilon = rho, epsilon

    def _rule(self, xp, g, v, slots, lr):
        rho = self.rho
        acc_g = rho * slots[0] + (1 - rho) * xp.square(g)
        num, den = xp.sqrt(slots[1] + self.epsilon), xp.sqrt(acc_g + self.epsilon)
        delta = -((num * g) / den)
        acc_d = rho * slots[1] + (1 - rho) * xp.quotient_square(delta, num, g, den)
        return v + lr * delta, (acc_g, acc_d)


class Lion(Optimizer):
    """Lion (Chen et al.): ``v -= lr sign(beta_1 m + (1 - beta_1) g)``, then
    ``m = beta_2 m + (1 - beta_2) g``."""

    _elementwise_rule = True
    _slots = ("momentum",)

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        if beta_1 <= 0 or beta_1 > 1:
            raise ValueError("Argument `beta_1` must be in the [0, 1] range. Otherwise, the "
                             f"optimizer degenerates to SignSGD. Received: beta_1={beta_1}.")
        self.beta_1, self.beta_2 = beta_1, beta_2

    def _rule(self, xp, g, v, slots, lr):
        beta_1, beta_2 = xp.cast(self.beta_1, v.dtype), xp.cast(self.beta_2, v.dtype)
        m = slots[0]
        new_v = v - lr * xp.sign(m * beta_1 + g * (1.0 - beta_1))
        return new_v, (m * beta_2 + g * (1.0 - beta_2),)


class Lamb(Optimizer):
    """Lamb (You et al.): Adam's bias-corrected step ``m_hat / (sqrt(v_hat) + epsilon)``,
    scaled per variable by ``||w|| / ||step||`` (1 where either norm is 0)."""

    _slots = ("momentum", "velocity")

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon

    def _constants(self, xp, lr, step, dtype):
        return (lr, xp.power(xp.cast(self.beta_1, dtype), step),
                xp.power(xp.cast(self.beta_2, dtype), step))

    def _rule(self, xp, g, v, slots, c):
        lr, b1_power, b2_power = c
        m = slots[0] + (g - slots[0]) * (1 - self.beta_1)
        vel = slots[1] + (xp.square(g) - slots[1]) * (1 - self.beta_2)
        step = (m / (1.0 - b1_power)) / (xp.sqrt(vel / (1.0 - b2_power)) + self.epsilon)
        w_norm, g_norm = xp.sqrt(xp.total(xp.square(v))), xp.sqrt(xp.total(xp.square(step)))
        ratio = xp.where(w_norm > 0, xp.where(g_norm > 0, w_norm / g_norm, 1.0), 1.0)
        return v - ratio * lr * step, (m, vel)
