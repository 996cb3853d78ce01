"""The configuration and symbolic-graph side of ``keras.layers.Layer`` (a mixin of it,
keras/layers/base.py): output shapes and specs, ``get_config`` / ``from_config``, the build
config, and the ``input`` / ``output`` of its first symbolic call."""


class ConfigMethods:
    """How a layer describes itself, for saving, cloning and functional models."""

    def compute_output_shape(self, input_shape):
        from tapegrad.keras.layers import symbolic
        return symbolic.output_shape(self, input_shape)

    def compute_output_spec(self, *args, **kwargs):
        from tapegrad.keras.layers import symbolic
        return symbolic.symbolic_call(self, args, kwargs, record=False)

    # Keras's config leaves these constructor arguments out / lists these it does not
    # take (keras/layer_config.py)
    _config_omits = ()
    _config_extra = {}

    def get_config(self):
        """The layer's configuration: every constructor argument, defaults included, in
        Keras's form (``keras/layer_config.py``), with its name, ``trainable`` and dtype;
        ``from_config`` makes the same layer again. A class outside tapegrad.keras that
        writes its own ``get_config`` gets only the base keys here, as in Keras.

        >>> from tapegrad import keras
        >>> keras.layers.Dense(3).get_config()["kernel_initializer"]["class_name"]
        'GlorotUniform'
        """
        base = {"name": self.name, "trainable": self.trainable, "dtype": self._dtype_config()}
        cls = type(self)
        if cls.get_config is not ConfigMethods.get_config and not cls.__module__.startswith(
                "tapegrad.keras"):
            return base
        from tapegrad.keras import layer_config
        from tapegrad.keras.serialization import constructor_arguments
        given = {k: layer_config.value(k, v) for k, v in constructor_arguments(self).items()}
        return {**layer_config.defaults(cls), **given, **base}

    @classmethod
    def from_config(cls, config):
        # Keras lists arguments tapegrad does not take (inert ones: keras/layer_config.py)
        from tapegrad.keras.serialization import _known_arguments
        return cls(**_known_arguments(cls, config))

    def get_build_config(self):
        """``{"input_shape": ...}`` of the build, or None before it (Keras's build config)."""
        shape = self.__dict__.get("_build_input_shape")
        if not self.built or shape is None:
            return None
        return {"input_shape": shape}

    def build_from_config(self, config):
        """Build as ``get_build_config`` says (a layer without a ``build`` of its own is
        called once on a symbolic input of that shape)."""
        shape = config.get("input_shape") if config else None
        if shape is None or self.built:
            return
        from tapegrad.keras.layers import symbolic
        from tapegrad.keras.layers.base import Layer  # below this module
        shape = symbolic.saved_shape(shape)
        if type(self).build is not Layer.build:
            self.build(shape)
            return
        inputs = symbolic.symbolic_inputs(shape, self._dtype)
        symbolic.symbolic_call(self, (inputs,), {}, record=False)

    @property
    def path(self):
        return self.name

    def _first_node(self, what):
        nodes = self.__dict__.get("_inbound_nodes")
        if not nodes:
            raise ValueError(f"The layer {self.name} has never been called and thus has no "
                             f"defined {what}.")
        return nodes[0]

    @property
    def output(self):
        """The output of the layer's first call on symbolic tensors (a ``KerasTensor``)."""
        return self._first_node("output")[1]

    @property
    def input(self):
        """The input of the layer's first call on symbolic tensors."""
        node = self._first_node("input")[0]
        return node.args[0] if node.args else next(iter(node.kwargs.values()))

    @property
    def metrics(self):
        return []

    def __repr__(self):
        return f"<{self.__class__.__name__} name={self.name}, built={self.built}>"
