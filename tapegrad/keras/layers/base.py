"""``keras.layers.Layer``: weights, sublayers, build-on-first-call and the ``training`` flag.

A layer's state is only its Variables (``add_weight``); everything else is configuration.
Attributes holding layers or variables (also inside lists and dicts) are tracked in
assignment order, as Keras does, so ``weights`` lists a layer's own weights (trainable,
then non-trainable) followed by its sublayers'.

>>> import numpy as np
>>> from tapegrad import keras
>>> class Scale(keras.layers.Layer):
...     def build(self, input_shape):
...         self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="w")
...     def call(self, x):
...         return x * self.w
>>> layer = Scale()
>>> layer(np.ones((2, 3))).shape, [w.name for w in layer.weights]
(TensorShape([2, 3]), ['w'])
"""
import inspect
import threading
import warnings
import weakref

import numpy as np

from tapegrad.keras import _tf as tf
from tapegrad.keras import backend, initializers, masking, mixed_precision
from tapegrad.keras.layers import tracking
from tapegrad.keras.layers.input_spec import InputSpec, assert_input_compatibility
from tapegrad.keras.layers.layer_serial import ConfigMethods
from tapegrad.keras.layers.layer_weights import WeightMethods
from tapegrad.train import checkpoint

# Keras's call context: the ``training`` value of the outermost call that set one, seen by
# every nested layer call that does not pass its own.
_CONTEXT = threading.local()
# The path (``dense/kernel``) of each weight, by id: tapegrad Variables have no room for
# it, and a WeakKeyDictionary would compare tensors with their elementwise ``==``.
_PATHS = {}
_SIGNATURES = {}
_WITH_LOSSES = weakref.WeakSet()  # layers whose add_loss losses are not cleared yet


def _call_facts(cls):
    facts = _SIGNATURES.get(cls)
    if facts is None:
        params = inspect.signature(cls.call).parameters
        facts = _SIGNATURES[cls] = ("training" in params, "mask" in params)
    return facts


# Keras 3's name scopes: the layers whose build (or first call) is running, outermost
# first. A weight's path is their names, then its layer's, then its own: a Sequential built
# from an Input makes 'sequential/dense/kernel', a subclassed model whose layers build in
# its first call 'my_model/dense/kernel', a functional model's layers (built on symbolic
# inputs, outside any model) 'dense/kernel'.
_SCOPES = []


class _Scope:
    """``layer``'s name scope for the duration of a ``with`` (one level per layer)."""

    __slots__ = ("layer", "entered")

    def __init__(self, layer):
        self.layer = layer

    def __enter__(self):
        self.entered = not _SCOPES or _SCOPES[-1] is not self.layer
        if self.entered:
            _SCOPES.append(self.layer)

    def __exit__(self, *exc):
        if self.entered:
            _SCOPES.pop()


def scope_path(layer, name):
    """The path Keras 3 gives a variable ``name`` that ``layer`` creates now."""
    names = [s.name for s in _SCOPES]
    if not _SCOPES or _SCOPES[-1] is not layer:
        names.append(layer.name)
    return "/".join(names + [name])


def variable_path(v):
    """Keras's ``variable.path`` (``'dense/kernel'``); the name for other variables."""
    entry = _PATHS.get(id(v))
    return entry[1] if entry is not None and entry[0]() is v else v.name


def set_variable_path(v, path):
    key = id(v)
    _PATHS[key] = (weakref.ref(v, lambda _, key=key: _PATHS.pop(key, None)), path)


def _keras_path(v):
    entry = _PATHS.get(id(v))
    if entry is None or entry[0]() is not v:
        raise AttributeError(f"'{type(v).__name__}' object has no attribute 'path'")
    return entry[1]


# Keras 3's weights have ``.path``; a plain tf.Variable has none (AttributeError, as in
# TensorFlow). The Variable class keeps no room for it, so the property reads _PATHS.
tf.Variable.path = property(_keras_path, doc="Keras's path of a weight: "
                                             "'sequential/dense/kernel'.")


class Layer(WeightMethods, ConfigMethods, tf.Module):
    """The base class of layers: override ``build(input_shape)`` to create weights with
    ``add_weight`` and ``call(inputs, training=None)`` to compute."""

    _makes_masks = False  # a layer whose output may get a mask with none coming in
    _masks_inside = False  # a model: its layers pass masks on themselves

    def __new__(cls, *args, **kwargs):
        obj = object.__new__(cls)
        # the constructor's arguments, for get_config (Keras 3's automatic config)
        object.__setattr__(obj, "_constructor_args", (args, kwargs))
        return obj

    def __init__(self, *, activity_regularizer=None, trainable=True, dtype=None,
                 autocast=True, name=None, **kwargs):
        object.__setattr__(self, "_layers", [])
        object.__setattr__(self, "_trainable_variables", [])
        object.__setattr__(self, "_non_trainable_variables", [])
        input_dim = kwargs.pop("input_dim", None)
        shape_arg = (input_dim,) if input_dim is not None else kwargs.pop("input_shape", None)
        batch_shape = kwargs.pop("batch_input_shape", None)
        if batch_shape is not None:
            shape_arg = tuple(batch_shape)[1:]
        if shape_arg is not None:
            warnings.warn("Do not pass an `input_shape`/`input_dim` argument to a layer. "
                          "When using Sequential models, prefer using an `Input(shape)` "
                          "object as the first layer in the model instead.", stacklevel=2)
        self._input_shape_arg = None if shape_arg is None else tuple(shape_arg)
        kwargs.pop("weights", None)
        if kwargs:
            raise ValueError(f"Unrecognized keyword arguments passed to "
                             f"{self.__class__.__name__}: {kwargs}")
        if not isinstance(trainable, bool):
            raise ValueError(f"Expected `trainable` to be a boolean. Received: "
                             f"trainable={trainable} (of type {type(trainable)})")
        super().__init__(name=name or backend.unique_name(backend.to_snake_case(
            type(self).__name__)))
        self._trainable = trainable
        self._set_dtype_policy(dtype)
        self.autocast = autocast
        self.built = False
        self.input_spec = None
        if activity_regularizer is not None:  # a name ('l2'), a config or a callable
            from tapegrad.keras import regularizers
            activity_regularizer = regularizers.get(activity_regularizer)
        self.activity_regularizer = activity_regularizer
        self._losses = []
        self._regularizers = []  # (variable, regularizer) pairs of add_weight
        self.supports_masking = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "build" in cls.__dict__:
            # Keras marks a layer built when its (overridden) build returns
            user_build = cls.__dict__["build"]

            def build(self, *args, **kw):
                shape = args[0] if args else kw.get("input_shape")
                with _Scope(self):  # weights made here (and by sublayers) are below it
                    user_build(self, *args, **kw)
                self.built = True
                object.__setattr__(self, "_build_input_shape", shape)
                checkpoint.restore_pending()  # a restore waiting for these weights
            build.__wrapped__ = user_build
            build.__doc__ = user_build.__doc__
            cls.build = build

    # -- attribute tracking --------------------------------------------------------------
    def __setattr__(self, name, value):
        if name in _PLAIN:
            object.__setattr__(self, name, value)
            return
        if "_layers" not in self.__dict__:
            raise RuntimeError(f"In layer '{self.__class__.__name__}', you forgot to call "
                               "`super().__init__()` as the first statement in the "
                               "`__init__()` method. Go add it!")
        value = tracking.track(self, value)
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        tracking.untrack(self, getattr(self, name))
        object.__delattr__(self, name)

    def _track_variable(self, v):
        own = self._trainable_variables if v.trainable else self._non_trainable_variables
        if not any(w is v for w in own):
            own.append(v)
        tracking.changed()

    # -- weights ------------------------------------------------------------------------
    def add_weight(self, shape=None, initializer=None, dtype=None, trainable=True,
                   autocast=True, regularizer=None, constraint=None, aggregation="none",
                   overwrite_with_gradient=False, name=None):
        """Create a weight variable of this layer (Keras 3's signature and defaults:
        ``glorot_uniform`` for floats, ``zeros`` otherwise)."""
        if isinstance(shape, str):
            raise ValueError("`name` must be passed as a keyword argument. Received: "
                             f"add_weight('{shape}', ...). Use: add_weight(shape=..., "
                             f"name='{shape}').")
        shape = () if shape is None else tuple(int(s) for s in shape)
        dtype = backend.standardize_dtype(getattr(dtype, "name", dtype)
                                          if dtype is not None else self._variable_dtype)
        if initializer is None:
            initializer = "glorot_uniform" if "float" in dtype else "zeros"
        init = initializers.get(initializer)
        value = init(shape, dtype=dtype) if not isinstance(init, np.ndarray) else init
        if constraint is not None:
            from tapegrad.keras import constraints
            constraint = constraints.get(constraint)
        v = tf.Variable(tf.cast(value, dtype), trainable=trainable, constraint=constraint)
        if not autocast:
            mixed_precision._NO_AUTOCAST.add(id(v))
            weakref.finalize(v, mixed_precision._NO_AUTOCAST.discard, id(v))
        v.name = name or "variable"  # Keras 3 names a weight without the ':0'
        set_variable_path(v, scope_path(self, v.name))
        if regularizer is not None:
            from tapegrad.keras import regularizers
            self._regularizers.append((v, regularizers.get(regularizer)))
        self._track_variable(v)
        return v

    add_variable = add_weight

    @property
    def losses(self):
        """Losses added with ``add_loss`` in the last call, and weight regularizers."""
        out = []
        for layer in self._flatten_layers():
            out.extend(layer._losses)
            out.extend(r(v) for v, r in layer._regularizers)
        return out

    def add_loss(self, loss):
        self._losses.append(loss)
        _WITH_LOSSES.add(self)

    # -- dtypes --------------------------------------------------------------------------
    def _set_dtype_policy(self, dtype):
        # a name, a DTypePolicy, a serialized one (Keras's get_config) or None: the global
        # policy; ``_dtype`` is the compute dtype, which inputs and constants are cast to
        policy = mixed_precision.get(dtype)
        self._policy = policy
        self._dtype = policy.compute_dtype
        self._variable_dtype = policy.variable_dtype
        self._np_dtype = np.dtype(self._dtype)
        self._mixed = policy.compute_dtype != policy.variable_dtype

    def _dtype_config(self):
        # the dtype's name, or for a mixed policy Keras's serialized DTypePolicy
        if not self._mixed:
            return self._dtype
        return {"module": "keras", "class_name": "DTypePolicy",
                "config": self._policy.get_config(), "registered_name": None}

    @property
    def dtype_policy(self):
        """The layer's ``DTypePolicy`` (keras.mixed_precision)."""
        return self._policy

    @dtype_policy.setter
    def dtype_policy(self, value):
        self._set_dtype_policy(value)

    @property
    def dtype(self):
        """The dtype of the layer's weights (Keras 3: the policy's ``variable_dtype``)."""
        return self._variable_dtype

    @property
    def variable_dtype(self):
        return self._variable_dtype

    @property
    def compute_dtype(self):
        """The dtype of the layer's computation and outputs."""
        return self._dtype

    # -- calling -------------------------------------------------------------------------
    def build(self, input_shape=None):
        self.built = True

    def call(self, *args, **kwargs):
        raise NotImplementedError(f"Layer {self.__class__.__name__} does not have a `call()` "
                                  "method implemented.")

    def _floating(self, x):
        """``x`` in the layer's dtype if it holds integers or bools: Keras's operations
        promote them with the float weights (int @ float32 kernel is float32, not NumPy's
        float64), and its normalization layers cast them."""
        return tf.cast(x, self._dtype) if x.dtype.kind in "iub" else x

    def _convert(self, x):
        # Keras casts floating inputs to the layer's compute dtype (``autocast``)
        if isinstance(x, tf.Tensor):
            if self.autocast and x.dtype.kind == "f" and x.dtype.name != self._dtype:
                return tf.cast(x, self._dtype)
            return x
        if isinstance(x, (np.ndarray, np.generic, float, int, list)) and not isinstance(x, bool):
            arr = np.asarray(x)
            if arr.dtype.kind == "f" or isinstance(x, float):
                return tf.constant(arr.astype(self._dtype, copy=False))
            if arr.dtype.kind in "iub":
                return tf.constant(arr)
        return x

    def __call__(self, *args, **kwargs):
        a0 = args[0] if args else None
        if not (len(args) == 1 and type(a0) is tf.Tensor and (
                a0.dtype is self._np_dtype or a0.dtype.kind != "f")):
            # not the common case of one tensor of the right dtype
            from tapegrad.keras.layers import symbolic
            if symbolic.any_symbolic(args, kwargs):
                return symbolic.symbolic_call(self, args, kwargs)
            args = tuple(tf.nest.map_structure(self._convert, a) for a in args)
        first = args[0] if args else next(iter(kwargs.values()), None)
        if self.input_spec is not None:
            assert_input_compatibility(self.input_spec, first, self.name)
        if not self.built:
            # the first call runs in the layer's scope: a subclassed model's layers build
            # in it ('my_model/dense/kernel')
            with _Scope(self):
                self._maybe_build(first)
                self.built = True
                return self.__call__(*args, **kwargs)
        has_training, has_mask = _call_facts(type(self))
        masks = masking._TABLE or self._makes_masks  # else no mask anywhere: no work
        if masks:
            mask = masking.previous_mask(args, kwargs)
            if mask is not None and has_mask and kwargs.get("mask") is None:
                kwargs["mask"] = mask
        ctx = _CONTEXT.__dict__
        outer = ctx.get("training", _MISSING)
        training = kwargs.get("training")
        if training is None:
            # inherited from the outer call; else the call signature's default applies
            training = None if outer is _MISSING else outer
            if training is not None and has_training:
                kwargs["training"] = training
        if not has_training:
            kwargs.pop("training", None)
        ctx["training"] = training
        if outer is _MISSING:
            self._clear_losses()
        try:
            if not self._mixed or not self.autocast:  # the common case: no mixed precision
                out = self.call(*args, **kwargs)
            else:
                out = self._autocast_call(args, kwargs)
        finally:
            if outer is _MISSING:
                del ctx["training"]
            else:
                ctx["training"] = outer
        if self.activity_regularizer is not None:
            self._add_activity_losses(out)
        if masks:
            if self.supports_masking:
                masking.attach_output_masks(self, first, out, mask)
            elif mask is not None and not self._masks_inside:
                warnings.warn(f"Layer '{self.name}' (of type {type(self).__name__}) was passed "
                              "an input with a mask attached to it. However, this layer does "
                              "not support masking and will therefore destroy the mask "
                              "information. Downstream layers will not see the mask.",
                              stacklevel=2)
        return out

    def _autocast_call(self, args, kwargs):
        # Keras's autocast: inside a mixed layer's call its float weights are read in the
        # compute dtype. The attributes holding them hold the cast values during the call
        # (the cast is recorded: gradients reach the float32 variables in float32), so every
        # operation sees float16 operands and no other code pays for the rule. Weights made
        # with autocast=False, and non-trainable ones (statistics a call assigns), stay.
        dtype = self._dtype
        held = [(k, v) for k, v in self.__dict__.items()
                if type(v) is tf.Variable and v.trainable and v.dtype.kind == "f"
                and v.dtype.name != dtype and id(v) not in mixed_precision._NO_AUTOCAST]
        for k, v in held:
            object.__setattr__(self, k, tf.cast(v, dtype))
        try:
            return self.call(*args, **kwargs)
        finally:
            for k, v in held:
                object.__setattr__(self, k, v)

    def _add_activity_losses(self, out):
        # as Keras 3: one loss per output tensor, divided by its batch size (the first
        # axis), so the penalty's strength does not depend on the batch size
        for t in tf.nest.flatten(out):
            if not isinstance(t, tf.Tensor):
                continue
            loss = self.activity_regularizer(t)
            if t.ndim > 0:
                loss = tf.math.divide_no_nan(loss, tf.cast(tf.shape(t)[0], loss.dtype))
            self.add_loss(loss)

    def compute_mask(self, inputs, previous_mask=None):
        """The mask of this layer's output: the input's, for a layer that supports masking
        (``supports_masking``), unless the layer computes its own."""
        return previous_mask

    def _maybe_build(self, first):
        shapes = tf.nest.map_structure(lambda t: tuple(getattr(t, "shape", ())), first)
        if type(self).build is not Layer.build:
            self.build(shapes)
        else:
            self.built = True
            object.__setattr__(self, "_build_input_shape", shapes)
        if self.input_spec is not None:
            assert_input_compatibility(self.input_spec, first, self.name)

    def _clear_losses(self):
        if not _WITH_LOSSES:  # the common case: no layer anywhere holds added losses
            return
        for layer in self._flatten_layers():
            layer._losses.clear()
            _WITH_LOSSES.discard(layer)


_MISSING = object()
# bookkeeping attributes: never layers or variables, set without tracking
_PLAIN = frozenset({"_name", "_trainable", "_dtype", "_np_dtype", "_policy", "_variable_dtype",
                    "_mixed", "_input_shape_arg", "built", "autocast",
                    "input_spec", "activity_regularizer", "_losses", "_regularizers",
                    "supports_masking", "_makes_masks"})
__all__ = ["Layer", "InputSpec"]
