"""Applying one primitive's JVP rules: shared by every forward pass (the VJP rules are
applied by the reverse pass, ``tape/backward.py``)."""
from tapegrad.primitives.api import broadcast_to


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
