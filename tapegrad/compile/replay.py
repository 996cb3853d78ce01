"""The replay check of the compiled derivative passes: is this tape the last one again?

A training loop's tapes differ from step to step only in their intermediate tensors: the
primitives, params and wiring are the same, and so are most leaves (variables, the data,
cached constants): the same objects. So instead of building and hashing the structure key
(``tape/structure.py``, ~0.4 us per entry), ``Replay.matches`` compares the new tape with the
last one that ran a compiled gradient (``compile/derivative_cache.py``), by identity.

Each argument is either the output of the entry the key names, or a leaf in the key's place.
A leaf is the very object the key was made with (held weakly; a leaf's shape and dtype cannot
change), or a new Tensor or Variable of the same shape and dtype that is nothing else on the
tape: no other leaf, and no entry's output (the key numbers leaves by first use and records
only their shapes and dtypes, so the key is then the same; an output in a leaf's place is
another structure, whose cotangent would flow on through the entry that made it). Anything
else falls back to the key.

The comparisons run as whole-tuple operations (the primitives, params, argument counts and
output types of all entries at once; every argument that names an earlier output in one
identity ``map``), not as a Python loop over the arguments: ~0.55x the instructions per
entry, but ~2x the fixed cost, so tapes of fewer than ``SHORT`` entries take the loop.

>>> import tapegrad as tf
>>> from tapegrad.compile import derivative_cache
>>> x = tf.constant([1.0, 2.0])
>>> def step():
...     with tf.GradientTape() as g:
...         g.watch(x)
...         y = tf.reduce_sum(tf.sin(x) * x)
...     return g.gradient(y, x)
>>> derivative_cache.clear()
>>> _ = [step() for _ in range(4)]  # noted, keyed, compiled (and remembered), replayed
>>> derivative_cache.replay_hits()
1
"""
import itertools
import operator
import weakref

from tapegrad.compile import replay_code
from tapegrad.core.tensor import Tensor, Variable
from tapegrad.primitives import memo
from tapegrad.util.keys import FLOAT_TYPES, exact

_is = operator.is_
_call = operator.call  # a weak reference's referent, in map()
_flat = itertools.chain.from_iterable
repeat = itertools.repeat
_CONCRETE = (Tensor, Variable)
SHORT = 9  # entries from which whole-tuple comparisons cost less than a loop (measured)
GENERATED_MAX = 256  # entries up to which a structure's check is generated code (its size)


def getter(positions):
    """``seq -> tuple(seq[p] for p in positions)`` at C speed (``itemgetter`` gives a bare item
    for one position, and fails for none)."""
    if not positions:
        return lambda seq: ()
    if len(positions) == 1:
        p = positions[0]
        return lambda seq: (seq[p],)
    return operator.itemgetter(*positions)


def _exact_items(params):
    return tuple((k, exact(v)) for k, v in params.items())


class Replay:
    """The last tape whose gradient ran the compiled pass ``compiled`` (see the module).

    ``key``: its structure key; ``entries[:n]``: its entries; ``leaves``: its leaves, in the
    key's order; ``targets``: ``{id: cotangent Tensor}``; ``sources``: ``[(ref, id)]`` in the
    key's order.
    """

    __slots__ = ("compiled", "sources", "derived", "prims", "params", "exact_params", "nargs",
                 "out_types", "plan", "inner", "inner_refs", "first", "again", "again_leaf",
                 "leaf_refs", "leaf_types", "targets", "source_ids", "refs", "fast")

    def __init__(self, compiled, key, entries, n, leaves, targets, sources):
        self.compiled, self.sources = compiled, sources
        self.derived = next((p[1] for p in key if p[0] == "derived"), ())
        self.prims = tuple(entries[k][0] for k in range(n))
        self.params = tuple(entries[k][2] for k in range(n))
        # dict equality says 0.0 == -0.0: entries with float params compare exact keys too
        self.exact_params = tuple(
            (k, _exact_items(p)) for k, p in enumerate(self.params)
            if p and not FLOAT_TYPES.isdisjoint(map(type, p.values())))
        refs = self.refs = tuple(key[k][1] for k in range(n))
        self.fast = None  # the generated check (replay_code.py), made at the first match
        self.plan = tuple(zip(self.prims, refs, self.params))
        self.nargs = tuple(map(len, refs))
        self.out_types = (Tensor,) * n
        flat = list(_flat(refs))
        inner = [p for p, r in enumerate(flat) if r >= 0]
        self.inner, self.inner_refs = getter(inner), getter([flat[p] for p in inner])
        first, again, again_leaf, seen = [], [], [], set()
        for p, r in enumerate(flat):
            if r < 0:
                if r in seen:
                    again.append(p)
                    again_leaf.append(-1 - r)
                else:
                    seen.add(r)
                    first.append(p)  # leaves are numbered by first use: in this order
        self.first = getter(first)
        # None: every leaf is used once (the common case, no check to make)
        self.again = getter(again) if again else None
        self.again_leaf = getter(again_leaf)
        self.leaf_refs = [weakref.ref(a) for a in leaves]
        self.leaf_types = [(a._value.shape, a._value.dtype) for a in leaves]
        self.targets = [(next(k for k in range(n) if id(entries[k][3]) == sid),
                         (g._value.shape, g._value.dtype)) for sid, g in targets.items()]
        self.source_ids = {sid for _, sid in sources}

    def matches(self, entries, n, targets, source_ids):
        """``(leaves, outputs)``: this tape's leaves, in the key's order, and its entries'
        outputs, if its key is the remembered one's; else None."""
        if source_ids != self.source_ids or len(targets) != len(self.targets) \
                or n != len(self.prims):
            return None
        fast = self.fast
        if fast is not None:
            return fast(entries, targets)
        found = self._tuples(entries, n, targets) if n >= SHORT else self._loop(
            entries, targets)
        if found is not None and n <= GENERATED_MAX:
            # the structure repeats: from now on its check runs as generated code
            self.fast = self._generated()
        return found

    def _generated(self):
        """This tape's check as straight-line code (``replay_code.py``)."""
        floats = {k for k, _ in self.exact_params}
        kinds = tuple(2 if k in floats else 1 if p else 0 for k, p in enumerate(self.params))
        make = replay_code.factory(self.refs, kinds, tuple(k for k, _ in self.targets),
                                   tuple(r for r, _ in self.sources), self.derived)
        return make(self.prims, self.params, tuple(
            dict(self.exact_params).get(k) for k in range(len(self.prims))),
            tuple(self.leaf_refs), tuple(kind for _, kind in self.targets),
            tuple(sid for _, sid in self.sources), tuple(self.leaf_types))

    def _loop(self, entries, targets):
        """``matches`` by one loop over the entries, for short tapes."""
        # one loop over the entries, each check where its argument is: fewer fixed costs
        refs_, kinds = self.leaf_refs, self.leaf_types
        outs, got = [], [None] * len(refs_)
        placed = set()  # ids of the leaves placed so far: a leaf fills one place only
        # plan has n entries: zip stops there (a persistent tape may hold more)
        for (prim, args, params, out), (pprim, refs, pparams) in zip(entries, self.plan):
            if prim is not pprim or type(out) is not Tensor or len(args) != len(refs) \
                    or (params != pparams if params or pparams else False):
                return None
            for a, r in zip(args, refs):
                if r >= 0:
                    if a is not outs[r]:
                        return None
                    continue
                i = -1 - r
                g = got[i]
                if g is not None:
                    if g is not a:
                        return None  # one leaf's place holds two objects
                    continue
                if id(a) in placed:
                    return None
                if a is not refs_[i]():
                    v = getattr(a, "_value", None)
                    if type(a) not in _CONCRETE or (v.shape, v.dtype) != kinds[i] \
                            or any(map(_is, outs, repeat(a))):  # an output: another structure
                        return None
                got[i] = a
                placed.add(id(a))
            outs.append(out)
        return self._ends(entries, targets, got, outs)

    def _tuples(self, entries, n, targets):
        """``matches`` by whole-tuple comparisons, for tapes of ``SHORT`` entries or more."""
        # a persistent tape may hold more than the n entries asked about
        prims, args, params, outs = zip(*(entries if len(entries) == n else entries[:n]))
        if prims != self.prims or params != self.params or tuple(map(len, args)) != self.nargs \
                or tuple(map(type, outs)) != self.out_types:
            return None
        flat = tuple(_flat(args))
        if not all(map(_is, self.inner(flat), self.inner_refs(outs))):
            return None
        got = self.first(flat)
        if self.again is not None and not all(map(_is, self.again(flat), self.again_leaf(got))):
            return None  # one leaf's place holds two objects
        if not all(map(_is, got, map(_call, self.leaf_refs))) and not self._new_leaves(
                got, outs):
            return None
        return self._ends(entries, targets, got, outs)

    def _ends(self, entries, targets, got, outs):
        """The checks after the wiring: float params, targets, sources, derived values."""
        if self.exact_params and any(_exact_items(entries[k][2]) != items
                                     for k, items in self.exact_params):
            return None
        for (sid, g), (k, kind) in zip(targets.items(), self.targets):
            if id(outs[k]) != sid or type(g) is not Tensor \
                    or (g._value.shape, g._value.dtype) != kind:
                return None
        for r, sid in self.sources:  # the same ids, and in the same places
            if (id(outs[r]) if r >= 0 else id(got[-1 - r])) != sid:
                return None
        for k, name, j in self.derived:  # the pass reads these derived values off the tape
            if memo.derived_values(outs[k]).get(name) is not outs[j]:
                return None
        return got, outs

    def _new_leaves(self, got, outs):
        return new_leaves(got, outs, self.leaf_refs, self.leaf_types)


def new_leaves(got, outs, leaf_refs, leaf_types):
    """Whether leaves that are not the remembered objects (``leaf_refs``, weak) may stand in
    their places: concrete, of the same shape and dtype (``leaf_types``), in no other leaf's
    place, and no output of this tape."""
    ids = made = None
    for a, r, kind in zip(got, leaf_refs, leaf_types):
        if a is r():
            continue
        if type(a) not in _CONCRETE:
            return False
        v = a._value
        # a tuple compares the (singleton) dtype by identity first: dtype != dtype alone
        # asks NumPy's casting machinery, ~10x the cost
        if (v.shape, v.dtype) != kind:
            return False
        if made is None:
            ids, made = list(map(id, got)), set(map(id, outs))
        if id(a) in made or ids.count(id(a)) != 1:
            return False
    return True
