"""The weight accessors of ``keras.layers.Layer`` (a mixin of it, keras/layers/base.py):
``trainable``, ``weights`` and its trainable / non-trainable parts in Keras's order,
``get_weights`` / ``set_weights`` and ``count_params``."""
import numpy as np

from tapegrad.keras.layers import tracking


class WeightMethods:
    """What a layer answers about its weights (the layer provides ``_trainable``,
    ``_trainable_variables`` and ``_layers``)."""

    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        value = bool(value)
        object.__setattr__(self, "_trainable", value)
        for v in self._trainable_variables:
            v.trainable = value
        for layer in self._layers:
            layer.trainable = value

    @property
    def weights(self):
        """Own weights (trainable, then non-trainable), then each sublayer's, each once."""
        return list(tracking.weights(self))

    variables = weights

    @property
    def trainable_weights(self):
        if not self._trainable:
            return []
        return [v for v in tracking.weights(self) if v.trainable]

    trainable_variables = trainable_weights

    @property
    def non_trainable_weights(self):
        if not self._trainable:
            return self.weights
        return [v for v in tracking.weights(self) if not v.trainable]

    non_trainable_variables = non_trainable_weights

    @property
    def submodules(self):
        return tuple(self._flatten_layers(include_self=False))

    def _flatten_layers(self, include_self=True):
        out = [self] if include_self else []
        for layer in self._layers:
            out.extend(layer._flatten_layers())
        return out

    def get_weights(self):
        """The values of ``weights`` as NumPy arrays."""
        return [v.numpy() for v in self.weights]

    def set_weights(self, weights):
        """Set ``weights`` from NumPy arrays (same count, same shapes)."""
        mine = self.weights
        if len(mine) != len(weights):
            raise ValueError(f"You called `set_weights(weights)` on layer '{self.name}' "
                             f"with a weight list of length {len(weights)}, but the layer "
                             f"was expecting {len(mine)} weights.")
        for v, w in zip(mine, weights):
            w = np.asarray(w)
            if tuple(v.shape) != tuple(w.shape):
                raise ValueError(f"Layer {self.name} weight shape {tuple(v.shape)} is not "
                                 f"compatible with provided weight shape {tuple(w.shape)}.")
        for v, w in zip(mine, weights):
            v.assign(np.asarray(w, dtype=v.dtype))

    def count_params(self):
        if not self.built:
            raise ValueError(f"You tried to call `count_params` on layer '{self.name}', "
                             "but the layer isn't built. You can build it manually via: "
                             f"`layer.build(input_shape)`.")
        return int(sum(np.prod(v.shape, dtype=np.int64) for v in self.weights))
