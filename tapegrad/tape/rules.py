"""Applying one primitive's derivative rules: shared by every reverse and forward pass."""
from tapegrad.primitives.registry import unbroadcast
from tapegrad.primitives.api import broadcast_to


def vjp_of(prim, args, params, out, g, wanted):
    """Cotangents of ``args`` (None where not wanted or zero), broadcasting undone."""
    rules = prim.vjp
    if rules is None:
        raise LookupError(f"gradient registry has no entry for: {prim.name}")
    if callable(rules):
        cts = rules(g, out, *args, **params)
        return [unbroadcast(c, a.shape) if w and c is not None else None
                for c, a, w in zip(cts, args, wanted)]
    cts = []
    for a, r, w in zip(args, rules, wanted):
        if w and r is not None:
            c = r(g, out, *args, **params)
            cts.append(None if c is None else unbroadcast(c, a.shape))
        else:
            cts.append(None)
    return cts


def jvp_of(prim, args, params, out, tangents):
    """The output tangent given input tangents (None means zero); None if it is zero."""
    rules = prim.jvp
    if rules is None:
        raise LookupError(f"No JVP rule registered for: {prim.name}")
    if callable(rules):
        t = rules(tangents, out, *args, **params)
    else:
        t = None
        for ti, r in zip(tangents, rules):
            if ti is None or r is None:
                continue
            c = r(ti, out, *args, **params)
            if c is not None:
                t = c if t is None else t + c
    if t is not None and tuple(t.shape) != tuple(out.shape):
        t = broadcast_to(t, out.shape)
    return t
