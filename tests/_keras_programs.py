"""Layers shared by the tests of the Keras guides and examples (as the guides write them)."""
from tapegrad import keras
from tapegrad.keras import layers, ops


class Sampling(layers.Layer):
    """The VAE's reparameterisation: ``z_mean + exp(z_log_var / 2) * epsilon``, with
    ``epsilon`` from the layer's own ``SeedGenerator``."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.seed_generator = keras.random.SeedGenerator(1337)

    def call(self, inputs):
        z_mean, z_log_var = inputs
        batch, dim = ops.shape(z_mean)[0], ops.shape(z_mean)[1]
        epsilon = keras.random.normal(shape=(batch, dim), seed=self.seed_generator)
        return z_mean + ops.exp(0.5 * z_log_var) * epsilon


class CustomDense(layers.Layer):
    """The guides' layer with its weights made in ``build`` and a config of its own."""

    def __init__(self, units=32, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units),
                                 initializer="random_normal", trainable=True)
        self.b = self.add_weight(shape=(self.units,), initializer="random_normal",
                                 trainable=True)

    def call(self, inputs):
        return ops.matmul(inputs, self.w) + self.b

    def get_config(self):
        config = super().get_config()
        config.update({"units": self.units})
        return config
