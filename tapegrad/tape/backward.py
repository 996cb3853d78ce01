"""The reverse pass over a tape's records: cotangents of the sources given the targets'.

``backward`` walks the entries ``(primitive, inputs, params, output)`` from last to first and
calls each primitive's VJP rules: it is the one place that applies them (undoing
broadcasting, summing the cotangents of a tensor used twice). It is shared by ``GradientTape``, the vectorized Jacobians
(with a batched cotangent: rows of the identity) and the functional API. A first-order pass that nothing records runs
the rules on NumPy arrays, and a tape structure seen before runs as generated code
(``derivative_cache``).
"""
import numpy as np

from tapegrad.core import hooks
from tapegrad.core.state import STATE
from tapegrad.core.tensor import Tensor
from tapegrad.primitives.families import summed_axes, unbroadcast
from tapegrad.primitives.reductions import reduce_sum_p

_sum_impl = reduce_sum_p.impl


def reachable_from(entries, ids):
    """Ids of every tensor that depends on one of ``ids`` through ``entries``."""
    live = set(ids)
    for _prim, args, _params, out in entries:
        for a in args:
            if id(a) in live:
                live.add(id(out))
                break
    return live


def backward(entries, target_cts, source_ids, live=None, consumed=False):
    """Reverse pass: cotangents of ``source_ids`` given the targets' cotangents
    ``target_cts`` (id -> tensor: ``output_gradients``, ones by default).

    ``live``: the ids that depend on a source (computed from ``entries`` if not given).
    When nothing records the pass (first order, no outer tape, no tracing), the rules get
    NumPy arrays instead of tensors: the operators in them are then plain NumPy calls, and
    the primitive layer's functions (``api.cos``) accept arrays too. That halves the cost of a first-order gradient;
    the result is identical. ``consumed``: nothing reads ``entries`` after this pass (a
    used-up tape's): a compiled pass may overwrite the arrays only they hold.
    """
    n = len(entries)  # a persistent tape appends while we walk; those entries are not ours
    st = STATE.stack
    idle = st.idle
    if live is None and n:
        if idle:
            if hooks.compiled_gradient is not None:
                # a structure differentiated before: its reverse pass as generated NumPy
                # code (the cache takes plain tensors only, so it checks what _all_concrete
                # would)
                cts = hooks.compiled_gradient(entries, n, target_cts, source_ids, consumed)
                if cts is not None:
                    return cts
        elif st.recording_only and hooks.recorded_gradient is not None:
            # the same under outer tapes, which are shown every operation of the pass
            cts = hooks.recorded_gradient(entries, n, target_cts, source_ids)
            if cts is not None:
                return cts
    raw = idle and _all_concrete(entries, n, target_cts)
    if live is None:
        live = reachable_from(entries, source_ids)  # before any rule runs: n entries
    cts = {k: g._value for k, g in target_cts.items()} if raw else dict(target_cts)
    get = cts.get
    debroadcast = _unbroadcast_array if raw else unbroadcast
    # reversed() walks from the last of the n entries down: what a persistent tape appends
    # meanwhile lies beyond its start
    for prim, args, params, out in reversed(entries):
        key = id(out)
        g = get(key)
        if g is None:
            continue
        if key not in source_ids:
            del cts[key]
        rules = prim.vjp
        if type(rules) is tuple:
            # the common case, inlined: one rule per input, only for inputs that need it
            xs = None
            for i, r in enumerate(rules):
                ia = id(args[i])
                if r is None or ia not in live:
                    continue
                if xs is None:
                    xs, ans = ([x._value for x in args], out._value) if raw else (args, out)
                c = r(g, ans, *xs, **params) if params else r(g, ans, *xs)
                if c is None:
                    continue
                if raw and isinstance(c, Tensor):
                    c = c._value
                shape = xs[i].shape if raw else xs[i]._raw_shape
                if (c.shape if raw else c._raw_shape) != shape:
                    c = debroadcast(c, shape)
                prev = get(ia)
                cts[ia] = c if prev is None else prev + c
            continue
        # one rule for the whole operation (on tensors), or none
        wanted = [id(a) in live for a in args]
        if not any(wanted):
            continue
        if rules is None:
            raise LookupError(f"gradient registry has no entry for: {prim.name}")
        for a, c, w in zip(args, rules(Tensor._wrap(g) if raw else g, out, *args, **params),
                           wanted):
            if c is not None and w:
                c = unbroadcast(c, a.shape)
                if raw:
                    c = c._value
                prev = get(id(a))
                cts[id(a)] = c if prev is None else prev + c
    if raw:
        wrap = Tensor._wrap
        return {k: wrap(cts[k]) for k in source_ids if k in cts}
    return {k: cts[k] for k in source_ids if k in cts}


def _all_concrete(entries, n, target_cts):
    for g in target_cts.values():
        if type(g) is not Tensor:
            return False
    for k in range(n):
        e = entries[k]
        if getattr(e[3], "_symbolic", False):
            return False
        for a in e[1]:
            if getattr(a, "_symbolic", False):
                return False
    return True


def _unbroadcast_array(c, shape):
    axes = summed_axes(np.shape(c), shape)
    if axes:
        # the primitive's own sum (BLAS row sums where it takes them, not np.sum's pairwise
        # order): so this NumPy-only pass gives the recorded and the compiled passes' bits
        c = _sum_impl(c, axis=tuple(axes), keepdims=False)
    return np.reshape(c, shape)
