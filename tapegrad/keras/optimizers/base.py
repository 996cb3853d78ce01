"""The Keras 3 optimizer: ``apply_gradients``, clipping, weight decay, ``iterations``.

All state is Variables (``iterations``, the learning rate, one slot per variable and kind),
so a training step under ``tf.function`` compiles whole. Each optimizer writes its update
once, as a rule over an ops namespace ``xp``: the compiled and recorded path runs it on
tensors (``_TensorOps``: tapegrad operations and ``Variable.assign``); an eager step with
nothing recording runs the same rule on the variables' NumPy arrays (``_ArrayOps``), the
same float operations in the same order, without per-operation dispatch.
"""
import operator
import warnings
from itertools import repeat

import numpy as np

from tapegrad.keras import _tf as tf
from tapegrad.core.state import STATE
from tapegrad.keras import backend, initializers
from tapegrad.keras.optimizers import fused, sliced
from tapegrad.keras.layers.base import set_variable_path, variable_path
from tapegrad.train import checkpoint


class _TensorOps:
    """The rule's operations on tensors; writes are ``Variable.assign``."""
    sqrt, square, maximum = staticmethod(tf.sqrt), staticmethod(tf.square), staticmethod(
        tf.maximum)
    minimum = staticmethod(tf.minimum)
    abs, sign = staticmethod(tf.abs), staticmethod(tf.sign)

    @staticmethod
    def power(a, b):
        return tf.pow(a, b)

    @staticmethod
    def quotient_square(q, num, g, den):
        """``square(q)`` of ``q = -(num * g) / den`` (Adadelta's step; per slice in
        keras/optimizers/sliced.py)."""
        return tf.square(q)

    @staticmethod
    def total(x):
        return tf.reduce_sum(x)

    @staticmethod
    def where(c, a, b):
        return tf.where(c, a, b)

    @staticmethod
    def cast(x, dtype):
        return tf.cast(x, dtype)

    @staticmethod
    def read(v):
        return v.read_value()

    @staticmethod
    def write(v, value):
        v.assign(value)


_PLAIN_GRADS = frozenset((tf.Tensor, np.ndarray))  # gradients the array step takes as they are


class _ArrayOps:
    """The same operations on the variables' arrays, for an eager step nothing records."""
    sqrt, square, maximum, minimum, power = np.sqrt, np.square, np.maximum, np.minimum, np.power
    abs, sign = np.abs, np.sign

    @staticmethod
    def quotient_square(q, num, g, den):
        return np.square(q)

    @staticmethod
    def total(x):
        # the primitive's sum (BLAS row sums where it takes them), as the tensor path's
        return tf.reduce_sum(x)._value

    @staticmethod
    def where(c, a, b):
        return np.where(c, a, b).astype(np.result_type(a), copy=False) if np.ndim(a) else (
            a if c else b)

    @staticmethod
    def cast(x, dtype):
        if type(x) is np.ndarray and x.dtype == dtype:
            return x
        return np.asarray(x._value if isinstance(x, tf.Tensor) else x, dtype=dtype)

    @staticmethod
    def read(v):
        return v._value

    @staticmethod
    def write(v, value):
        # a new array (never in place), so earlier snapshots of the variable stay valid
        v._value = value if value.dtype == v._value.dtype else value.astype(v._value.dtype)


class Optimizer:
    """Base class. A subclass names its per-variable state in ``_slots`` and writes
    ``_rule(xp, gradient, variable, slots, c)``, returning the new variable and slot
    values, where ``c`` holds the step's scalars from ``_constants``; or overrides Keras's ``update_step(gradient, variable, learning_rate)``."""

    _slots = ()
    # Keras's order of ``variables``: groups of slot kinds, each group interleaved per model
    # variable (Adam: each variable's momentum and velocity, then every velocity_hat); None:
    # all kinds in one group, as Keras's ``add_optimizer_variables(vars, [names])``
    _slot_groups = None
    _slot_initializer = "zeros"
    # True: ``_rule`` computes each element from the same element of its operands alone,
    # so an eager step may run it on several variables at once (fused.py)
    _elementwise_rule = False

    def __new__(cls, *args, **kwargs):
        obj = object.__new__(cls)
        obj._constructor_args = (args, kwargs)  # for get_config
        return obj

    def __init__(self, learning_rate, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, **kwargs):
        if kwargs.pop("decay", None) is not None:
            warnings.warn("Argument `decay` is no longer supported and will be ignored.",
                          stacklevel=2)
        if kwargs:
            raise ValueError(f"Argument(s) not recognized: {kwargs}")
        if use_ema or gradient_accumulation_steps:
            raise NotImplementedError("use_ema and gradient_accumulation_steps are not "
                                      "supported by tapegrad.keras optimizers.")
        if sum(a is not None for a in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise ValueError("Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can "
                             f"be set. Received: clipnorm={clipnorm}, clipvalue={clipvalue}, "
                             f"global_clipnorm={global_clipnorm}")
        self.name = name or backend.unique_name(tf.module._snake(type(self).__name__))
        self.weight_decay, self.clipnorm = weight_decay, clipnorm
        self.clipvalue, self.global_clipnorm = clipvalue, global_clipnorm
        self.loss_scale_factor = loss_scale_factor
        self.use_ema, self.gradient_accumulation_steps = False, None
        self.built = False
        self._iterations = tf.Variable(np.int64(0), trainable=False)
        self._iterations.name = "iteration"
        set_variable_path(self._iterations, f"{self.name}/iteration")
        self._variables = [self._iterations]
        self._trainable_variables, self._index = [], {}
        self._exclude_ids, self._exclude_names = set(), None
        if isinstance(learning_rate, (int, float, np.floating)) and not isinstance(
                learning_rate, bool):
            lr = tf.Variable(np.asarray(learning_rate, backend.floatx()), trainable=False)
            lr.name = "learning_rate"
            set_variable_path(lr, f"{self.name}/learning_rate")
            self._variables.append(lr)
            self._learning_rate = lr
        elif callable(learning_rate):
            self._learning_rate = learning_rate
        else:
            raise ValueError("Argument `learning_rate` should be float, or an instance of "
                             "LearningRateSchedule, or a callable (that takes in the current "
                             "iteration value and returns the corresponding learning rate "
                             f"value). Received instead: learning_rate={learning_rate}")

    # -- state ---------------------------------------------------------------------------
    @property
    def iterations(self):
        return self._iterations

    @property
    def variables(self):
        return list(self._variables)

    @property
    def learning_rate(self):
        lr = self._learning_rate
        if isinstance(lr, tf.Variable):
            return lr
        from tapegrad.keras.optimizers.schedules import LearningRateSchedule
        return lr(self._iterations) if isinstance(lr, LearningRateSchedule) else lr()

    @learning_rate.setter
    def learning_rate(self, value):
        if not isinstance(self._learning_rate, tf.Variable):
            raise TypeError("This optimizer was created with a `LearningRateSchedule` object "
                            "as its `learning_rate` constructor argument, hence its learning "
                            "rate is not settable.")
        self._learning_rate.assign(np.asarray(value, self._learning_rate.dtype))

    lr = learning_rate

    def build(self, var_list):
        """Create the per-variable state (``_slots``) for ``var_list``."""
        if self.built:
            return
        self._trainable_variables = list(var_list)
        self._index = {id(v): i for i, v in enumerate(var_list)}
        inits = self._slot_initializer  # one for every slot, or one per slot (Ftrl)
        if not isinstance(inits, (list, tuple)):
            inits = [inits] * len(self._slots)
        # ``_slot_vars`` stays one list per kind (checkpoints name slots by that path);
        # ``variables`` gets them in Keras's order, group by group
        self._slot_vars = [None] * len(self._slots)
        self._slots_at = len(self._variables)  # where the slots begin in ``variables``
        for group in self._slot_groups or (self._slots,):
            ks = [self._slots.index(name) for name in group if name in self._slots]
            made = self.add_optimizer_variables(var_list, [self._slots[k] for k in ks],
                                                [inits[k] for k in ks])
            for k, vs in zip(ks, made):
                self._slot_vars[k] = vs
        # each variable's slots, in ``_slots`` order
        self._var_slots = {id(v): [s[i] for s in self._slot_vars]
                           for i, v in enumerate(var_list)}
        self.built = True
        checkpoint.restore_pending()  # a restore waiting for the slots

    def add_variable_from_reference(self, reference_variable, name=None, initializer="zeros"):
        init = initializers.get(initializer)
        v = tf.Variable(init(tuple(reference_variable.shape),
                             dtype=reference_variable.dtype.name), trainable=False)
        v.name = f"{variable_path(reference_variable).replace('/', '_')}_{name}"
        set_variable_path(v, f"{self.name}/{v.name}")
        self._variables.append(v)
        return v

    def add_variable(self, shape, initializer="zeros", dtype=None, name=None, **kwargs):
        init = initializers.get(initializer)
        v = tf.Variable(init(tuple(shape), dtype=dtype), trainable=False)
        v.name = name or "variable"
        set_variable_path(v, f"{self.name}/{v.name}")
        self._variables.append(v)
        return v

    def add_optimizer_variables(self, trainable_variables, name, initializer="zeros"):
        """One variable per model variable and name, made as Keras makes them: variable by
        variable, each one's kinds in turn (``a_m, a_v, b_m, b_v``); returns a list for one
        name, a tuple of lists (one per name) for several.

        >>> from tapegrad import keras
        >>> import tapegrad as tf
        >>> opt = keras.optimizers.SGD()
        >>> a, b = tf.Variable([1.0], name="a"), tf.Variable([2.0], name="b")
        >>> m, v = opt.add_optimizer_variables([a, b], ["m", "v"])
        >>> [x.name for x in opt.variables[2:]]
        ['a:0_m', 'a:0_v', 'b:0_m', 'b:0_v']
        """
        names = [name] if isinstance(name, str) else list(name)
        inits = list(initializer) if isinstance(initializer, (list, tuple)) else \
            [initializer] * len(names)
        if len(names) != len(inits):
            raise ValueError("The number of provided names must match the number of provided "
                             f"initializers.  Received name='{name}', "
                             f"initializer='{initializer}'")
        out = tuple([] for _ in names)
        for v in trainable_variables:
            for made, n, init in zip(out, names, inits):
                made.append(self.add_variable_from_reference(v, n, init))
        return out[0] if isinstance(name, str) else out

    def _legacy_variable_order(self):
        """``variables`` in the order tapegrad kept them before session 9 (every slot of one
        kind, kind after kind), to read optimizer state that older versions saved."""
        at = getattr(self, "_slots_at", None)
        if at is None:
            return list(self._variables)
        slots = [v for kind in self._slot_vars for v in kind]
        return self._variables[:at] + slots + self._variables[at + len(slots):]

    def _get_variable_index(self, variable):
        return self._index[id(variable)]

    def get_weights(self):
        return [v.numpy() for v in self._variables]

    def set_weights(self, weights):
        if not self.built:
            raise ValueError("You are calling `set_weights()` on an optimizer that has not "
                             "yet been built. Please call `optimizer.build(trainable_"
                             "variables)` to create the optimizer weights before calling "
                             "`set_weights()`.")
        for v, w in zip(self._variables, weights):
            if tuple(v.shape) != tuple(np.shape(w)):
                raise ValueError(f"Optimizer variable {v.name} has shape {tuple(v.shape)} not "
                                 f"compatible with provided weight shape {np.shape(w)}.")
            v.assign(np.asarray(w, v.dtype))

    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        if self.built:
            raise ValueError("`exclude_from_weight_decay()` can only be configured before the "
                             "optimizer is built.")
        self._exclude_ids = {id(v) for v in var_list or ()}
        self._exclude_names = list(var_names) if var_names else None

    def _use_weight_decay(self, v):
        if id(v) in self._exclude_ids:
            return False
        return not (self._exclude_names and any(n in v.name for n in self._exclude_names))

    # -- applying ------------------------------------------------------------------------
    def scale_loss(self, loss):
        """``loss`` times ``loss_scale_factor`` (unchanged without one), as Keras's training
        step scales it before taking gradients."""
        if self.loss_scale_factor is not None:
            return loss * self.loss_scale_factor
        return loss

    def apply_gradients(self, grads_and_vars):
        """Update each variable from its gradient; pairs with a None gradient are skipped
        with a warning, as Keras does. Returns ``iterations``."""
        pairs = list(grads_and_vars)
        if not pairs:
            return self._iterations
        grads, variables = zip(*pairs)
        self.apply(list(grads), list(variables))
        return self._iterations

    def apply(self, grads, trainable_variables=None):
        if len(grads) == 0:
            return
        if trainable_variables is None:
            if not self.built:
                raise ValueError("When passing `grads` without `variables`, the optimizer "
                                 "must already be built on a list of variables. Call "
                                 "`optimizer.build(trainable_variables)` first. ")
            trainable_variables = self._trainable_variables
        trainable_variables = list(trainable_variables)
        if not self.built:
            self.build(trainable_variables)
        index = self._index
        for v in () if all(map(index.__contains__, map(id, trainable_variables))) else \
                trainable_variables:  # (the loop only to name an unknown one)
            if id(v) not in index:
                raise ValueError(f"Unknown variable: {v}. This optimizer can only be called "
                                 "for the variables it was originally built with. When "
                                 "working with a new set of variables, you should recreate a "
                                 "new optimizer instance.")
        grads, trainable_variables = self._filter_empty_gradients(grads, trainable_variables)
        if not _PLAIN_GRADS.issuperset(map(type, grads)) and any(
                isinstance(g, tf.IndexedSlices) for g in grads):
            # an embedding's gradient: stepped per slice, as Keras's TensorFlow backend does
            # (keras/optimizers/sliced.py)
            grads, xp = sliced.step_ops(self, grads, _TensorOps,
                                         type(self).update_step is not Optimizer.update_step)
            fast = False
        else:
            if self.loss_scale_factor is not None:
                grads = [g / self.loss_scale_factor for g in grads]
            grads = self._clip_gradients(grads)
            fast = STATE.stack.idle and type(self).update_step is Optimizer.update_step and (
                _PLAIN_GRADS.issuperset(map(type, grads)) or all(
                    type(g) is tf.Tensor or isinstance(g, np.ndarray) for g in grads))
            xp = _ArrayOps if fast else _TensorOps
        if fast:
            grads = [g._value if type(g) is tf.Tensor else g for g in grads]
        self._apply(xp, grads, trainable_variables)
        # then the variables' constraints (a layer's kernel_constraint=), as Keras does
        for v in trainable_variables:
            if v.constraint is not None:
                v.assign(v.constraint(v))
        if fast:
            self._iterations._value = self._iterations._value + 1
        else:
            self._iterations.assign_add(1)

    def _apply(self, xp, grads, variables):
        lr_value = self.learning_rate
        step_value = self._iterations + 1 if xp is not _ArrayOps else self._iterations._value + 1
        if self.weight_decay is not None:
            for v in variables:
                if self._use_weight_decay(v):
                    lr = xp.cast(lr_value, v.dtype)
                    wd = xp.cast(self.weight_decay, v.dtype)
                    val = xp.read(v)
                    xp.write(v, val - val * wd * lr)
        if type(self).update_step is not Optimizer.update_step:
            for g, v in zip(grads, variables):
                self.update_step(g, v, lr_value)
            return
        self._begin(xp, step_value)
        constants = {}  # the step's scalars, once per dtype (they are the same per variable)
        read, write, cast = xp.read, xp.write, xp.cast

        def constants_of(dtype):
            c = constants.get(dtype)
            if c is None:
                c = constants[dtype] = self._constants(
                    xp, cast(lr_value, dtype), cast(step_value, dtype), dtype)
            return c

        if xp is _ArrayOps and self._elementwise_rule:
            # small variables: one rule on their concatenation (keras/optimizers/fused.py)
            grads, variables = fused.apply(self, xp, grads, variables, constants_of)
        var_slots = self._var_slots
        for g, v in zip(grads, variables):
            dtype = v.dtype
            c = constants_of(dtype)
            slots = var_slots[id(v)]
            new_v, new_slots = self._rule(xp, cast(g, dtype), read(v),
                                          [read(s) for s in slots], c)
            for s, value in zip(slots, new_slots):
                write(s, value)
            write(v, new_v)

    def _constants(self, xp, lr, step, dtype):
        """The scalars of one step that ``_rule`` uses (by default the learning rate)."""
        return lr

    def _begin(self, xp, step):
        """Once per step, before the per-variable rules (Nadam's running product)."""

    def update_step(self, gradient, variable, learning_rate):
        """Keras's per-variable hook; subclasses may override it and use ``assign``."""
        raise NotImplementedError

    def assign(self, variable, value):
        variable.assign(value)

    def assign_add(self, variable, value):
        variable.assign_add(value)

    def assign_sub(self, variable, value):
        variable.assign_sub(value)

    def _filter_empty_gradients(self, grads, variables):
        if grads and all(map(operator.is_not, grads, repeat(None))):  # the usual case
            return list(grads), list(variables)
        kept = [(g, v) for g, v in zip(grads, variables) if g is not None]
        if not kept:
            raise ValueError("No gradients provided for any variable.")
        if len(kept) < len(grads):
            missing = [variable_path(v) for g, v in zip(grads, variables) if g is None]
            warnings.warn(f"Gradients do not exist for variables {missing} when minimizing "
                          "the loss. If using `model.compile()`, did you forget to provide a "
                          "`loss` argument?", stacklevel=3)
        return [g for g, _ in kept], [v for _, v in kept]

    def _clip_gradients(self, grads):
        if self.clipnorm and self.clipnorm > 0:
            return [tf.clip_by_norm(g, self.clipnorm) for g in grads]
        if self.global_clipnorm and self.global_clipnorm > 0:
            return clip_by_global_norm(grads, self.global_clipnorm)
        if self.clipvalue and self.clipvalue > 0:
            return [tf.clip_by_value(g, -self.clipvalue, self.clipvalue) for g in grads]
        return grads

    def get_config(self):
        """Every constructor argument, defaults included, as Keras's config."""
        import inspect
        from tapegrad.keras.serialization import constructor_arguments
        lr = self._learning_rate
        defaults = {n: p.default for n, p in inspect.signature(type(self).__init__).parameters
                    .items() if p.default is not inspect.Parameter.empty}
        return {**defaults, **constructor_arguments(self), "name": self.name,
                "learning_rate": float(lr.numpy()) if isinstance(lr, tf.Variable) else lr,
                "weight_decay": self.weight_decay, "clipnorm": self.clipnorm,
                "global_clipnorm": self.global_clipnorm, "clipvalue": self.clipvalue,
                "use_ema": False, "ema_momentum": 0.99, "ema_overwrite_frequency": None,
                "loss_scale_factor": self.loss_scale_factor,
                "gradient_accumulation_steps": None}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def finalize_variable_values(self, var_list):
        """Keras calls this at the end of ``fit`` (for EMA); nothing to do here."""


def clip_by_global_norm(grads, clip_norm):
    """Keras's form: scale every gradient by clip_norm * min(1/norm, 1/clip_norm)."""
    norm = tf.sqrt(tf.add_n([tf.reduce_sum(tf.square(g)) for g in grads]))
    scale = clip_norm * tf.minimum(1.0 / norm, 1.0 / clip_norm)
    scale = scale + (norm - norm)  # NaN for an infinite or NaN norm, as in Keras
    return [g * scale for g in grads]
