"""One eager update for many small variables: the rule runs once on their concatenation.

An optimizer's rule is a dozen NumPy operations per variable. On a model's small variables
(biases, narrow kernels) each operation costs its ~0.7 us dispatch and almost nothing else,
so a 3-layer MLP's Adam step is ~70 calls of overhead. The rules are elementwise (each
element's update reads only that element of the gradient, the variable and the slots), so
running one rule on the flat concatenation of several variables gives every element the
same float operations on the same operands: bitwise the same values, in ~12 calls.

The state stays flat between steps: after an update each variable's (and slot's) value is a
view into the step's new flat array (a new array every step, never written in place, so
earlier snapshots stay valid). The next step uses that flat array directly when every value
is still the view it left; anything assigned in between (``assign``, ``set_weights``, a
compiled step) is gathered again. Only the gradients are concatenated per step.

Cost model: a variable joins when it has at most ``FUSE_MAX_SIZE`` elements; larger ones
are updated alone, where the copy of their gradient would cost more than the calls saved.
A group needs two variables or more of one dtype.
"""
import numpy as np

FUSE_MAX_SIZE = 4096  # elements (16 KB of float32): measured, a 64x64 kernel still pays


class _Flat:
    """The flat state of one group: per kind (the variables, then each slot kind), the
    holders and the flat array their values were last made views of."""

    __slots__ = ("holders", "bounds", "shapes", "last")

    def __init__(self, variables, slots):
        self.holders = [list(variables)] + [list(kind) for kind in zip(*slots)]
        ends = np.cumsum([v._value.size for v in variables]).tolist()
        self.bounds = [slice(a, b) for a, b in zip([0] + ends[:-1], ends)]
        self.shapes = [None if v._value.ndim == 1 else v._value.shape for v in variables]
        self.last = [None] * len(self.holders)

    def current(self, kind):
        """The flat value of ``kind``, without a copy where nothing was assigned since."""
        holders, last = self.holders[kind], self.last[kind]
        if last is not None:
            flat, views = last
            for h, view in zip(holders, views):
                if h._value is not view:
                    break
            else:
                return flat
        return np.concatenate([h._value.ravel() for h in holders])

    def store(self, kind, flat, dtype):
        if flat.dtype != dtype:
            flat = flat.astype(dtype)
        # a 1-D variable's slice has its shape already (biases): no reshape
        views = [flat[q] if s is None else flat[q].reshape(s)
                 for q, s in zip(self.bounds, self.shapes)]
        for h, view in zip(self.holders[kind], views):
            h._value = view
        self.last[kind] = (flat, views)


def apply(opt, xp, grads, variables, constants_of):
    """Update the small variables of ``variables`` in groups; returns the pairs left for
    the per-variable rule. ``grads``: NumPy arrays; ``constants_of(dtype)``: the step's
    scalars for that dtype."""
    groups, rest_g, rest_v = {}, [], []
    for g, v in zip(grads, variables):
        val = v._value
        if val.size <= FUSE_MAX_SIZE and type(g) is np.ndarray and g.shape == val.shape:
            groups.setdefault(val.dtype, []).append((g, v))
        else:
            rest_g.append(g)
            rest_v.append(v)
    cache = opt.__dict__.setdefault("_fused_groups", {})
    for dtype, pairs in groups.items():
        if len(pairs) < 2:
            rest_g += [g for g, _ in pairs]
            rest_v += [v for _, v in pairs]
            continue
        vs = [v for _, v in pairs]
        key = tuple(id(v) for v in vs)
        flat = cache.get(key)
        if flat is None:
            if len(cache) >= 8:  # variables applied in changing subsets: keep a few
                cache.clear()
            flat = cache[key] = _Flat(vs, [opt._var_slots[id(v)] for v in vs])
        # ravel: reshape(-1)'s view (or copy, where not contiguous) at ~0.3 us less a call
        g = np.concatenate([xp.cast(g, dtype).ravel() for g, _ in pairs])
        new_v, new_slots = opt._rule(xp, g, flat.current(0),
                                     [flat.current(k) for k in range(1, len(flat.holders))],
                                     constants_of(dtype))
        for k, value in enumerate(new_slots, 1):
            flat.store(k, value, dtype)
        flat.store(0, new_v, dtype)
    return rest_g, rest_v
