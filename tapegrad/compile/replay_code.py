"""The replay check of one tape structure as straight-line Python, generated once.

``Replay.matches`` (``compile/replay.py``) asks whether a new tape is the remembered one
again. Its loop and its whole-tuple form walk the plan at run time: each pays per entry for
the walk itself (a zip, a length, a flattening of the arguments, a getter) besides the
comparisons. For one structure the plan is fixed, so the walk can be written out once: every
entry unpacked into locals, every argument compared with the very local it must be, every
param, target, source and derived value checked in place. The same decisions, in about
half the time of the whole-tuple form on a 12-entry tape (W7's MLP gradient: ~2.4 us
against ~5) and a third of the loop's on W1's 7 entries.

The code depends only on the wiring (per entry: the argument refs, whether it has params
and float params, how many targets, where the sources and derived values sit), so it is
compiled once per wiring (``factory``) and closed over each remembered tape's own objects
(its primitives, params, leaves held weakly with their kinds, target kinds, source ids) by
``make``, at the cost of a function call; nothing in the closure refers back to the
``Replay``, so a replaced one is freed at once (no reference cycle). The decisions are ``Replay``'s, check for check: the same tests
run all three forms on the same tapes (``tests/test_derivative_cache.py``, ``replay_check``).

>>> from tapegrad.compile import replay_code
>>> f = replay_code.factory(((-1,), (0, -1)), (0, 0), (1,), (-1,), ())
>>> callable(f)
True
"""
import threading

from tapegrad.core.tensor import Tensor
from tapegrad.primitives import memo
from tapegrad.util.keys import exact

MAX_FACTORIES = 256  # wirings whose code is kept at once (all forgotten past it)

_lock = threading.Lock()
_factories = {}


def _exact_items(params):
    return tuple((k, exact(v)) for k, v in params.items())


def factory(refs, kinds, targets, sources, derived):
    """The compiled ``make`` of one wiring (cached): ``refs`` per entry its argument refs
    (``k >= 0``: entry k's output, ``-1 - i``: leaf i); ``kinds`` per entry 0 (no params),
    1 (params), 2 (float params too: compared by their bits as well); ``targets``: the
    entry of each target, in the remembered order; ``sources``: ``(ref, ...)`` in the
    remembered order; ``derived``: ``((k, name, j), ...)``."""
    key = (refs, kinds, targets, sources, derived)
    make = _factories.get(key)
    if make is None:
        make = _compile(*key)
        with _lock:
            if len(_factories) >= MAX_FACTORIES:
                _factories.clear()
            _factories[key] = make
    return make


def _compile(refs, kinds, targets, sources, derived):
    n, n_targets = len(refs), len(targets)
    leaf = {}  # leaf number -> the local holding its first use
    out = [f"o{k}" for k in range(n)]
    body, checks = [], []
    # per entry: unpack (a wrong argument count raises ValueError: not the structure)
    for k, rs in enumerate(refs):
        names = []
        for j, r in enumerate(rs):
            name = f"a{k}_{j}"
            names.append(name)
            if r >= 0:
                checks.append(f"{name} is not {out[r]}")
            elif -1 - r in leaf:
                checks.append(f"{name} is not {leaf[-1 - r]}")  # one object per place
            else:
                leaf[-1 - r] = name
        body.append(f"({''.join(x + ', ' for x in names)}) = t{k}" if names
                    else f"() = t{k}")
    n_leaves = len(leaf)
    if sorted(leaf) != list(range(n_leaves)):
        raise ValueError("leaves are numbered by first use")
    lines = ["def make(P, Q, E, W, KT, S, KL):"]
    if n:
        lines.append(f"    {''.join(f'P{k}, ' for k in range(n))}= P")
    lines.append(f"    {''.join(f'Q{k}, ' for k in range(n))}= Q" if n else "    pass")
    lines.append(f"    {''.join(f'E{k}, ' for k in range(n))}= E" if n else "    pass")
    if n_leaves:
        lines.append(f"    {''.join(f'W{i}, ' for i in range(n_leaves))}= W")
    if n_targets:
        lines.append(f"    {''.join(f'K{i}, ' for i in range(n_targets))}= KT")
    if sources:
        lines.append(f"    {''.join(f'S{i}, ' for i in range(len(sources)))}= S")
    lines.append("    def match(entries, targets):")
    ind = "        "
    lines.append(ind + f"if len(entries) != {n}:")
    lines.append(ind + f"    entries = entries[:{n}]  # a persistent tape may hold more")
    lines.append(ind + "try:")
    lines.append(ind + f"    ({''.join(f'(p{k}, t{k}, q{k}, {out[k]}), ' for k in range(n))}) = entries")
    for b in body:
        lines.append(ind + "    " + b)
    if n_targets:
        lines.append(ind + f"    ({''.join(f'(i{i}, g{i}), ' for i in range(n_targets))}) = "
                     "targets.items()")
    lines.append(ind + "except (TypeError, ValueError):")
    lines.append(ind + "    return None")
    conds = [f"p{k} is not P{k}" for k in range(n)]
    conds += [f"{out[k]}.__class__ is not Tensor" for k in range(n)]
    for k, kind in enumerate(kinds):
        # dict equality, as the loop's; an empty plan's entry takes no params at all
        conds.append(f"q{k} != Q{k}" if kind else f"q{k}")
    conds += checks
    for i in range(0, len(conds), 8):
        lines.append(ind + "if " + " or ".join(conds[i:i + 8]) + ":")
        lines.append(ind + "    return None")
    for k, kind in enumerate(kinds):
        if kind == 2:  # dict equality says 0.0 == -0.0
            lines.append(ind + f"if _exact_items(q{k}) != E{k}:")
            lines.append(ind + "    return None")
    got = "(" + "".join(f"{leaf[i]}, " for i in range(n_leaves)) + ")"
    outs = "(" + "".join(f"{o}, " for o in out) + ")"
    if n_leaves:
        same = " or ".join(f"{leaf[i]} is not W{i}()" for i in range(n_leaves))
        lines.append(ind + f"if ({same}) and not new_leaves({got}, {outs}, W, KL):")
        lines.append(ind + "    return None")
    for i, k in enumerate(targets):  # the remembered order of targets, each at its entry
        lines.append(ind + f"if i{i} != id({out[k]}) or g{i}.__class__ is not Tensor "
                     f"or (g{i}._value.shape, g{i}._value.dtype) != K{i}:")
        lines.append(ind + "    return None")
    for i, r in enumerate(sources):  # the same ids, and in the same places
        lines.append(ind + f"if id({out[r] if r >= 0 else leaf[-1 - r]}) != S{i}:")
        lines.append(ind + "    return None")
    for k, name, j in derived:  # the pass reads these derived values off the tape
        lines.append(ind + f"if memo.derived_values({out[k]}).get({name!r}) is not {out[j]}:")
        lines.append(ind + "    return None")
    lines.append(ind + f"return {got}, {outs}")
    lines.append("    return match")
    source = "\n".join(lines) + "\n"
    from tapegrad.compile.replay import new_leaves  # (replay imports this module)
    space = {"Tensor": Tensor, "_exact_items": _exact_items, "memo": memo,
             "new_leaves": new_leaves}
    exec(compile(source, "<tapegrad replay check>", "exec"), space)  # noqa: S102
    make = space["make"]
    make.source = source
    return make
