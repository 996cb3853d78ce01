"""Keras 3's object configs: ``serialize_keras_object`` / ``deserialize_keras_object`` and
``register_keras_serializable``, as ``model.save`` writes them in a ``.keras`` file's
``config.json``.

An object's config is ``{"module", "class_name", "config", "registered_name"}`` (plus
``build_config`` for a built layer), with Keras's module names (``keras.layers``,
``keras.initializers``, ...). A layer's ``get_config`` holds its constructor's arguments,
recorded when it was made (as Keras 3 does for layers without a ``get_config`` of their
own). Loading looks classes up only among tapegrad.keras's own, the registered ones and
``custom_objects``: it imports nothing a file names and never runs code from it (a saved
Python ``lambda`` is refused).

>>> from tapegrad import keras
>>> config = serialize_keras_object(keras.layers.Dense(3, activation="relu", name="d"))
>>> config["module"], config["class_name"], config["config"]["units"]
('keras.layers', 'Dense', 3)
>>> deserialize_keras_object(config).get_config()["activation"]
'relu'
"""
import inspect
import threading

import numpy as np

_REGISTERED = {}  # "package>name" -> class
_NAMES = {}  # class -> "package>name"
_PLAIN = (str, int, float, bool, type(None))
# the keyword arguments a layer's config leaves out: the shape of the model's input goes
# in the model's build_config, and initial weights (``weights=``) in the weights file
_DROPPED = frozenset({"input_shape", "input_dim", "batch_input_shape", "weights",
                      "input_length"})


def register_keras_serializable(package="Custom", name=None):
    """A class decorator: the class is found by ``load_model`` under
    ``'package>name'`` (its class name by default), as in Keras.

    >>> from tapegrad import keras
    >>> @keras.saving.register_keras_serializable(package="docs")
    ... class Scale(keras.layers.Layer):
    ...     def call(self, x):
    ...         return 2 * x
    >>> keras.saving.get_registered_name(Scale)
    'docs>Scale'
    """
    def decorator(cls):
        key = f"{package}>{name or cls.__name__}"
        if key in _REGISTERED and _REGISTERED[key] is not cls:
            raise ValueError(f"{key} has already been registered to {_REGISTERED[key]}")
        _REGISTERED[key] = cls
        _NAMES[cls] = key
        return cls
    return decorator


def get_registered_name(obj):
    """``'package>name'`` of a registered class (or of an instance's class); its name
    otherwise."""
    cls = obj if isinstance(obj, type) else type(obj)
    return _NAMES.get(cls, cls.__name__)


def get_registered_object(name, custom_objects=None, module_objects=None):
    """The class registered (or passed in ``custom_objects``, or in an enclosing
    ``custom_object_scope``) under ``name``, or None."""
    for table in (custom_objects, *reversed(_scopes()), _REGISTERED, module_objects):
        if table and name in table:
            return table[name]
    return None


def get_custom_objects():
    """The global dict of custom objects: what ``register_keras_serializable`` registers
    (under ``'package>name'``), and names a program adds itself."""
    return _REGISTERED


_LOCAL = threading.local()


def _scopes():
    stack = getattr(_LOCAL, "scopes", None)
    if stack is None:
        stack = _LOCAL.scopes = []
    return stack


class CustomObjectScope:
    """``with keras.saving.custom_object_scope({"MyLayer": MyLayer}):`` makes those names
    known to deserialization (``from_config``, ``load_model``) inside the block.

    >>> from tapegrad import keras
    >>> with keras.saving.custom_object_scope({"Answer": int}):
    ...     keras.saving.get_registered_object("Answer")
    <class 'int'>
    """

    def __init__(self, *custom_objects):
        self.custom_objects = {}
        for objects in custom_objects:
            self.custom_objects.update(objects or {})

    def __enter__(self):
        _scopes().append(self.custom_objects)
        return self

    def __exit__(self, *exc):
        _scopes().pop()


custom_object_scope = CustomObjectScope


def constructor_arguments(obj):
    """The arguments ``obj`` was constructed with (``__init__``'s names, ``**kwargs``
    spread), as recorded by ``record_arguments``."""
    args, kwargs = obj.__dict__.get("_constructor_args", ((), {}))
    try:
        sig = inspect.signature(type(obj).__init__)
        bound = sig.bind(obj, *args, **kwargs)
    except (TypeError, ValueError):
        return dict(kwargs)
    out = {}
    for name, value in list(bound.arguments.items())[1:]:
        kind = sig.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            out.update((k, v) for k, v in value.items() if k not in _DROPPED)
        elif kind is not inspect.Parameter.VAR_POSITIONAL and name != "weights":
            out[name] = value
    return out


def record_arguments(obj, args, kwargs):
    """Keep the arguments of ``obj``'s construction (called from ``__new__``)."""
    object.__setattr__(obj, "_constructor_args", (args, dict(kwargs)))


def _module(obj):
    from tapegrad.keras import constraints, initializers, losses, metrics, regularizers
    from tapegrad.keras.layers.base import Layer
    from tapegrad.keras.optimizers import Optimizer, schedules
    mod = type(obj).__module__ or ""
    if not mod.startswith("tapegrad.keras"):
        return mod
    for base, name in ((Layer, "keras.layers"), (Optimizer, "keras.optimizers"),
                       (schedules.LearningRateSchedule, "keras.optimizers.schedules"),
                       (initializers.Initializer, "keras.initializers"),
                       (regularizers.Regularizer, "keras.regularizers"),
                       (constraints.Constraint, "keras.constraints"),
                       (losses.Loss, "keras.losses"), (metrics.Metric, "keras.metrics")):
        if isinstance(obj, base):
            from tapegrad.keras.models import Model
            return "keras" if isinstance(obj, Model) else name
    return "keras"


def _serializable(obj):
    return hasattr(obj, "get_config") and not isinstance(obj, type)


def serialize_value(value):
    """A JSON-ready form of a config value: plain values as they are, tuples as lists,
    Keras objects as their configs, activation functions by name."""
    if isinstance(value, _PLAIN):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [serialize_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): serialize_value(v) for k, v in value.items()}
    if isinstance(value, np.dtype):
        return value.name
    if _serializable(value):
        return serialize_keras_object(value)
    if callable(value):
        from tapegrad.keras import activations, losses
        for namespace in (activations, losses):
            try:
                return namespace.serialize(value) if namespace is activations else (
                    _function_name(value, namespace))
            except ValueError:
                continue
        if value in _NAMES:
            return {"class_name": "function", "config": _NAMES[value],
                    "module": value.__module__, "registered_name": _NAMES[value]}
        if getattr(value, "__name__", "") == "<lambda>":
            raise ValueError("tapegrad.keras cannot save a Python lambda (a file that runs "
                             "code when loaded is never written): use a named function "
                             "registered with @keras.saving.register_keras_serializable, "
                             f"received {value!r}")
        return {"class_name": "function", "config": value.__name__,
                "module": value.__module__, "registered_name": None}
    raise TypeError(f"Cannot serialize object {value!r} of type {type(value)}. To be "
                    "serializable, a class must implement the `get_config()` method.")


def _function_name(fn, namespace):
    name = getattr(fn, "__name__", None)
    if name and getattr(namespace, name, None) is fn:
        return name
    raise ValueError(name)


def serialize_keras_object(obj):
    """Keras 3's config of ``obj`` (a layer, model, optimizer, initializer, ...)."""
    if obj is None or isinstance(obj, _PLAIN):
        return obj
    if not _serializable(obj):
        return serialize_value(obj)
    config = {"module": _module(obj), "class_name": type(obj).__name__,
              "config": serialize_value(obj.get_config()),
              "registered_name": _NAMES.get(type(obj))}
    from tapegrad.keras.layers.base import Layer
    if isinstance(obj, Layer):
        build = obj.get_build_config()
        if build is not None:
            config["build_config"] = serialize_value(build)
    return config


_MODULES = ("keras", "keras.layers", "keras.models", "keras.optimizers",
            "keras.optimizers.schedules", "keras.initializers", "keras.regularizers",
            "keras.constraints", "keras.losses", "keras.metrics", "keras.src")


def _builtin_class(module, class_name):
    from tapegrad import keras
    tables = [keras.layers, keras.models, keras.optimizers, keras.optimizers.schedules,
              keras.initializers, keras.regularizers, keras.constraints, keras.losses,
              keras.metrics]
    if module is not None and not str(module).startswith(_MODULES):
        return None
    for table in tables:
        cls = getattr(table, class_name, None)
        if isinstance(cls, type) and hasattr(cls, "get_config"):
            return cls
    return None


def deserialize_keras_object(config, custom_objects=None, safe_mode=True, **kwargs):
    """The object a config describes (``serialize_keras_object``'s inverse). Classes come
    from ``custom_objects``, the registered classes and tapegrad.keras."""
    if config is None or isinstance(config, _PLAIN):
        return config
    if isinstance(config, list):
        return [deserialize_keras_object(c, custom_objects, safe_mode) for c in config]
    if not isinstance(config, dict):
        raise TypeError(f"Could not parse config: {config!r}")
    if "class_name" not in config or "config" not in config:
        return {k: deserialize_keras_object(v, custom_objects, safe_mode)
                for k, v in config.items()}
    class_name, inner = config["class_name"], config["config"]
    if class_name == "__lambda__":
        raise ValueError("Requested the deserialization of a Python lambda. This carries a "
                         "potential risk of arbitrary code execution and thus it is "
                         "disallowed (tapegrad.keras never loads code from a file, whatever "
                         "safe_mode says).")
    if class_name in ("DTypePolicy", "Policy", "FloatDTypePolicy"):
        return inner.get("name", "float32") if isinstance(inner, dict) else inner
    if class_name == "__tensor__" or class_name == "__numpy__":
        return np.asarray(inner["value"], dtype=inner.get("dtype"))
    if class_name == "__tuple__":
        return tuple(deserialize_keras_object(v, custom_objects, safe_mode)
                     for v in inner["value"])
    registered = config.get("registered_name")
    if class_name == "function":
        fn = get_registered_object(registered or inner, custom_objects)
        if fn is None:
            from tapegrad.keras import activations, losses
            fn = getattr(activations, inner, None) or getattr(losses, inner, None)
        if fn is None:
            raise ValueError(f"Could not locate function '{inner}'. Make sure custom "
                             "classes and functions are decorated with "
                             "`@keras.saving.register_keras_serializable()`. Full object "
                             f"config: {config}")
        return fn
    cls = (get_registered_object(class_name, custom_objects)
           or (registered and get_registered_object(registered, custom_objects))
           or _builtin_class(config.get("module"), class_name))
    if cls is None:
        raise TypeError(f"Could not locate class '{class_name}'. Make sure custom classes "
                        "and functions are decorated with "
                        "`@keras.saving.register_keras_serializable()`. If they are "
                        "already decorated, make sure they are all imported so that the "
                        "decorator is run before trying to load them. Full object config: "
                        f"{config}")
    if not isinstance(inner, dict):
        raise TypeError(f"Could not parse config of {class_name}: {inner!r}")
    inner = {k: _nested(v, custom_objects, safe_mode) for k, v in inner.items()}
    if (cls.__module__ or "").startswith("tapegrad.keras"):
        inner = _known_arguments(cls, inner)
    if not hasattr(cls, "from_config"):
        obj = cls(**inner)
    elif _takes_custom_objects(cls):
        obj = cls.from_config(inner, custom_objects)
    else:
        obj = cls.from_config(inner)
    build = config.get("build_config")
    if build and hasattr(obj, "build_from_config") and not getattr(obj, "built", True):
        obj.build_from_config(build)
    return obj


# Keras arguments tapegrad's classes do not take, harmless at these values (a file written
# by Keras holds them all)
_INERT = {"renorm_momentum": lambda config: not config.get("renorm")}


def _known_arguments(cls, config):
    """``config`` without the arguments ``cls`` does not take whose values change nothing
    (None, False, or inert as ``_INERT`` says); any other unknown argument stays, so the
    constructor refuses it rather than a setting being dropped."""
    params = set()
    cell = getattr(cls, "_cell_class", None)  # LSTM, GRU, ConvLSTM2D: the cell's arguments
    for klass in cls.__mro__ + (cell.__mro__ if isinstance(cell, type) else ()):
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        try:
            params.update(inspect.signature(init).parameters)
        except (TypeError, ValueError):
            continue
    params.discard("kwargs")
    out = {}
    for key, value in config.items():
        if key not in params and key != "name" and (
                value is None or value is False or (key in _INERT and _INERT[key](config))):
            continue
        out[key] = value
    return out


def _nested(value, custom_objects, safe_mode):
    if isinstance(value, dict) and "class_name" in value and "config" in value:
        return deserialize_keras_object(value, custom_objects, safe_mode)
    return value


def _takes_custom_objects(cls):
    try:
        return "custom_objects" in inspect.signature(cls.from_config).parameters
    except (TypeError, ValueError):
        return False
