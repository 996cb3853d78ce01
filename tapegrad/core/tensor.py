"""Tensor, Variable and conversion.

A ``Tensor`` is an immutable wrapper around a NumPy array. It knows nothing about
differentiation: tapes and accumulators identify tensors by ``id`` and keep the objects they
care about alive themselves. Operators are attached by ``tapegrad.ops.overloads`` so that this
module has no dependency on the primitives.
"""
import itertools
import threading

import numpy as np

from tapegrad.core import dtypes as _dt
from tapegrad.core import hooks
from tapegrad.core.shape import TensorShape
from tapegrad.core.state import STATE
from tapegrad.core.variable_options import VariableAggregation, VariableSynchronization, check_options

_tnew = tuple.__new__


class Tensor:
    """An immutable n-dimensional array.

    >>> import tapegrad as tf
    >>> tf.constant([1.0, 2.0]) * 2
    tapegrad.Tensor([2. 4.], shape=(2,), dtype=float32)
    """

    __slots__ = ("_value", "__weakref__")
    __array_priority__ = 100  # ndarray <op> Tensor defers to Tensor's reflected operator
    _symbolic = False         # True for traced and batched tensors: no single value
    _level = 0                # the vmap level whose batch axis it holds (BatchedTensor)

    def __init__(self, value, dtype=None):
        self._value = np.asarray(value, dtype=_dt.as_dtype(dtype))

    @staticmethod
    def _wrap(value):
        t = _new(Tensor)
        t._value = value
        return t

    # -- array facts -------------------------------------------------------------------
    @property
    def shape(self):
        # a TensorShape (a tuple); internal hot paths read self._value.shape instead
        return _tnew(TensorShape, self._value.shape)

    @property
    def _raw_shape(self):
        """The shape as a plain tuple, for internal hot paths (``shape`` builds a
        ``TensorShape``, and its ``==`` is Python code)."""
        return self._value.shape

    @property
    def dtype(self):
        return self._value.dtype

    @property
    def ndim(self):
        return self._value.ndim

    @property
    def device(self):
        return "/job:localhost/replica:0/task:0/device:CPU:0"

    def numpy(self):
        """The value as a NumPy array (a copy, so the tensor stays immutable); a scalar
        string is its ``bytes``, as in TensorFlow."""
        v = self._value
        if v.dtype.kind == "O" and v.ndim == 0:
            return v[()]
        return np.array(v)

    def get_shape(self):
        return self.shape

    def set_shape(self, shape):
        """Check that ``shape`` (None for an unknown size) fits this tensor's shape, as
        TensorFlow's eager ``set_shape`` does; a tensor's shape is always fully known here
        (tf.function traces per shape), so there is nothing to refine.

        >>> import tapegrad as tf
        >>> tf.zeros((2, 3)).set_shape([None, 3])
        """
        given = None if shape is None else getattr(shape, "dims", shape)
        if given is None:  # an unknown rank fits any tensor
            return
        given = tuple(None if v is None else int(v)
                      for v in (getattr(d, "value", d) for d in given))
        mine = tuple(self.shape)
        if len(given) != len(mine) or any(g is not None and g != m
                                          for g, m in zip(given, mine)):
            raise ValueError(f"Tensor's shape {mine} is not compatible with supplied shape "
                             f"{given}.")

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor is undefined (it is a scalar).")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        for i in range(self.shape[0]):
            yield self[i]

    def __array__(self, dtype=None, copy=None):
        v = np.asarray(self._value)
        return v if dtype is None else v.astype(dtype, copy=False)

    def _scalar(self, kind):
        if self.shape and int(np.prod(self.shape)) != 1:
            raise ValueError(
                f"The truth value or {kind}() of a tensor of shape {self.shape} is ambiguous; "
                "only one-element tensors convert to Python scalars.")
        return np.asarray(self._value).reshape(()).item()

    def __bool__(self):
        return bool(self._scalar("bool"))

    def __float__(self):
        return float(self._scalar("float"))

    def __int__(self):
        return int(self._scalar("int"))

    def __index__(self):
        if self.dtype.kind not in "iu":
            raise TypeError(f"Only integer tensors can be used as an index, got {self.dtype}.")
        return int(self._scalar("int"))

    def __repr__(self):
        v = np.asarray(self._value)
        body = np.array2string(v, separator=" ") if v.ndim else repr(v.item())
        if v.ndim > 1:
            body = "\n" + body
        return f"tapegrad.Tensor({body}, shape={tuple(self.shape)}, dtype={_dt.name(self.dtype)})"

    __str__ = __repr__

    def __format__(self, spec):
        """As TensorFlow: a scalar formats as its Python number (``f"{loss:.4f}"``), any
        other tensor as its NumPy array (which rejects a non-empty spec).

        >>> import tapegrad as tf
        >>> f"{tf.constant(0.123456):.3f} {tf.constant([1, 2])}"
        '0.123 [1 2]'
        """
        if getattr(self, "_symbolic", False):
            return object.__format__(self, spec)
        v = np.asarray(self._value)
        return format(v.item() if v.ndim == 0 else v, spec)

    def __hash__(self):  # identity hash: `==` is elementwise, as in TensorFlow 2
        return id(self)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def raw_shape(x):
    """``x.shape`` as a plain tuple: a tensor's without building its ``TensorShape``
    (derivative rules get tensors or NumPy arrays)."""
    return x._raw_shape if isinstance(x, Tensor) else x.shape


_new = object.__new__
_var_ids = itertools.count()


class Variable(Tensor):
    """A mutable tensor: the state of a model. Reads are recorded by active tapes.

    >>> import tapegrad as tf
    >>> v = tf.Variable(1.0)
    >>> _ = v.assign_add(2.0)
    >>> float(v)
    3.0
    """

    __slots__ = ("trainable", "name", "_uid", "_snap", "_lock", "_options")

    def __init__(self, initial_value=None, trainable=True, name=None, dtype=None, shape=None,
                 *, constraint=None, aggregation=None, synchronization=None,
                 validate_shape=True, caching_device=None, import_scope=None,
                 variable_def=None, experimental_enable_variable_lifting=True):
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        # (constraint, aggregation, synchronization), or None for the defaults (the usual
        # case: no tuple per variable)
        self._options = None
        if constraint is not None or aggregation is not None or synchronization is not None \
                or trainable is None:
            aggregation, synchronization, trainable = check_options(
                constraint, aggregation, synchronization, trainable)
            self._options = (constraint, aggregation, synchronization)
        if callable(initial_value):
            initial_value = initial_value()
        t = convert_to_tensor(initial_value, dtype=dtype)
        owner = STATE.stack.variable_owner
        if owner is not None:  # a trace: TensorFlow's rules for variables in a tf.function
            t = owner.create_variable(t)
        if getattr(t, "_symbolic", False):
            raise ValueError("A Variable's initial value must be concrete, not a traced tensor.")
        self._value = t._value
        self.trainable = bool(trainable)
        self._uid = next(_var_ids)
        self.name = (name or "Variable") + ":0"
        self._snap = None  # (epoch, value array, snapshot tensor) of the last recorded read
        # Held around every read-modify-write of the value (assign_add, a compiled call's
        # updates), so that updates from several threads are never lost, as in TensorFlow.
        # Reentrant: a compiled call holding it may assign through the eager path.
        self._lock = threading.RLock()

    @property
    def constraint(self):
        """The function a Keras optimizer applies to this variable after each update (None:
        none); ``assign`` itself never applies it, as in TensorFlow."""
        opts = getattr(self, "_options", None)
        return None if opts is None else opts[0]

    @property
    def aggregation(self):
        opts = getattr(self, "_options", None)
        return VariableAggregation.NONE if opts is None else opts[1]

    @property
    def synchronization(self):
        opts = getattr(self, "_options", None)
        return VariableSynchronization.AUTO if opts is None else opts[2]

    def read_value(self):
        """A snapshot tensor of the current value; the interpreters on the stack see the
        read (``read_variable``, core/state.py): tapes record it, a trace makes it an input."""
        state = STATE
        st = state.stack
        if st.variable_owner is None:
            # Reading an unchanged variable again, with the same interpreters active, gives
            # the same snapshot: the tapes already link it to the variable, and the
            # gradient (a sum over reads) is the same. It saves work in hot loops.
            snap = self._snap  # one tuple, stored in one step: safe between threads
            v = self._value
            if snap is not None and snap[0] == state.epoch and snap[1] is v:
                return snap[2]
            # a scalar's snapshot holds a NumPy scalar: the recorded arithmetic on it skips
            # the ufunc machinery of 0-d arrays (the same values, ~0.8 us less an operation)
            val = _new(Tensor)  # Tensor._wrap, inlined
            val._value = v[()] if v.ndim == 0 and v.dtype.kind != "O" else v
            for interp in st.readers:  # recorders: they return ``val`` itself
                interp.read_variable(self, val)
            # stamped after the readers: a tape that began watching this variable just now
            # renewed the epoch, and it has seen this very snapshot
            self._snap = (state.epoch, v, val)
            return val
        val = Tensor._wrap(self._value)
        for interp in st.readers:  # the owner first (it gives the value), then recorders
            val = interp.read_variable(self, val)
        return val

    value = read_value

    def _coerce(self, value, op):
        owner = STATE.stack.variable_owner
        if owner is not None:
            # Inside a traced function every assignment (of a symbolic or a concrete value)
            # is deferred to call time; the tracer returns None so nothing happens now.
            return owner.assign_variable(self, value, op)
        v = np.asarray(value._value if isinstance(value, Tensor) else value)
        if v.shape != self._value.shape:
            raise ValueError(
                f"Cannot {op} a value of shape {v.shape} to variable '{self.name}' "
                f"of shape {self._value.shape}.")
        if v.dtype != self._value.dtype:
            if isinstance(value, Tensor):  # TensorFlow converts no tensor to another dtype
                raise ValueError(
                    f"Tensor conversion requested dtype {self._value.dtype.name} for Tensor "
                    f"with dtype {v.dtype.name}: {value!r}")
            if self._value.dtype.kind in "iub" and v.dtype.kind in "fc":
                raise TypeError(
                    f"Cannot {op} a {v.dtype} value to the {self._value.dtype} variable "
                    f"'{self.name}'.")
            v = v.astype(self._value.dtype)
        return v

    def assign(self, value, read_value=True):
        """Replace the value (same shape); returns the variable."""
        v = self._coerce(value, "assign")
        if v is not None:
            v = np.array(v)
            with self._lock:  # not in the middle of another thread's assign_add
                self._value = v
        return self

    def assign_add(self, delta, read_value=True):
        """Add ``delta`` (same shape) atomically: concurrent updates are never lost."""
        v = self._coerce(delta, "assign_add")
        if v is not None:
            with self._lock:
                self._value = self._value + v
        return self

    def assign_sub(self, delta, read_value=True):
        """Subtract ``delta`` (same shape) atomically; returns the variable."""
        if type(delta) is Tensor and STATE.stack.variable_owner is None:  # an optimizer step
            v, cur = delta._value, self._value
            if v.shape == cur.shape and v.dtype == cur.dtype:
                with self._lock:
                    self._value = self._value - v
                return self
        v = self._coerce(delta, "assign_sub")
        if v is not None:
            with self._lock:
                self._value = self._value - v
        return self

    def ref(self):
        return self

    def __repr__(self):
        v = np.asarray(self._value)
        body = np.array2string(v, separator=" ") if v.ndim else repr(v.item())
        return (f"<tapegrad.Variable '{self.name}' shape={tuple(self.shape)} "
                f"dtype={_dt.name(self.dtype)}, numpy={body}>")

    __str__ = __repr__


class update_locks:
    """Hold the update locks of ``variables`` while a compiled call reads, computes and
    writes them, so that concurrent calls (and eager ``assign_add``) never lose an update.

    Locks are taken in creation order, so two calls never wait on each other in a cycle.
    """

    __slots__ = ("_locks",)

    def __init__(self, variables):
        uniq = {v._uid: v for v in variables}
        self._locks = [uniq[k]._lock for k in sorted(uniq)]

    @property
    def locks(self):
        """The locks, in the order they are taken."""
        return tuple(self._locks)

    def __enter__(self):
        for lock in self._locks:
            lock.acquire()

    def __exit__(self, *exc):
        for lock in reversed(self._locks):
            lock.release()
        return False


def convert_to_tensor(value, dtype=None, dtype_hint=None, name=None):
    """Convert a Python number, list, NumPy array or Tensor to a Tensor.

    Python floats become float32 and Python ints int32, as in TensorFlow; NumPy arrays keep
    their dtype. Lists may hold scalar tensors (e.g. a shape built from ``tf.shape``).

    >>> import tapegrad as tf
    >>> tf.convert_to_tensor([1.0, 2.0]).dtype
    dtype('float32')
    """
    dtype = _dt.as_dtype(dtype)
    if isinstance(value, Tensor):
        if type(value) is Variable:
            # a snapshot, never the variable itself: a later assign must not change it
            value = value.read_value() if not STATE.stack.idle else Tensor._wrap(value._value)
        if dtype is not None and value.dtype != dtype:
            raise ValueError(
                f"Tensor conversion requested dtype {dtype.name} for Tensor with dtype "
                f"{value.dtype.name}: {value!r}")
        return value
    if isinstance(value, (list, tuple)) and _holds_tensor(value):
        if hooks.stack is None:
            raise TypeError("converting a list that holds tensors needs tapegrad.ops "
                            "(import tapegrad)")
        return hooks.stack([convert_to_tensor(v, dtype=dtype) for v in value])
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        arr = np.asarray(value)
        if arr.dtype.kind in "OUS":
            if dtype is None or dtype.kind == "O":
                return Tensor._wrap(_bytes_array(arr))
            if arr.dtype == object:
                arr = _object_array(arr)
        elif dtype is not None and dtype.kind == "O":
            _not_strings(value)
        if dtype is not None and arr.dtype != dtype:
            arr = _safe_cast(arr, dtype, value)
        return Tensor._wrap(arr)
    conv = getattr(type(value), "__tf_tensor__", None)  # TensorFlow's conversion protocol
    if conv is not None:  # (tf.IndexedSlices, a user's class): a Tensor of its own making
        return convert_to_tensor(conv(value, dtype, name), dtype=dtype)
    if value is None:
        raise ValueError("Attempt to convert a value (None) with an unsupported type "
                         "(<class 'NoneType'>) to a Tensor.")
    if isinstance(value, (str, bytes)):
        if dtype is not None and dtype.kind != "O":
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype "
                            f"{_dt.name(dtype)}")
        return Tensor._wrap(_bytes_array(np.array(value, dtype=object)))
    if STATE.stack.tracers and holds_size(value):  # a size that is symbolic in this trace
        t = sized_constant(value, dtype or _dt.as_dtype(dtype_hint) or _dt.int32)
        if t is not None:
            return t
    try:
        arr = np.asarray(value)
    except ValueError as e:
        if isinstance(value, (list, tuple)):
            raise ValueError(_ragged_message(value)) from None
        raise ValueError(f"Cannot convert {value!r} to a tensor: {e}") from None
    if arr.dtype == object or arr.dtype.kind in "uUSf":
        _check_python_values(value, arr, dtype)
    want = dtype or _dt.as_dtype(dtype_hint)
    if arr.dtype.kind in "US":  # Python strings: TensorFlow's bytes, whatever their kind
        if dtype is not None and dtype.kind != "O":  # (a dtype_hint yields to them)
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype "
                            f"{_dt.name(dtype)}")
        return Tensor._wrap(_bytes_array(np.array(list(_flat(value)), dtype=object)
                                         .reshape(arr.shape)))
    if want is not None and want.kind == "O":
        if not arr.size:
            return Tensor._wrap(arr.astype(object))
        if dtype is not None:
            _not_strings(value)
        want = None  # a hint of strings for numbers: their own dtype
    inferred = want is None
    first = _first_leaf(value) if isinstance(value, (list, tuple)) else value
    if arr.dtype.kind == "c" and not _is_complex(first):
        # TensorFlow infers a sequence's type from its first element: a complex number
        # after a real one is "mixed", whatever dtype was asked for
        raise ValueError("Can't convert Python sequence with mixed types to Tensor.")
    if want is None:
        if arr.dtype.kind != "b" and _is_bool(first):
            raise ValueError("Can't convert Python sequence with mixed types to Tensor.")
        if arr.dtype.kind == "f":
            # a sequence that starts with a NumPy float (a float64 array, say) keeps its
            # dtype, as TensorFlow infers it; Python floats are float32
            want = first.dtype if isinstance(first, (np.ndarray, np.generic)) \
                and first.dtype.kind == "f" else _dt.float32
        elif arr.dtype.kind in "iu":
            want = _dt.int32 if arr.size == 0 or (
                arr.min() >= -2**31 and arr.max() < 2**31) else _dt.int64
        elif arr.dtype.kind == "c":
            want = _dt.complex128  # TensorFlow's type for Python complex numbers
    if want is not None and arr.dtype != want:
        wide = arr
        if inferred:
            with np.errstate(over="ignore"):  # out of range raises just below
                arr = _safe_cast(arr, want, value)
        elif arr.size == 0 and isinstance(value, (list, tuple)):
            # an empty list holds no value to refuse: NumPy calls it float64, TensorFlow
            # gives it any dtype asked for (tf.concat([shape, []], 0) is int32)
            arr = arr.astype(want)
        elif want.kind in "iu" and arr.dtype.kind in "fc":
            # TensorFlow converts no Python float to an integer dtype, not even 1.0
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {want.name}")
        else:
            arr = _safe_cast(arr, want, value)
        if inferred and arr.dtype.kind == "f" and np.isinf(arr).any() \
                and (np.isinf(arr) & np.isfinite(wide)).any():
            # TensorFlow's check (and message) for a Python float that float32 cannot hold
            raise ValueError("Can't convert Python sequence with a value out of range for a "
                             "double-precision float.")
    return Tensor._wrap(arr)


def _flat(value):
    if isinstance(value, (list, tuple)):
        for v in value:
            yield from _flat(v)
    else:
        yield value


def _check_python_values(value, arr, dtype):
    """TensorFlow's errors for Python data NumPy converts too freely: integers beyond int64
    (NumPy makes them uint64, float64 or objects; TensorFlow refuses rather than wrap) and
    numbers mixed with strings (NumPy makes them all strings)."""
    kind = arr.dtype.kind
    if kind == "f" and not (arr.size and np.nanmax(np.abs(arr), initial=0) >= 2.0 ** 63):
        return  # no value of int64's size, so no integer out of its range
    if kind == "u" and dtype is not None and np.dtype(dtype).kind == "u":
        return  # 2**63 as an explicit uint64
    flat = list(_flat(value))
    if kind == "u" or any(type(v) is int and not -2**63 <= v < 2**63 for v in flat):
        raise ValueError("Can't convert Python sequence with out-of-range integer to Tensor.")
    if kind in "US" and not all(isinstance(v, (str, bytes)) for v in flat):
        raise ValueError("Can't convert Python sequence with mixed types to Tensor.")
    if kind == "O":
        raise TypeError(f"Cannot convert {value!r} of type {type(value).__name__} "
                        "to a tensor: elements must be numbers of one nesting depth.")


def _bytes_array(arr):
    """A string array (NumPy str, bytes or object) as ``tf.string``'s object array of
    bytes, str encoded as UTF-8; objects that are not strings are refused, as in TensorFlow."""
    out = np.empty(arr.shape, dtype=object)
    flat = out.reshape(-1)  # a view: filling it fills ``out``
    for i, v in enumerate(arr.reshape(-1).tolist()):
        if isinstance(v, str):
            v = v.encode("utf-8")
        elif not isinstance(v, bytes):
            raise ValueError("Failed to convert a NumPy array to a Tensor (Unsupported "
                             f"object type {type(v).__name__}).")
        flat[i] = v
    return out


def _not_strings(value):
    if isinstance(value, (list, tuple)):
        value = list(_flat(value))[0]
    raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype string")


def _object_array(arr):
    """A NumPy object array holding strings as a string array; any other object array is
    refused, as in TensorFlow (a tensor of Python objects computes nothing reliably)."""
    flat = arr.reshape(-1)
    for v in flat:
        if not isinstance(v, (str, bytes)):
            raise ValueError("Failed to convert a NumPy array to a Tensor (Unsupported "
                             f"object type {type(v).__name__}).")
    return np.array(flat.tolist()).reshape(arr.shape) if flat.size else arr.astype(str)


def _first_leaf(seq):
    """The first number (or array) of a nested sequence: TensorFlow infers the type from it."""
    while isinstance(seq, (list, tuple)) and seq:
        seq = seq[0]
    return seq


def _is_bool(v):
    return isinstance(v, (bool, np.bool_)) or (isinstance(v, np.ndarray) and v.dtype.kind == "b")


def _is_complex(v):
    return isinstance(v, complex) or (isinstance(v, (np.ndarray, np.generic))
                                      and v.dtype.kind == "c")


def _ragged_message(seq):
    """TensorFlow's message for a sequence NumPy cannot make rectangular: numbers next to
    lists are "mixed types", lists of different lengths are "non-rectangular"."""
    def mixed(s):
        kinds = {isinstance(v, (list, tuple)) for v in s}
        return len(kinds) > 1 or any(mixed(v) for v in s if isinstance(v, (list, tuple)))
    if mixed(seq):
        return "Can't convert Python sequence with mixed types to Tensor."
    return "Can't convert non-rectangular Python sequence to Tensor."


def _safe_cast(arr, dtype, orig):
    if dtype.kind in "iub" and arr.dtype.kind in "fc":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise TypeError(f"Cannot convert {orig!r} to EagerTensor of dtype {dtype.name}: "
                            "the value is not integral.")
    if dtype.kind == "b" and arr.dtype.kind != "b":
        raise TypeError(f"Cannot convert {orig!r} to EagerTensor of dtype bool.")
    return arr.astype(dtype)


def holds_size(v):
    """True for a symbolic size (``trace/symbolic.py``'s ``SymInt``) or a list with one."""
    if isinstance(v, (list, tuple)):
        return any(holds_size(x) for x in v)
    return is_size(v)


def is_size(v):
    """True for one symbolic size (``trace/symbolic.py``'s ``SymInt``)."""
    return type(v).__name__ == "SymInt" and hasattr(v, "expr")


def sizes_now(shape):
    """``shape`` with each symbolic size replaced by its value at this trace's size, for a
    check that the program's shape rules repeat at every size it is rebuilt for (so the read
    needs no guard)."""
    return tuple(s.value if is_size(s) else s for s in shape)


def sized_constant(value, dtype):
    """``value`` (holding symbolic sizes) as a traced constant re-evaluated per size; None
    where the trace cannot stage it (the caller then bakes in the current value)."""
    return hooks.symbolic_sizes.ctx_of(value).constant(value, dtype)


def full(shape, value, dtype):
    """``np.full`` as a tensor; staged as a broadcast where ``shape`` holds symbolic sizes
    (in a trace for all sizes, trace/symbolic.py) so that the size is not baked in."""
    if STATE.stack.tracers and holds_size(shape):
        t = hooks.symbolic_sizes.ctx_of(shape).broadcast(value, shape, dtype)
        if t is not None:
            return t
    return Tensor._wrap(np.full(shape, value, dtype))


def _holds_tensor(seq):
    for v in seq:
        if isinstance(v, Tensor):
            return True
        if isinstance(v, (list, tuple)) and _holds_tensor(v):
            return True
    return False


def constant(value, dtype=None, shape=None, name=None):
    """Create a constant tensor, optionally broadcast to ``shape``.

    >>> import tapegrad as tf
    >>> tf.constant(1.0, shape=(2,))
    tapegrad.Tensor([1. 1.], shape=(2,), dtype=float32)
    """
    if isinstance(value, Tensor) and getattr(value, "_symbolic", False):
        return value
    t = convert_to_tensor(value, dtype=dtype)
    arr = np.array(t._value)  # constants own their memory
    if shape is not None:
        shape = tuple(int(s) for s in shape)
        if arr.size == 1:
            arr = np.full(shape, arr.reshape(()), dtype=arr.dtype)
        elif arr.size == int(np.prod(shape)):
            arr = arr.reshape(shape)
        else:
            raise TypeError(f"Eager execution of tf.constant with unsupported shape. "
                            f"Tried to convert {arr.shape} with {arr.size} elements to "
                            f"shape {shape}.")
    return Tensor._wrap(arr)


def is_tensor(x):
    """True for Tensors, Variables and TensorFlow's composite tensors (``tf.SparseTensor``,
    ``tf.IndexedSlices``), as ``tf.is_tensor``.

    >>> import tapegrad as tf
    >>> tf.is_tensor(tf.constant(1.0)), tf.is_tensor(1.0)
    (True, False)
    """
    return isinstance(x, Tensor) or getattr(type(x), "_tf_composite", False)
