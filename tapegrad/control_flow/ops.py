"""``tapegrad.cond`` and ``tapegrad.while_loop``: control flow that survives tracing.

Three regimes, chosen per call:

- **eager, concrete predicate**: the Python branch or loop simply runs, and tapes record the
  operations that run (TensorFlow's eager behaviour);
- **eager under vmap** (the predicate is a batched tensor): both branches run and ``where``
  selects per example; a loop runs until every example is done, finished examples masked;
- **inside a trace** (``tapegrad.function``): each branch, loop condition and loop body is
  traced into an IR sub-program and the whole construct becomes one ``cond`` or
  ``while_loop`` primitive (``tapegrad/control_flow/primitives.py``), with derivative and
  batching rules. Tensors the functions close over become extra operands.

Primitives have one output, so outputs are bundled by dtype: each dtype group is one
equation whose output is the group's tensors flattened and concatenated (a lone tensor is
left as it is). A loop equation carries only the loop variables its group depends on.
"""
import numpy as np

from tapegrad.core.state import STATE
from tapegrad.core.tensor import Tensor, Variable, convert_to_tensor
from tapegrad.primitives.api import stop_gradient, where
from tapegrad.control_flow import trace
from tapegrad.control_flow.primitives import cond_p, make_subprogram
from tapegrad.util import nest


# -- public API ---------------------------------------------------------------------------------
def cond(pred, true_fn=None, false_fn=None, name=None):
    """``true_fn()`` if ``pred`` else ``false_fn()``, as ``tf.cond``.

    Eagerly, only the chosen branch runs. Inside ``tapegrad.function`` with a traced ``pred``
    both branches are traced into the graph (they must return the same structure, dtypes and
    shapes) and one of them runs at call time; the result is differentiable in forward and
    reverse mode. Under ``vmap`` with a per-example ``pred``, both run and are selected.

    >>> import tapegrad as tf
    >>> @tf.function
    ... def f(x):
    ...     return tf.cond(tf.reduce_sum(x) > 0, lambda: x * x, lambda: -x)
    >>> f(tf.constant([1.0, 2.0])).numpy().tolist(), f(tf.constant([-1.0])).numpy().tolist()
    ([1.0, 4.0], [1.0])
    """
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("tapegrad.cond: true_fn and false_fn must be callables taking no "
                        f"arguments, got {true_fn!r} and {false_fn!r}.")
    p = _predicate(pred, "cond")
    if not _has_no_value(p):
        return true_fn() if bool(p._value) else false_fn()
    if STATE.stack.tracers:
        return _staged_cond(p, true_fn, false_fn, ())
    t, f = true_fn(), false_fn()  # eager vmap: both branches, selected per example
    _same_types(t, f, "cond", "true_fn", "false_fn", shapes=False)
    return nest.pack_sequence_as(t, [where(p, a, b) for a, b in
                                     zip(_tensors(t), _tensors(f))])


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, maximum_iterations=None, name=None):
    """Repeat ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)``, as ``tf.while_loop``.

    ``loop_vars`` is a tensor or a (nested) list/tuple/dict of them; the result has its
    structure. At most ``maximum_iterations`` iterations run. Eagerly this is a Python loop;
    inside ``tapegrad.function`` it becomes one primitive (the body must keep every loop
    variable's dtype and shape). Forward and reverse mode differentiate it; in reverse mode
    inside a trace, ``maximum_iterations`` lets the states of the iterations be saved,
    without it each is recomputed from the first (time quadratic in the trip count). Under
    ``vmap`` the loop runs until every example's ``cond`` is false. A ``tf.Variable`` the
    body assigns is carried through the loop and assigned once it ends.

    >>> import tapegrad as tf
    >>> i, x = tf.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2.0), (0, 1.0))
    >>> int(i), float(x)
    (3, 8.0)
    """
    if not callable(cond) or not callable(body):
        raise TypeError(f"tapegrad.while_loop: cond and body must be callable, got {cond!r} "
                        f"and {body!r}.")
    n_max = _static_count(maximum_iterations)
    if not nest.flatten(loop_vars):
        raise ValueError("tapegrad.while_loop: loop_vars must hold at least one tensor.")
    if STATE.stack.tracers:
        out = _staged_while(cond, body, nest.map_structure(_as_tensor, loop_vars), n_max)
    else:
        # as TensorFlow eagerly: the body sees the values it made (a Python number stays
        # one: ``(i + 1, x + i)`` from ``(0, 0.0)``), and they become tensors at the end
        out = nest.map_structure(_as_tensor, _eager_while(cond, body, loop_vars, n_max))
    if not back_prop:
        out = nest.map_structure(stop_gradient, out)
    return out


def staged_cond(pred, true_fn, false_fn, *operands):
    """``cond`` that always builds the ``cond`` primitive, even eagerly (JAX's ``lax.cond``).

    The branches take ``operands`` explicitly. Useful to exercise the primitive's rules and to
    run a branch as generated NumPy code.

    >>> import tapegrad as tf
    >>> float(staged_cond(tf.constant(True), tf.sin, tf.cos, tf.constant(0.0)))
    0.0
    """
    return _staged_cond(_predicate(pred, "cond"), true_fn, false_fn,
                        tuple(_as_tensor(x) for x in operands))


def staged_while_loop(cond, body, loop_vars, maximum_iterations=None):
    """``while_loop`` that always builds the ``while_loop`` primitive, even eagerly.

    Eagerly the whole loop then runs as generated NumPy code, not op by op.

    >>> import tapegrad as tf
    >>> int(staged_while_loop(lambda i: i < 5, lambda i: i + 1, tf.constant(0)))
    5
    """
    state = nest.map_structure(_as_tensor, loop_vars)
    return _staged_while(cond, body, state, _static_count(maximum_iterations))


# -- conversions and checks ---------------------------------------------------------------------
def _as_tensor(x):
    if type(x) is Variable:
        return x.read_value()
    if isinstance(x, Tensor) or composite(x):
        return x
    return convert_to_tensor(x)


def composite(x):
    """An object a staged loop carries as tensors (a TensorArray): ``x._tg_components()``
    gives them, ``x._tg_rebuild(tensors)`` the object they stand for."""
    return hasattr(type(x), "_tg_components")


def components(tree):
    """The tensors of ``tree``'s leaves, a composite leaf giving its components."""
    out = []
    for x in nest.flatten(tree):
        x = _as_tensor(x)
        out += x._tg_components() if composite(x) else [x]
    return out


def rebuilt(tree, flat):
    """``tree`` with its leaves replaced by ``flat`` (as ``components`` made it)."""
    leaves, k = [], 0
    for x in nest.flatten(tree):
        if composite(x):
            n = len(x._tg_components())
            leaves.append(x._tg_rebuild(list(flat[k:k + n])))
            k += n
        else:
            leaves.append(flat[k])
            k += 1
    return nest.pack_sequence_as(tree, leaves)


def _tensors(tree):
    return [_as_tensor(x) for x in nest.flatten(tree)]


def _has_no_value(t):
    """Symbolic (traced) or batched (vmap) tensors have no single concrete value."""
    return getattr(t, "_symbolic", False)


def _predicate(pred, what):
    p = _as_tensor(pred)
    if p.dtype != np.bool_:
        raise TypeError(f"tapegrad.{what}: the predicate must be a boolean scalar, got "
                        f"dtype {p.dtype.name}.")
    if tuple(p.shape) != ():
        raise ValueError(f"tapegrad.{what}: the predicate must be a scalar, got shape "
                         f"{tuple(p.shape)}.")
    return p


def _static_count(n):
    if n is None:
        return None
    if isinstance(n, Tensor):
        if _has_no_value(n):
            raise TypeError("tapegrad.while_loop: maximum_iterations must be a Python int or a "
                            "concrete tensor; a traced value cannot bound the saved states.")
        n = n._value
    if not isinstance(n, (int, np.integer)) and not (
            isinstance(n, np.ndarray) and n.ndim == 0 and n.dtype.kind in "iu"):
        raise TypeError(f"tapegrad.while_loop: maximum_iterations must be an int, got {n!r}.")
    if int(n) < 0:
        raise ValueError(f"tapegrad.while_loop: maximum_iterations must be >= 0, got {int(n)}.")
    return int(n)


def _skeleton(tree):
    """The nesting of ``tree``; lists and tuples count as the same (as in TensorFlow)."""
    if isinstance(tree, dict):
        return {k: _skeleton(tree[k]) for k in sorted(tree)}
    if isinstance(tree, (list, tuple)):
        return [_skeleton(x) for x in tree]
    return "*"


def _same_types(a, b, what, na, nb, shapes=True):
    if _skeleton(a) != _skeleton(b):
        raise ValueError(f"tapegrad.{what}: {na} and {nb} must have the same nested structure;"
                         f" got {_skeleton(a)} and {_skeleton(b)}.")
    for k, (x, y) in enumerate(zip(_tensors(a), _tensors(b))):
        if x.dtype != y.dtype or (shapes and tuple(x.shape) != tuple(y.shape)):
            raise TypeError(
                f"tapegrad.{what}: value {k} is {x.dtype.name}{list(x.shape)} in {na} but "
                f"{y.dtype.name}{list(y.shape)} in {nb}; traced control flow needs the same "
                "dtype and shape (shapes are static).")


def _call(fn, state):
    """Call a loop function on the loop variables: spread a list/tuple, else pass it whole."""
    return fn(*state) if isinstance(state, (list, tuple)) else fn(state)


def _body_result(new, state, convert=True):
    if isinstance(state, (list, tuple)) and len(state) == 1 and not isinstance(
            new, (list, tuple)):
        new = [new]  # TensorFlow lets a one-variable body return a bare tensor
    elif not isinstance(state, (list, tuple)) and isinstance(new, (list, tuple)) \
            and len(new) == 1:
        new = new[0]
    if _skeleton(new) != _skeleton(state):
        raise ValueError(f"tapegrad.while_loop: body must return the structure of loop_vars "
                         f"{_skeleton(state)}, got {_skeleton(new)}.")
    # eagerly the values stay as the body made them (TensorFlow converts them at the end)
    return nest.pack_sequence_as(state, _tensors(new) if convert else nest.flatten(new))


# -- eager loops ----------------------------------------------------------------------------------
def _eager_while(cond, body, state, n_max):
    k = 0
    while n_max is None or k < n_max:
        p = _predicate(_call(cond, state), "while_loop")
        if not _has_no_value(p):
            if not bool(p._value):
                break
            state = _body_result(_call(body, state), state, convert=False)
        else:  # vmap: run until every example is done, keeping finished ones unchanged
            if not _any(p):
                break
            new = _body_result(_call(body, state), state)
            _same_types(new, state, "while_loop", "body's result", "loop_vars", shapes=False)
            state = nest.pack_sequence_as(state, [where(p, a, b) for a, b in
                                                  zip(_tensors(new), _tensors(state))])
        k += 1
    return state


def _any(p):
    """Is the predicate true for any example of any vmap level? (eager: values exist)"""
    v = p
    while v._level:
        v = v._val
    return bool(np.any(v._value))


# -- staged (traced) control flow -------------------------------------------------------------------
def _staged_cond(pred, true_fn, false_fn, operands):
    types = [(tuple(x.shape), x.dtype) for x in operands]
    tp, t_ext, t_tree, t_flat, t_set = trace.trace(true_fn, types, "true_fn", bundle=True,
                                                   updates=True)
    fp, f_ext, f_tree, _, f_set = trace.trace(false_fn, types, "false_fn", bundle=True,
                                              updates=True)
    _same_types(t_tree, f_tree, "cond", "true_fn", "false_fn")
    extras = trace.union(t_ext, f_ext)
    n = len(operands)
    tp, fp = trace.align(tp, n, t_ext, extras), trace.align(fp, n, f_ext, extras)
    args = [pred] + list(operands) + [trace.outer_value(e) for e in extras]
    groups = trace.dtype_groups([(tuple(t.shape), t.dtype) for t in t_flat])
    assigned = trace.union(t_set, f_set)
    if assigned:  # a variable either branch assigns: one more output each (else passed through)
        tp = trace.passing(tp, n, extras, t_set, assigned, len(groups))
        fp = trace.passing(fp, n, extras, f_set, assigned, len(groups))
    for k, v in enumerate(assigned):  # assigned after the cond, to the branch's value
        v.assign(cond_p.bind_raw(
            *args, true_branch=make_subprogram(trace.select(tp, [len(groups) + k])),
            false_branch=make_subprogram(trace.select(fp, [len(groups) + k]))))
    flat = [None] * len(t_flat)
    for g, idx in enumerate(groups):
        packed = cond_p.bind_raw(*args, true_branch=make_subprogram(trace.select(tp, [g])),
                                 false_branch=make_subprogram(trace.select(fp, [g])))
        for i, v in zip(idx, trace.unpack(packed, [(tuple(t_flat[i].shape), t_flat[i].dtype)
                                               for i in idx])):
            flat[i] = v
    return nest.pack_sequence_as(t_tree, flat)


def _staged_while(cond, body, state, n_max):
    init = components(state)
    types = [(tuple(x.shape), x.dtype) for x in init]

    def on_state(fn):
        return lambda *xs: fn(rebuilt(state, list(xs)))

    cprog, c_ext, c_tree, c_flat = trace.trace(on_state(lambda s: _call(cond, s)), types,
                                            "while_cond")
    if len(c_flat) != 1 or c_flat[0].dtype != np.bool_ or tuple(c_flat[0].shape) != ():
        raise TypeError("tapegrad.while_loop: cond must return a boolean scalar, got "
                        f"{[(t.dtype.name, tuple(t.shape)) for t in c_flat]}.")
    bprog, b_ext, b_flat, _, assigned = trace.trace(
        on_state(lambda s: components(_body_result(_call(body, s), s))), types, "while_body",
        updates=True)
    _same_types(b_flat, init, "while_loop", "body's result", "loop_vars")
    extras = trace.union(c_ext, b_ext)
    n = len(init)
    cprog, bprog = trace.align(cprog, n, c_ext, extras), trace.align(bprog, n, b_ext, extras)
    if assigned:  # variables the body assigns are loop variables too, assigned after the loop
        cprog, bprog, extras = trace.carried(cprog, bprog, n, extras, assigned)
        init = init + [v.read_value() for v in assigned]
    csub, bsub = make_subprogram(cprog), make_subprogram(bprog)
    finals = trace.run_loop(init, [trace.outer_value(e) for e in extras], csub, bsub, n_max)
    for v, value in zip(assigned, finals[n:]):
        v.assign(value)
    return rebuilt(state, finals[:n])
