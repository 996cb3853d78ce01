"""Every constructor argument in a layer's ``get_config``, defaults included, as Keras 3
returns them: ``Dense(4).get_config()["activation"]`` is ``'linear'`` and its
``kernel_initializer`` the serialized ``GlorotUniform``, not a missing key.

``defaults(cls)`` reads the named arguments of each ``__init__`` along the class's MRO up
to ``Layer`` (while each forwards ``**kwargs``, it gets its base's arguments too), less
the ones Keras leaves out of its config (``Layer._config_omits``: tapegrad-only arguments,
or ones Keras lists only when given, as ``lora_rank``), plus the ones Keras lists that
tapegrad's constructor does not take (``Layer._config_extra``, each with Keras's inert
default: ``quantization_config=None``; ``from_config`` drops them again). A recurrent
layer that makes its cell from its own arguments (``_cell_class``) has the cell's too. Values are in
Keras's form (``value``): initializers, regularizers and constraints serialized, activations
by name. tests/test_keras_layer_configs.py compares key sets and values with Keras 3.15
for every layer class both have.
"""
import inspect

_BASE = ("name", "trainable", "dtype", "weights", "self")
# The same by class name, for classes whose modules change often (the recurrent layers)
_OMITS_BY_NAME = {"SimpleRNN": ("recurrent_activation", "seed", "implementation", "use_cudnn"),
                  "LSTM": ("implementation", "use_cudnn"), "GRU": ("implementation", "use_cudnn")}
_EXTRA_BY_NAME = {n: {"zero_output_for_mask": False} for n in ("SimpleRNN", "LSTM", "GRU")}


def _chain(cls):
    from tapegrad.keras.layers.base import Layer
    for klass in cls.__mro__:
        if klass is Layer or not (isinstance(klass, type) and issubclass(klass, Layer)):
            return
        if "__init__" in klass.__dict__:
            yield klass


def defaults(cls):
    """``{argument: default}`` of ``cls``'s config (see the module), in Keras's form."""
    cached = cls.__dict__.get("_config_defaults_cache")
    if cached is not None:
        return dict(cached)
    out, omit, extra = {}, set(), {}
    for klass in cls.__mro__:
        omit.update(klass.__dict__.get("_config_omits", ()))
        omit.update(_OMITS_BY_NAME.get(klass.__name__, ()) if klass.__module__.startswith(
            "tapegrad.keras") else ())
        for k, v in klass.__dict__.get("_config_extra", {}).items():
            extra.setdefault(k, v)
        if klass.__module__.startswith("tapegrad.keras"):
            for k, v in _EXTRA_BY_NAME.get(klass.__name__, {}).items():
                extra.setdefault(k, v)
    for klass in _chain(cls):
        try:
            params = inspect.signature(klass.__init__).parameters
        except (TypeError, ValueError):
            continue
        for name, p in params.items():
            if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) or name in _BASE or name in omit \
                    or p.default is inspect.Parameter.empty:
                continue
            out.setdefault(name, value(name, p.default))
        if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
            break  # an __init__ that forwards nothing hides its bases' arguments
    cell = getattr(cls, "_cell_class", None)
    if isinstance(cell, type):  # a recurrent layer made of its cell's arguments: those too
        for name, v in defaults(cell).items():
            if name not in omit:
                out.setdefault(name, v)
    for k, v in extra.items():
        out.setdefault(k, v)
    type.__setattr__(cls, "_config_defaults_cache", dict(out))
    return out


def value(name, v):
    """A config value in Keras's form: an initializer, regularizer or constraint (by name
    or object) as its serialized dict, an activation by its name.

    >>> value("kernel_initializer", "zeros")["class_name"], value("activation", None)
    ('Zeros', 'linear')
    """
    from tapegrad.keras import activations, backend, constraints, initializers, regularizers
    from tapegrad.keras.serialization import serialize_keras_object
    if name == "data_format" and v is None:  # Keras lists the format it resolved
        return backend.image_data_format()
    if name.endswith("_initializer") and v is not None:
        if isinstance(v, str) and v == "uniform":  # Keras's name for RandomUniform
            v = "random_uniform"
        try:
            return serialize_keras_object(initializers.get(v))
        except (ValueError, TypeError):
            return v
    if name.endswith("_regularizer") and v is not None:
        try:
            return serialize_keras_object(regularizers.get(v))
        except (ValueError, TypeError):
            return v
    if name.endswith("_constraint") and v is not None:
        try:
            return serialize_keras_object(constraints.get(v))
        except (ValueError, TypeError):
            return v
    if name in ("activation", "recurrent_activation") and (v is None or isinstance(v, str)):
        try:
            return activations.serialize(activations.get(v))
        except ValueError:
            return v
    return v
