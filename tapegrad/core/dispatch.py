"""Primitives and the one dispatch point, ``bind``.

Every operation in tapegrad ends in ``bind(prim, *tensors, **params)``. With the interpreter
stack empty (``STATE.stack.idle``) it calls the primitive's NumPy implementation and wraps the
result. Otherwise it asks the interpreters on the stack (core/state.py), with one protocol:

1. the computing interpreters, from the top: the first whose values are among the inputs
   (a vmap level's ``BatchedTensor``, a trace's symbolic tensor: the levels follow the
   data) computes the output with ``process``; with none, NumPy does;
2. then every recorder (tapes and forward accumulators, outermost first) sees the finished
   operation with ``record``.

None of these interpreters contains a derivative formula: the rules live on the primitive.
"""
import numpy as np

from tapegrad.core import hooks
from tapegrad.core.state import STATE
from tapegrad.core.tensor import Tensor, Variable
from tapegrad.errors import InvalidArgumentError

PRIMITIVES = {}

# How a primitive's output elements depend on its input elements (``Primitive.sparsity``).
# Each kind is exact or over-counts; ``sparsity/`` has one dependency rule per kind.
SPARSITY_KINDS = {
    "elementwise": "each output element depends on the input elements at its position "
                   "(after broadcasting)",
    "copy": "each output element is one input element or a constant (getitem, reshape)",
    "copy_along_axis": "a copy whose indices move elements only along its axis",
    "scatter": "sums input elements into output elements: the transpose of the copy named "
               "by ``transposes``",
    "scatter_along_axis": "a scatter whose indices move elements only along its axis",
    "reduction": "each output element depends on the elements it reduces (as reduce_sum)",
    "linear": "a linear map with non-negative coefficients (cumsum, average pooling): the "
              "primitive applied to 0/1 dependency rows gives the pattern",
    "window": "each output element depends on its pooling window (as avg_pool)",
    "window_gather": "an output element depends on its windows in both operands "
                     "(max_pool_gather: the windows of x pick, the other operand is picked)",
    "window_scatter": "an element of the output depends on the windows that hold it, in "
                      "both operands (max_pool_scatter: the transpose of the gather)",
    "matmul": "the matrix product: an output element depends on a row and a column",
    "multilinear": "the pattern of the product with every other operand dense (einsum, conv)",
    "matrix": "an output matrix of a stack depends on the whole of its own input matrices",
}
# How a primitive's derivative rules meet complex values (``Primitive.complex``).
COMPLEX_KINDS = (None, "real_linear", "holomorphic", "own")


class Primitive:
    """One operation and all of its rules, side by side.

    - ``impl(*arrays, **params)``: the NumPy implementation (through the array namespace).
    - ``abstract(*avals, **params) -> (shape, dtype)``: the shape/dtype rule; ``avals`` have
      ``.shape`` and ``.dtype``. Pure arithmetic on shapes and dtypes: it never runs ``impl``
      nor allocates an array of the sizes it is given (loading a saved program relies on it).
      It raises ``TypeError`` for input dtypes outside the primitive's domain and
      ``ValueError`` for shapes that do not fit. Every primitive has one.
    - ``validate(*avals, **params)``: raises ``ValueError`` (naming the param) unless every
      param has its type and lies in its domain for these inputs: axes in range, perms that
      are permutations, subscripts that fit. Every primitive with params has one; the IR
      checker runs it before ``abstract``, so a loaded program does what it declares.
    - ``vjp``: a tuple with one rule per input, ``rule(g, ans, *xs, **params)`` returning the
      cotangent of that input (broadcasting is undone by the engine), or None for inputs that
      get no gradient. Written with the primitive layer's functions (``primitives/api.py``) and operators, so
      it differentiates again.
      A first-order pass that nothing records calls the rules with NumPy arrays instead of
      tensors (operators are then plain NumPy): rules must not rely on Tensor-only methods.
    - ``jvp``: a tuple with one rule per input, ``rule(x_dot, ans, *xs, **params)`` giving that
      input's contribution to the output tangent; or one callable
      ``rule(tangents, ans, *xs, **params)`` for the whole operation.
    - ``batch(args, batched, **params)``: the batching rule; ``batched[i]`` tells whether
      ``args[i]`` carries a leading batch axis; returns the batched output.
    - ``emit``: the code-generation form, a format string over argument names and params.
    - ``nondiff``: the output is never differentiable (comparisons, argmax, floor...).
    - ``stateful``: each call gives a new value (random numbers): a trace records it even
      without symbolic inputs, and no pass merges or folds it.
    - ``fresh``: the output is a new array, never a view of an input, so generated code may
      write into its buffer (``trace/codegen.py``; ufuncs are fresh without saying so).
    - ``cacheable``: a tape holding it may be compiled by the derivative cache (False for
      control flow, whose sub-programs the cache's structure key cannot see).
    - ``elementwise``: output element ``i`` is computed from the input elements at ``i``
      alone (after broadcasting). The IR's simplification moves such operations inside a
      broadcast (``ir/algebraic.py``).
    - ``sparsity``: how output elements depend on input elements, one of the kinds of
      ``SPARSITY_KINDS`` (``sparsity/`` propagates each kind); None: every output element
      may depend on every input element (exact for none, safe for all). Elementwise
      primitives are ``"elementwise"``.
    - ``transposes``: for a ``"scatter"`` (a sum of input elements into the output), the
      name of the copy primitive it is the transpose of (``index_add``: ``getitem``).
    - ``identities``: its algebraic identities, ``rule(e, ctx, out, *inputs)`` returning
      ``(new_equations, value)`` that replace equation ``e``, or None
      (``primitives/identities.py``; the IR pass ``ir/algebraic.py`` applies them).
    - ``blas_work(ins, outs, params)``: multiply-adds of one call, for primitives that call
      BLAS (the thread pool's size follows it).
    - ``complex``: how its derivative rules meet complex values (TensorFlow's convention,
      ``primitives/complex.py``): ``"real_linear"`` (linear with real coefficients: the
      rules hold as written), ``"holomorphic"`` (the rules are ``t * f'(z)``; the VJP is
      conjugated), ``"own"`` (its rules handle complex values themselves), or None (its
      derivatives refuse complex values).
    - ``broadcast_view``: the output is a read-only broadcast of its input (zero strides),
      larger than it at no memory cost: the IR folds it on constants of any size
      (``ir/passes.py``), as a view (``broadcast_to``).
    - ``value_params``: the names of integer params that are values, not sizes or axes
      (``pad``'s ``constant_values``, ``integer_pow``'s ``y``): a loaded program does not
      bound them by its dimensions (``saved/decode.py``).

    Its derivative rules meet complex values as ``complex`` says from the moment it is made
    (``core/hooks.py: complex_rules``, installed by ``primitives/complex.py``).
    """

    __slots__ = ("name", "impl", "abstract", "vjp", "jvp", "batch", "emit", "nondiff",
                 "nin", "doc", "stateful", "validate", "blas_work", "fresh", "cacheable",
                 "elementwise", "sparsity", "transposes", "identities", "complex",
                 "broadcast_view", "value_params")

    def __init__(self, name, impl, *, nin, abstract=None, vjp=None, jvp=None, batch=None,
                 emit=None, nondiff=False, doc="", stateful=False, validate=None, fresh=False,
                 cacheable=True, elementwise=False, sparsity=None, transposes=None,
                 identities=None, blas_work=None, complex=None, broadcast_view=False,
                 value_params=()):
        if name in PRIMITIVES:
            raise ValueError(f"primitive {name!r} is already registered")
        if sparsity is not None and sparsity not in SPARSITY_KINDS:
            raise ValueError(f"primitive {name!r}: unknown sparsity kind {sparsity!r}")
        if complex not in COMPLEX_KINDS:
            raise ValueError(f"primitive {name!r}: unknown complex kind {complex!r}")
        self.name, self.impl, self.nin = name, impl, nin
        self.abstract, self.vjp, self.jvp = abstract, vjp, jvp
        self.batch, self.emit, self.nondiff, self.doc = batch, emit, nondiff, doc
        self.stateful, self.validate = stateful, validate
        self.fresh, self.cacheable = fresh, cacheable
        self.elementwise = elementwise
        self.sparsity = "elementwise" if elementwise and sparsity is None else sparsity
        self.transposes, self.identities = transposes, identities
        self.blas_work, self.complex = blas_work, complex
        self.broadcast_view, self.value_params = broadcast_view, tuple(value_params)
        if hooks.complex_rules is not None:  # else complex.py adapts it at its import
            hooks.complex_rules(self)
        PRIMITIVES[name] = self

    def __repr__(self):
        return f"<primitive {self.name}>"

    def __call__(self, *args, **params):
        return bind(self, *args, **params)

    def bind_raw(self, *args, **params):
        """Bind without the op layer's conversions; NumPy arrays are wrapped."""
        for a in args:
            if not isinstance(a, Tensor):
                args = tuple(a if isinstance(a, Tensor) else _wrap(np.asarray(a)) for a in args)
                break
        return bind(self, *args, **params)


def bind(prim, *args, **params):
    """Apply ``prim`` to tensors ``args``: the single dispatch point of tapegrad."""
    st = STATE.stack
    if st.idle:
        try:
            if params:
                v = prim.impl(*[a._value for a in args], **params)
            elif len(args) == 2:  # the common cases, unpacked: no list, no star-args
                v = prim.impl(args[0]._value, args[1]._value)
            elif len(args) == 1:
                v = prim.impl(args[0]._value)
            else:
                v = prim.impl(*[a._value for a in args])
        except (ValueError, IndexError, np.linalg.LinAlgError) as e:
            raise _op_error(prim, args, params, e) from None
        out = _new(Tensor)  # Tensor._wrap, inlined
        out._value = v
        return out
    if st.recording_only:
        # eager code under a tape: compute, then let each recorder see the operation
        n = len(args)
        if n == 2:  # the common cases, unpacked: no loops
            a, b = args
            if type(a) is Variable or type(b) is Variable:
                # a variable read is an operation of its own (see _bind_slow), in order
                if type(a) is Variable:
                    a = a.read_value()
                if type(b) is Variable:
                    b = b.read_value()
                args = (a, b)
            try:
                v = prim.impl(a._value, b._value, **params) if params else \
                    prim.impl(a._value, b._value)
            except (ValueError, IndexError, np.linalg.LinAlgError) as e:
                raise _op_error(prim, args, params, e) from None
        elif n == 1:
            a = args[0]
            if type(a) is Variable:
                a = a.read_value()
                args = (a,)
            try:
                v = prim.impl(a._value, **params) if params else prim.impl(a._value)
            except (ValueError, IndexError, np.linalg.LinAlgError) as e:
                raise _op_error(prim, args, params, e) from None
        else:
            for a in args:
                if type(a) is Variable:
                    args = tuple([x.read_value() if type(x) is Variable else x for x in args])
                    break
            try:
                v = prim.impl(*[a._value for a in args], **params)
            except (ValueError, IndexError, np.linalg.LinAlgError) as e:
                raise _op_error(prim, args, params, e) from None
        out = _new(Tensor)  # Tensor._wrap, inlined: this runs for every recorded op
        out._value = v
        if not prim.nondiff:
            recs = st.recorders
            if len(recs) == 1:
                recs[0].record(prim, args, params, out, recs, 0)
            else:
                for i, r in enumerate(recs):
                    r.record(prim, args, params, out, recs, i)
        return out
    return _bind_slow(prim, args, params)


_wrap = Tensor._wrap
_new = object.__new__


def _bind_slow(prim, args, params):
    st = STATE.stack
    recs = st.recorders
    if st.readers:
        # A variable read is an operation of its own, so later assignments do not change
        # what a tape saw, and the gradient with respect to a variable sums over its reads.
        for a in args:
            if type(a) is Variable:
                args = tuple([a.read_value() if type(a) is Variable else a for a in args])
                break
    out = None
    for interp in st.computers:  # from the top of the stack: who owns these values?
        out = interp.process(prim, args, params)
        if out is not None:
            break
    else:
        try:
            out = _wrap(prim.impl(*[a._value for a in args], **params))
        except (ValueError, IndexError, np.linalg.LinAlgError) as e:
            raise _op_error(prim, args, params, e) from None
    if recs and not prim.nondiff:
        if len(recs) == 1:
            recs[0].record(prim, args, params, out, recs, 0)
        else:
            for i, r in enumerate(recs):
                r.record(prim, args, params, out, recs, i)
    return out


def _op_error(prim, args, params, err):
    if isinstance(err, InvalidArgumentError):  # a primitive's own TensorFlow error, as is
        return err
    shapes = ", ".join(str(tuple(a.shape)) for a in args)
    extra = f" with {params}" if params else ""
    return InvalidArgumentError(
        f"{prim.name}: cannot apply to inputs of shapes {shapes}{extra}: {err}")
