"""``keras.mixed_precision``: dtype policies, as in Keras 3.

A policy names a layer's two dtypes: ``variable_dtype`` (its weights) and ``compute_dtype``
(its inputs, its arithmetic and its outputs). ``'mixed_float16'`` keeps float32 weights and
computes in float16: inside the layer's call each float weight is read as float16 (the cast
is recorded, so its gradient reaches the float32 variable in float32). ``compile`` then
wraps the optimizer in a ``LossScaleOptimizer``, as Keras does.

``'mixed_bfloat16'`` needs bfloat16, which NumPy lacks: it raises a ValueError saying so
(a difference from Keras, in the README).

>>> import numpy as np
>>> from tapegrad import keras
>>> keras.mixed_precision.set_global_policy("mixed_float16")
>>> layer = keras.layers.Dense(2)
>>> y = layer(np.ones((1, 3), "float32"))
>>> layer.compute_dtype, layer.variable_dtype, y.dtype.name, layer.kernel.dtype.name
('float16', 'float32', 'float16', 'float32')
>>> keras.mixed_precision.set_global_policy("float32")
"""
from tapegrad.keras import _tf as tf
from tapegrad.keras import backend

_FLOATS = ("float16", "float32", "float64")


def _bfloat16_error(name):
    return ValueError(
        f"The dtype policy '{name}' needs bfloat16, which tapegrad does not have: NumPy, "
        "its only array library, has no bfloat16 dtype. Use 'mixed_float16' (float16 "
        "compute, float32 variables) instead.")


class DTypePolicy:
    """A dtype policy: ``'float32'`` (or any float dtype) or ``'mixed_float16'``.

    >>> from tapegrad import keras
    >>> p = keras.mixed_precision.DTypePolicy("mixed_float16")
    >>> p.name, p.compute_dtype, p.variable_dtype
    ('mixed_float16', 'float16', 'float32')
    """

    def __init__(self, name=None):
        if name is None:
            name = backend.floatx()
        if not isinstance(name, str):
            raise TypeError(f"'name' must be a string, such as 'mixed_float16'. Received: "
                            f"name={name} (of type {type(name)})")
        if name in ("mixed_bfloat16", "bfloat16"):
            raise _bfloat16_error(name)
        if name == "mixed_float16":
            compute, variable = "float16", "float32"
        else:
            try:
                dtype = backend.standardize_dtype(name)
            except (TypeError, ValueError):
                dtype = None
            if dtype is None or dtype != name or not (
                    dtype in _FLOATS or dtype.startswith(("int", "uint", "bool"))):
                raise ValueError(
                    f"Cannot convert '{name}' to a mixed precision DTypePolicy. Valid "
                    "policies include 'mixed_float16', 'mixed_bfloat16', and the name of "
                    "any float dtype such as 'float32'.")
            compute = variable = dtype
        self._name, self._compute_dtype, self._variable_dtype = name, compute, variable

    @property
    def name(self):
        return self._name

    @property
    def compute_dtype(self):
        return self._compute_dtype

    @property
    def variable_dtype(self):
        return self._variable_dtype

    @property
    def quantization_mode(self):
        return None

    def convert_input(self, x, autocast, dtype):
        """``x`` cast to ``dtype`` where it is a float tensor and ``autocast`` is on."""
        x = tf.convert_to_tensor(x)
        if autocast and x.dtype.kind == "f" and x.dtype.name != dtype:
            return tf.cast(x, dtype)
        return x

    def get_config(self):
        return {"name": self._name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __eq__(self, other):
        return type(other) is type(self) and other._name == self._name

    def __hash__(self):
        return hash(self._name)

    def __repr__(self):
        return f'<DTypePolicy "{self._name}">'


Policy = DTypePolicy
FloatDTypePolicy = DTypePolicy
_GLOBAL = [None]  # None: floatx's policy


def get(identifier):
    """A policy from a name, a ``DTypePolicy``, a serialized one (a dict) or None (the
    global policy)."""
    if identifier is None:
        return dtype_policy()
    if isinstance(identifier, DTypePolicy):
        return identifier
    if isinstance(identifier, dict):
        return DTypePolicy(identifier.get("config", identifier).get("name"))
    name = getattr(identifier, "name", identifier)
    if not isinstance(name, str):
        name = backend.standardize_dtype(name)
    return DTypePolicy(name)


def set_dtype_policy(policy):
    """Set the policy of layers made from now on that get no ``dtype``.

    >>> from tapegrad import keras
    >>> keras.mixed_precision.set_dtype_policy("mixed_float16")
    >>> keras.mixed_precision.dtype_policy().name
    'mixed_float16'
    >>> keras.mixed_precision.set_dtype_policy("float32")
    """
    if isinstance(policy, str):
        policy = DTypePolicy(policy)
    elif not isinstance(policy, DTypePolicy):
        raise ValueError("Invalid `policy` argument. Expected the string name of a policy "
                         "(such as 'mixed_float16') or a `DTypePolicy` instance. Received: "
                         f"policy={policy} (of type {type(policy)})")
    # the floatx policy is kept as "none set", so that it follows later set_floatx calls
    _GLOBAL[0] = None if policy.name == backend.floatx() else policy


def dtype_policy():
    """The global policy (``DTypePolicy(floatx())`` until one is set)."""
    return _GLOBAL[0] if _GLOBAL[0] is not None else DTypePolicy(backend.floatx())


set_global_policy = set_dtype_policy
global_policy = dtype_policy


_NO_AUTOCAST = set()  # ids of variables made with add_weight(autocast=False)


def __getattr__(name):
    # the optimizer module imports the layers, which import this one: loaded on first use
    if name == "LossScaleOptimizer":
        from tapegrad.keras.optimizers.loss_scale import LossScaleOptimizer
        return LossScaleOptimizer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["DTypePolicy", "Policy", "set_global_policy",
           "global_policy", "set_dtype_policy", "dtype_policy"]
