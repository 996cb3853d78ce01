"""What a ``tf.Variable`` accepts beyond its value: a ``constraint`` (a function a Keras
optimizer applies after each update), and TensorFlow's distribution options
``aggregation`` and ``synchronization`` (kept and reported; one process has one replica,
so they change no value).

>>> import tapegrad as tf
>>> tf.Variable(1.0, aggregation=tf.VariableAggregation.MEAN).aggregation
<VariableAggregation.MEAN: 2>
"""
import enum


class VariableAggregation(enum.Enum):
    """How a distributed variable's updates from several replicas combine."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


class VariableSynchronization(enum.Enum):
    """When a distributed variable is synchronized between replicas."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


def check_options(constraint, aggregation, synchronization, trainable):
    """``(aggregation, synchronization, trainable)`` as TensorFlow settles them; a bad
    ``constraint`` or ``aggregation`` raises TensorFlow's ValueError."""
    if constraint is not None and not callable(constraint):
        raise ValueError(f"Argument `constraint` must be None or a callable. a callable. Got a "
                         f"{type(constraint)}:  {constraint}")
    if aggregation is None:
        aggregation = VariableAggregation.NONE
    elif not isinstance(aggregation, VariableAggregation):
        raise ValueError(f"Invalid variable aggregation mode: {aggregation} for variable: None")
    if synchronization is None:
        synchronization = VariableSynchronization.AUTO
    if trainable is None:  # an ON_READ variable (a metric's state) is not trained
        trainable = synchronization is not VariableSynchronization.ON_READ
    return aggregation, synchronization, trainable
