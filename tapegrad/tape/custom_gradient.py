"""``custom_gradient`` and ``recompute_grad``.

Each active tape records one operation from the inputs of a ``custom_gradient`` function to
its outputs, whose VJP is the user's ``grad_fn``. ``grad_fn`` is ordinary tapegrad code, so
outer tapes record it in turn and higher derivatives work. Forward accumulators follow the
function's own operations, which gives the JVP of the function as written; where that gives
an output no tangent (``f`` returned a Python number or a NumPy value), they use the custom
rule transposed, as TensorFlow does. Results are always tensors.
``recompute_grad`` runs its function with tapes paused, keeping no intermediates, and
recomputes them under a fresh tape for the gradient.
"""
import functools

from tapegrad.primitives.api import convert_to_tensor, identity, reduce_sum, zeros_like
from tapegrad.core.state import STATE, Interpreter, interpreters, recording
from tapegrad.core.tensor import Tensor, Variable
from tapegrad.util import nest


class _CustomOp:
    """A one-off operation whose VJP calls a user's ``grad_fn``; its JVP is that VJP
    transposed (used by forward accumulators only where the function as written gives its
    output no tangent, as in TensorFlow)."""

    __slots__ = ("name", "vjp", "jvp", "nondiff", "nin")
    sparsity = None  # no dependency kind: every output element may depend on every input

    def __init__(self, vjp, nin):
        self.name, self.vjp, self.nondiff, self.nin = "custom_gradient", vjp, False, nin
        self.jvp = self._transposed_vjp

    def _transposed_vjp(self, tangents, ans, *xs):
        # the VJP u -> J^T u is linear in u, so d/du <J^T u, t> = J t
        from tapegrad.tape.gradient_tape import GradientTape
        u = zeros_like(ans)
        with GradientTape() as tape:
            tape.watch(u)
            cts = self.vjp(u, ans, *xs)
            terms = [reduce_sum(c * t) for c, t in zip(cts, tangents)
                     if c is not None and t is not None]
        if not terms:
            return None
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return tape.gradient(total, u)


class _ReadSpy(Interpreter):
    """An interpreter that only notes which variables are read."""

    __slots__ = ("variables",)
    records = True

    def __init__(self):
        self.variables = []

    def sees(self, tensor):
        return False  # it records no operations

    def read_variable(self, var, val):
        if var.trainable and var.dtype.kind in "fc" and all(v is not var for v in self.variables):
            self.variables.append(var)
        return val


def _takes_variables(fn):
    code = getattr(fn, "__code__", None)
    if code is None:
        return True
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    return "variables" in names or bool(code.co_flags & 0x08)  # **kwargs


def _as_list(grads, n, what):
    # one gradient per flattened input, as TensorFlow counts them: ((), g) is one gradient
    grads = nest.flatten(grads)
    if len(grads) != n:
        raise ValueError(f"custom_gradient function expected to return {n} gradients for "
                         f"{what}, but returned {len(grads)} instead.")
    return grads


def _as_tensor(o):
    return o if o is None or isinstance(o, Tensor) else convert_to_tensor(o)


def custom_gradient(f=None):
    """Define a function's gradient yourself: ``f(*x)`` returns ``(y, grad_fn)``.

    ``grad_fn(*upstream)`` returns one gradient per input. If ``f`` reads variables that are
    not inputs, ``grad_fn`` must take a ``variables=`` keyword and return
    ``(input_grads, variable_grads)``.

    >>> import tapegrad as tf
    >>> @tf.custom_gradient
    ... def clipped_identity(x):
    ...     return tf.identity(x), lambda dy: tf.clip_by_value(dy, -1.0, 1.0)
    >>> x = tf.constant(2.0)
    >>> with tf.GradientTape() as t:
    ...     t.watch(x)
    ...     y = clipped_identity(x) * 10.0
    >>> float(t.gradient(y, x))
    1.0
    """
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        recs = STATE.stack.recorders
        # The arguments reach f unchanged (nested structures, empty tuples), except that a
        # variable is read once; the recorded operation has one input per leaf.
        flat_args = nest.flatten(args)
        inputs = [a.read_value() if type(a) is Variable and recs else _as_tensor(a)
                  for a in flat_args]
        if any(type(a) is Variable for a in flat_args) and recs:
            args = nest.pack_sequence_as(args, [i if type(a) is Variable else a
                                                for a, i in zip(flat_args, inputs)])
        # the recorders for which grad_fn replaces f's operations (tapes), and the others
        # (accumulators follow f's operations)
        custom = [r for r in recs if r.uses_custom_vjp]
        others = [r for r in recs if not r.uses_custom_vjp]
        spy = _ReadSpy()
        # f runs normally (tapes record its operations, so that grad_fn's use of its
        # intermediates is differentiable again), while the spy notes variable reads.
        with interpreters(STATE.stack.interpreters + (spy,)):
            result, grad_fn = f(*args, **kwargs)
        # Results are tensors, also where f returned Python numbers or NumPy values.
        flat_out = [_as_tensor(o) for o in nest.flatten(result)]
        if not recs:
            # A trace with no tape inside keeps f's operations, not grad_fn: the tracers are
            # told, so that whoever differentiates their program later knows it differs
            # from differentiating the function (tapegrad.scipy then does the latter)
            for t in STATE.stack.tracers:
                t.dropped_custom_gradient = True
            return nest.pack_sequence_as(result, flat_out)
        variables = spy.variables
        if variables and custom and not _takes_variables(grad_fn):
            raise TypeError("If using @custom_gradient with a function that uses variables, "
                            "then grad_fn must accept a keyword argument 'variables'.")
        ins = list(inputs) + [v.read_value() for v in variables]  # linked to the variables
        # The outputs the caller sees are fresh tensors that tapes reach only through
        # grad_fn; forward accumulators follow them through the identity.
        with recording(others):
            flat_out = [identity(o) if o is not None else o for o in flat_out]
        n_in = len(inputs)

        def vjp_for(k):
            def rule(g, ans, *xs):
                ups = [g if j == k else (None if o is None else zeros_like(o))
                       for j, o in enumerate(flat_out)]
                if variables:
                    gin, gvar = grad_fn(*ups, variables=variables)
                    gin = _as_list(gin, n_in, "the inputs")
                    gvar = _as_list(gvar, len(variables), "the variables")
                    return tuple(gin) + tuple(gvar)
                return tuple(_as_list(grad_fn(*ups), n_in, "the inputs"))
            return rule

        for k, o in enumerate(flat_out):
            if o is None or o.dtype.kind not in "fc":
                continue
            op = _CustomOp(vjp_for(k), len(ins))
            for i, r in enumerate(recs):
                # a tape records it; an accumulator takes the custom rule only where the
                # function as written left the output without a tangent
                r.record_custom(op, tuple(ins), o, recs, i)
        return nest.pack_sequence_as(result, flat_out)
    return wrapper


def recompute_grad(f):
    """Save memory: keep no intermediates of ``f``; recompute them for the gradient.

    >>> import tapegrad as tf
    >>> g = tf.recompute_grad(lambda x: tf.sin(x) * x)
    >>> x = tf.constant(1.0)
    >>> with tf.GradientTape() as t:
    ...     t.watch(x)
    ...     y = g(x)
    >>> round(float(t.gradient(y, x)), 5)   # cos(1) + sin(1)
    1.38177
    """
    from tapegrad.tape.gradient_tape import GradientTape

    def _float(a):
        return isinstance(a, Tensor) and a.dtype.kind in "fc"

    @functools.wraps(f)
    @custom_gradient
    def inner(*args):
        with recording([r for r in STATE.stack.recorders if not r.uses_custom_vjp]):
            y = f(*args)   # tapes paused: no intermediates are kept

        def grad_fn(*upstream, variables=None):
            with GradientTape(watch_accessed_variables=True) as tape:
                # fresh copies: one tensor passed as two arguments gets each partial
                # derivative once, not the sum in both places (as in TensorFlow)
                id_args = nest.map_structure(lambda a: identity(a) if _float(a) else a,
                                             args)
                flat = nest.flatten(id_args)
                tape.watch([a for a in flat if _float(a)])
                y2 = f(*id_args)
            wrt = [k for k, a in enumerate(flat) if _float(a)]
            sources = [flat[k] for k in wrt] + list(variables or [])
            grads = tape.gradient(nest.flatten(y2), sources, output_gradients=list(upstream),
                                  unconnected_gradients="zero")
            per_arg = [None] * len(flat)
            for k, g in zip(wrt, grads):
                per_arg[k] = g
            if variables:
                return per_arg, grads[len(wrt):]
            return per_arg
        return y, grad_fn
    return inner
