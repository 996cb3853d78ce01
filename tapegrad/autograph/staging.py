"""Staging a converted ``if`` or loop whose predicate is symbolic: ``cond`` and ``while_loop``
over the statement's state variables, with TensorFlow's (AutoGraph's) rules and errors.

A state value is *tensor-like* when it is a tensor, a Python number (it becomes a tensor, as
in TensorFlow) or a nest (list/tuple/dict) of those; such values are the outputs of a
``cond`` and the variables of a loop. Other values must be the same object on every path.

``if``: each branch is traced on its own (``control_flow.trace``) from the state before the
statement, then the two results are reconciled variable by variable: a value undefined on
one side stays undefined (an error once used: TensorFlow's "must also be initialized in the
else branch"), the return value of a branch that did not return is filled with zeros (the
``do_return`` flag guards it), ``None`` against a tensor is TensorFlow's error. The chosen
outputs are then bound as one ``cond`` (``control_flow.ops.staged_cond``) whose branches
evaluate the traced programs.

Loops: ``control_flow.ops.while_loop`` over the tensor-like state; a variable first assigned
in the body (undefined before the loop) is discovered while tracing the body and the loop is
traced again with it as a loop variable starting at zeros (TensorFlow's placeholder).
"""
import numpy as np

from tapegrad.core.state import STATE
from tapegrad.core.tensor import Tensor, Variable, convert_to_tensor
from tapegrad.control_flow import ops as cf_ops
from tapegrad.control_flow import trace as cf_trace
from tapegrad.ir import evaluate
from tapegrad.ops import math_ops
from tapegrad.primitives.api import where, zeros
from tapegrad.util import nest

_NUMBERS = (bool, int, float, complex, np.number, np.bool_)


class Undefined:
    """A variable that has no value yet (AutoGraph's ``Undefined``): any use raises.

    ``message`` is the error for a variable that only some paths define."""

    __slots__ = ("symbol_name", "message")

    def __init__(self, symbol_name="_retval", message=None):
        self.symbol_name = symbol_name
        self.message = message

    def fail(self, *args, **kwargs):
        if self.message:
            raise ValueError(self.message)
        raise UnboundLocalError(f"cannot access local variable '{self.symbol_name}' where it "
                                "is not associated with a value")

    def __getattr__(self, name):  # an AttributeError, so that getattr(x, name, default) works
        raise AttributeError(self.message or f"'{self.symbol_name}' is not defined here, so it "
                             f"has no attribute {name!r}")

    def __repr__(self):
        return f"Undefined({self.symbol_name!r})"


for _op in ("bool", "len", "iter", "call", "getitem", "array", "index", "int", "float",
            "neg", "pos", "abs", "invert", "add", "radd", "sub", "rsub", "mul", "rmul",
            "truediv", "rtruediv", "floordiv", "rfloordiv", "mod", "rmod", "pow", "rpow",
            "matmul", "rmatmul", "lt", "le", "gt", "ge", "and", "rand", "or", "ror"):
    setattr(Undefined, f"__{_op}__", Undefined.fail)


class UndefinedReturnValue(Undefined):
    """The return value of a function that has not returned yet."""


def symbolic(x):
    """Has ``x`` no value at trace time (a traced or vmap-batched tensor)?"""
    return isinstance(x, Tensor) and getattr(x, "_symbolic", False)


def as_value(x):
    return x.read_value() if type(x) is Variable else x


def _leaf(x):
    return isinstance(x, (Tensor, *_NUMBERS)) or cf_ops.composite(x)


def tensor_leaves(v):
    """The tensors of a tensor-like state value (a TensorArray gives its dense tensor), or
    None when it is not one."""
    if _leaf(v):
        return cf_ops.components(_tensor(v))
    if isinstance(v, (list, tuple, dict)) and not isinstance(v, Undefined):
        flat = nest.flatten(v)
        if flat and all(_leaf(x) for x in flat):
            return cf_ops.components([_tensor(x) for x in flat])
    return None


def _rebuilt(struct, leaves):
    """The value of structure ``struct`` (a tensor-like state value) made of ``leaves``."""
    if isinstance(struct, (Tensor, *_NUMBERS)):
        return leaves[0]
    return cf_ops.rebuilt(struct, leaves)


def _tensor(x):
    x = as_value(x)
    return x if isinstance(x, Tensor) or cf_ops.composite(x) else convert_to_tensor(x)


def _spec(t):
    return tuple(t.shape), t.dtype


def _shape(s):
    return "(" + ", ".join(str(int(d)) for d in s) + (",)" if len(s) == 1 else ")")


# -- if -------------------------------------------------------------------------------------------
def staged_if(pred, body, orelse, get_state, set_state, names):
    init = get_state()
    traced = bool(STATE.stack.tracers)
    sides = [_branch(fn, init, set_state, get_state, traced, label)
             for fn, label in ((body, "if_true"), (orelse, "if_false"))]
    (t_raw, t_flat, t_index), (f_raw, f_flat, f_index) = [s[:3] for s in sides]
    final, picks = list(init), []  # picks: (var, t leaves or specs to fill, f ...)
    for i, name in enumerate(names):
        a, b = t_raw[i], f_raw[i]
        ta, fb = t_index[i], f_index[i]
        if ta is not None and fb is not None:
            _same_branch_types(name, a, b, [t_flat[k] for k in ta], [f_flat[k] for k in fb])
            picks.append((i, a, ta, fb))
        elif ta is not None or fb is not None:
            final[i] = _one_sided(name, a, b, ta is not None)
            if final[i] is None:  # a return value on one side: zeros on the other
                picks.append((i, a if ta is not None else b, ta, fb))
        elif a is b or (isinstance(a, Undefined) and isinstance(b, Undefined)):
            final[i] = a
        else:
            raise TypeError(f"'{name}' must be a tensor, or the same Python object in the main "
                            f"and else branches; got {type(a).__name__} and "
                            f"{type(b).__name__}.")
    specs = [[_spec(t_flat[k]) for k in ta] if ta is not None else
             [_spec(f_flat[k]) for k in fb] for _, _, ta, fb in picks]
    if traced:
        outs = _bind_cond(pred, sides, picks, specs)
    else:  # eager vmap: both branches ran; select per example
        outs = [where(pred, x, y) for x, y in zip(_picked(t_flat, picks, specs, 2),
                                                   _picked(f_flat, picks, specs, 3))]
    k = 0
    for (i, struct, _, _), sp in zip(picks, specs):
        leaves, k = outs[k:k + len(sp)], k + len(sp)
        final[i] = _rebuilt(struct, leaves)
    set_state(tuple(final))


def _branch(fn, init, set_state, get_state, traced, label):
    """Run one branch from ``init``: its raw state, the flat tensor leaves of its tensor-like
    values, their positions per variable, and (traced) the program and its outer values."""
    box = {}

    def run():
        # each branch writes its own copy of a TensorArray (writes change it in place)
        set_state(tuple(v._tg_rebuild(v._tg_components()) if cf_ops.composite(v) else v
                        for v in init))
        fn()
        raw = box["raw"] = get_state()
        flat, index = [], []
        for v in raw:
            leaves = tensor_leaves(v)
            index.append(None if leaves is None else list(range(len(flat),
                                                                len(flat) + len(leaves))))
            flat += leaves or []
        box["index"] = index
        return flat

    if not traced:
        flat = run()
        return box["raw"], flat, box["index"], None, None, []
    prog, extras, _, flat, assigned = cf_trace.trace(run, [], label, updates=True)
    return box["raw"], flat, box["index"], prog, extras, assigned


def _same_branch_types(name, a, b, la, lb):
    if not isinstance(a, (Tensor, *_NUMBERS)) or not isinstance(b, (Tensor, *_NUMBERS)):
        if cf_ops._skeleton(a) != cf_ops._skeleton(b):
            raise ValueError(f"'{name}' must have the same nested structure in the main and "
                             f"else branches: {cf_ops._skeleton(a)} and "
                             f"{cf_ops._skeleton(b)}.")
    _same_leaf_types(name, la, lb, "in the main branch", "in the else branch",
                     "; tapegrad's programs have static shapes, so both branches must give "
                     "one shape.")


def _same_leaf_types(name, xs, ys, first, then, shape_note):
    """TensorFlow's errors for a variable whose dtype (or, in tapegrad, shape) differs."""
    for x, y in zip(xs, ys):
        if x.dtype != y.dtype:
            raise TypeError(f"'{name}' has dtype {x.dtype.name} {first}, but dtype "
                            f"{y.dtype.name} {then}")
        if tuple(x.shape) != tuple(y.shape):
            raise ValueError(f"'{name}' has shape {_shape(x.shape)} {first}, but shape "
                             f"{_shape(y.shape)} {then}{shape_note}")


def _one_sided(name, a, b, main_defines):
    """The value after the ``if`` of a variable tensor-like on one side only (None: a
    return value to fill with zeros)."""
    other, side = (b, "else") if main_defines else (a, "main")
    if isinstance(other, UndefinedReturnValue):
        return None
    if isinstance(other, Undefined):
        return Undefined(name, f"'{name}' must also be initialized in the {side} branch")
    if other is None:
        raise ValueError(f"'{name}' is None at the end of the {side} branch.")
    raise TypeError(f"'{name}' is a tensor in one branch but a {type(other).__name__} in the "
                    f"{side} branch; it must be a tensor in both.")


def _picked(flat, picks, specs, side):
    out = []
    for pick, sp in zip(picks, specs):
        idx = pick[side]
        out += [flat[k] for k in idx] if idx is not None else [zeros(s, d) for s, d in sp]
    return out


def _bind_cond(pred, sides, picks, specs):
    """The picked outputs of a ``cond`` of the two traced branches. A ``tf.Variable`` that
    either branch assigns is one more output (the other branch passes its value through),
    assigned after the ``cond``."""
    (_, _, _, tp, t_ext, t_set), (_, _, _, fp, f_ext, f_set) = sides
    everything = cf_trace.union(t_ext, f_ext)
    position = {id(e): k for k, e in enumerate(everything)}
    assigned = cf_trace.union(t_set, f_set)

    def branch(prog, ext, mine, side):
        where_ = [position[id(e)] for e in ext]

        def run(*operands):
            outs = evaluate(prog, [operands[k] for k in where_])[0]
            flat, new = outs[:len(outs) - len(mine)], outs[len(outs) - len(mine):]
            done = {id(v): x for v, x in zip(mine, new)}
            return _picked(flat, picks, specs, side) + [
                done.get(id(v), operands[position[id(v)]]) for v in assigned]
        return run
    if not picks and not assigned:
        return []
    outs = cf_ops.staged_cond(pred, branch(tp, t_ext, t_set, 2), branch(fp, f_ext, f_set, 3),
                              *[cf_trace.outer_value(e) for e in everything])
    for v, value in zip(assigned, outs[len(outs) - len(assigned):]):
        v.assign(value)
    return outs[:len(outs) - len(assigned)]


# -- loops ------------------------------------------------------------------------------------------
class _NewLoopVar(Exception):
    """Variables first assigned in the body, ``{index: value after one iteration}``."""

    def __init__(self, found):
        self.found = found


def staged_loop(test, body, get_state, set_state, names, opts, counter=None):
    """A ``while_loop`` over the statement's tensor-like state.

    ``test()`` gives the condition (with ``counter``: ``test(i)``, and ``body(i)``);
    ``counter``: ``(start, limit, delta)`` tensors of a ``for`` over a range."""
    flags = set(opts.get("return_flags", ()))
    if flags & set(names):
        raise NotImplementedError(
            "a return statement cannot be placed inside this TensorFlow loop; this may happen "
            "if a return statement depends on a static Python condition such as a "
            "hyperparameter")
    init = get_state()
    fresh = {}
    while True:
        try:
            return _staged_loop(test, body, get_state, set_state, names, opts, counter, init,
                                fresh)
        except _NewLoopVar as e:  # first assigned in the body: loop variables from zeros
            set_state(init)
            for i, value in e.found.items():
                fresh[i] = nest.map_structure(lambda t: zeros(tuple(t.shape), t.dtype),
                                              _tensor(value) if isinstance(value, _NUMBERS)
                                              else value)


def _staged_loop(test, body, get_state, set_state, names, opts, counter, init, fresh):
    start = [fresh.get(i, v) for i, v in enumerate(init)]
    loop = [i for i, v in enumerate(start) if tensor_leaves(v) is not None]
    first = {i: tensor_leaves(start[i]) for i in loop}
    flat0 = [t for i in loop for t in first[i]]
    lead = [] if counter is None else [counter[0]]

    def state_of(flat):
        vals, k = list(start), len(lead)
        for i in loop:
            n = len(first[i])
            piece = list(flat[k:k + n])
            vals[i] = _rebuilt(start[i], piece)
            k += n
        return tuple(vals)

    def cond_fn(*flat):
        set_state(state_of(flat))
        if counter is None:
            c = test()
        else:
            i, (_, limit, delta) = flat[0], counter
            if symbolic(delta):
                c = math_ops.logical_or(math_ops.logical_and(delta >= 0, i < limit),
                                        math_ops.logical_and(delta < 0, i > limit))
            else:
                c = i < limit if bool(delta._value >= 0) else i > limit
            if test is not None:
                c = math_ops.logical_and(c, _tensor(test()))
        return _tensor(c)

    def body_fn(*flat):
        set_state(state_of(flat))
        if counter is None:
            body()
        else:
            body(flat[0])
        raw = get_state()
        out = [flat[0] + counter[2]] if counter is not None else []
        found = {}
        for i, name in enumerate(names):
            if i in first:
                out += _after_iteration(name, start[i], raw[i], first[i])
            elif raw[i] is not start[i]:
                if isinstance(start[i], Undefined):
                    if not cf_ops.composite(raw[i]) and tensor_leaves(raw[i]) is not None:
                        found[i] = raw[i]
                    continue  # an object made in the body (a tape): local to an iteration
                if not isinstance(raw[i], Undefined):
                    raise ValueError(f"'{name}' must be defined before the loop as a tensor "
                                     "(or a nest of tensors) to change inside a TensorFlow "
                                     f"loop; it is {type(start[i]).__name__} before the "
                                     f"loop and {type(raw[i]).__name__} after one "
                                     "iteration.")
        if found:  # traced again with them as loop variables (one retrace for all)
            raise _NewLoopVar(found)
        return out

    final = cf_ops.while_loop(cond_fn, body_fn, tuple(lead + flat0),
                              maximum_iterations=opts.get("maximum_iterations"))
    set_state(state_of(list(final)))


def _after_iteration(name, before, after, leaves0):
    leaves = tensor_leaves(after)
    if leaves is None or len(leaves) != len(leaves0) or (
            not isinstance(before, (Tensor, *_NUMBERS))
            and cf_ops._skeleton(before) != cf_ops._skeleton(after)):
        what = type(after).__name__ if leaves is None else cf_ops._skeleton(after)
        raise ValueError(f"'{name}' must keep its nested structure in the loop: "
                         f"{cf_ops._skeleton(before)} before the loop, {what} after one "
                         "iteration.")
    _same_leaf_types(name, leaves0, leaves, "before the loop", "after one iteration",
                     ". tapegrad's loop variables keep their shape (programs have static "
                     "shapes).")
    return leaves
