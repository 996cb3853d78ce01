"""``tf.keras.optimizers`` (also ``tf.optimizers``)."""
from tapegrad.keras.optimizers import schedules  # noqa: F401
from tapegrad.keras.optimizers.base import Optimizer  # noqa: F401
from tapegrad.keras.optimizers.rules import SGD, Adagrad, Adam, AdamW, Nadam, RMSprop  # noqa: F401
from tapegrad.keras.optimizers.more_rules import Adadelta, Adamax, Lamb, Lion  # noqa: F401
from tapegrad.keras.optimizers.factored import Adafactor, Ftrl  # noqa: F401
from tapegrad.keras.optimizers.loss_scale import LossScaleOptimizer  # noqa: F401

_BY_NAME = {"sgd": SGD, "adam": Adam, "adamw": AdamW, "rmsprop": RMSprop,
            "adagrad": Adagrad, "nadam": Nadam, "adamax": Adamax, "adadelta": Adadelta,
            "lion": Lion, "ftrl": Ftrl, "adafactor": Adafactor, "lamb": Lamb}


def get(identifier):
    """An optimizer from a name (``'adam'``, ``'sgd'``, ...) or an instance.

    >>> from tapegrad import keras
    >>> type(keras.optimizers.get("adam")).__name__
    'Adam'
    """
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()]()
    if isinstance(identifier, dict):
        cls = _BY_NAME.get(str(identifier.get("class_name", "")).lower())
        if cls is not None:
            return cls(**identifier.get("config", {}))
    raise ValueError(f"Could not interpret optimizer identifier: {identifier}")


