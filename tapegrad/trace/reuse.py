"""Which dead buffer each equation of generated code writes its result into.

A NumPy call that allocates its result gets memory nobody touched for a while: on a step
whose temporaries outgrow the L2 cache (W9P's PINN step: ~190 arrays of 256 KB) every such
result is written to cold memory, and an elementwise multiply of 2,048 x 32 float32 takes
~19 us instead of the ~9 us it takes into a buffer that was just read. Generated code keeps
every temporary alive until it returns (they are locals), so nothing is ever hot again.

``plan`` therefore gives each equation's result, where it can, the buffer of a temporary
that has died, in this order:

1. an input that dies at this equation (an elementwise ufunc reads each element before it
   writes it: ``np.tanh(t1, t1)``);
2. otherwise the buffer that died most recently among those of the same shape and dtype
   (last in, first out: the hottest), for a ufunc (``np.multiply(a, b, t7)``) or a 2-D
   matmul (``np.matmul(a, b, out=t7)``, only into a buffer known to be C-contiguous: a
   BLAS call writes the same numbers there as into a new array; any other layout would
   send NumPy to its own loop).

A caller may also hand over inputs (``donated``: a used-up tape's arrays that nothing else
holds, ``compile/derivative_cache.py``): their buffers are free after their last use too.

A buffer is free once the last use of its value and of every view of it has run and it is
no output; only buffers that plain equations allocated are handed on (never a loop's block,
a fused chain's or a lane group's result), and a buffer handed on is free again only when
its new value dies. The numbers are those of the allocating form: the same ufunc loop or
the same BLAS call, into memory of the same shape, dtype and (for matmul) layout.
"""
from tapegrad.primitives import linalg
from tapegrad.primitives.shape import reshape_p, transpose_p
from tapegrad.trace.emit_forms import ufunc_of

MATMUL = "matmul"  # the kind of a planned matmul (a ufunc names its own kind)


def matmul_into_ok(e, made_by):
    """Whether a 2-D matmul can write into a dead buffer (``emit_forms.matmul_into``): two
    float matrices of one dtype, and not the transposed form ``(W @ g.T).T``, which copies
    its result into C order anyway."""
    if e.prim is not linalg.matmul_p or len(e.inputs) != 2:
        return False
    a, b = e.inputs
    if a.ndim != 2 or b.ndim != 2 or a.dtype != b.dtype or a.dtype.kind != "f":
        return False
    t = made_by.get(b.name)
    return not (t is not None and t.prim is transpose_p and t.inputs[0].ndim == 2
                and linalg.few_rows_large_matrix(a, b))


def plan(program, ren, plain, made_by, donated=()):
    """``{equation index: (kind, buffer name)}``: the equations that write into a dead buffer.

    ``program``: the equations in the order the code runs them; ``ren``: value -> name in
    the code; ``plain``: the indices emitted as one line each (not inside a loop, a fused
    chain or a lane group); ``made_by``: value name -> the equation making it (for the
    matmul forms). ``kind`` is the ufunc, or ``MATMUL``. ``donated``: names of inputs the
    caller hands over (C-contiguous arrays nothing else holds): their buffers are free
    after their last use, as a temporary's.
    """
    eqs = program.equations
    fresh_roots, roots, last = set(), {}, {}
    given = [v for v in program.inputs if v.name in donated and v.ndim]
    for v in given:
        roots[v.name] = (v.name,)
        fresh_roots.add(v.name)
    whole = {}  # a reshape of a fresh buffer (the whole of it) -> that buffer
    for i, e in enumerate(eqs):
        for v in e.inputs:
            for r in roots.get(v.name, ()):
                last[r] = i
        if e.prim.fresh or ufunc_of(e.prim) is not None:
            for v in e.outs:
                roots[v.name] = (v.name,)
                if v.ndim:
                    fresh_roots.add(v.name)
        else:  # a view or alias: it keeps every input's buffer alive
            rs = tuple({r for v in e.inputs for r in roots.get(v.name, ())})
            for v in e.outs:
                roots[v.name] = rs
            if e.prim is reshape_p and e.out.ndim:
                src = e.inputs[0].name
                root = src if src in fresh_roots else whole.get(src)
                if root is not None:
                    whole[e.out.name] = root
    for v in list(program.outputs) + [v for _, v in program.updates]:
        for r in roots.get(v.name, ()):
            last[r] = len(eqs)
    dies = {}
    for r, i in last.items():
        dies.setdefault(i, []).append(r)
    reuse = {}
    # root -> (layout, (shape, dtype)), for buffers plain code made (or the caller gave)
    owned = {v.name: ("C", (tuple(v.shape), v.dtype)) for v in given}
    handed = set()  # roots whose buffer a later value took over
    pool = {}     # (shape, dtype) -> free roots, the most recently dead last
    for i, e in enumerate(eqs):
        ufunc = ufunc_of(e.prim)
        kind = ufunc if ufunc is not None else \
            MATMUL if i in plain and matmul_into_ok(e, made_by) else None
        if kind is not None and len(e.outs) == 1 and not e.out.dtype.hasobject:
            out = e.out
            key = (tuple(out.shape), out.dtype)
            got = None
            if ufunc is not None:
                for v in e.inputs:
                    # a dead fresh buffer, or a reshape that covers all of one (a reshape of
                    # a contiguous array is a view of it; of any other, a copy: both are
                    # safe to fill)
                    root = v.name if v.name in fresh_roots else whole.get(v.name)
                    if root is not None and last.get(root) == i and \
                            (v.shape, v.dtype) == (out.shape, out.dtype):
                        got, name = root, v.name
                        break
            layout = _layout(e, kind, owned, made_by)
            if got is None and i in plain and out.ndim and layout != "F":
                # a C-contiguous result (every matmul's, most ufuncs') goes into a buffer of
                # that layout only: a matmul's numbers need it, a ufunc's speed does; one
                # that would follow a transposed input gets a new array, as before
                free = pool.get(key, ())
                for k in range(len(free) - 1, -1, -1):
                    if owned[free[k]][0] == "C" or (layout == "?" and owned[free[k]][0] == "?"):
                        got = name = free.pop(k)
                        break
            if got is not None:
                reuse[i] = (kind, ren[name])
                handed.add(got)
                if got in owned and i in plain:  # (a reshape of a contiguous buffer is one)
                    owned[out.name] = (owned[got][0], key)
            elif i in plain and out.ndim:
                owned[out.name] = (layout, key)
        elif i in plain and e.prim is linalg.matmul_p and len(e.outs) == 1 and e.out.ndim \
                and not e.out.dtype.hasobject:
            # the other forms (``(W @ g.T).T`` copied, batched) allocate a new C array too
            owned[e.out.name] = ("C", (tuple(e.out.shape), e.out.dtype))
        for r in dies.get(i, ()):
            if r in owned and r not in handed:
                pool.setdefault(owned[r][1], []).append(r)
    return reuse


def _layout(e, kind, owned, made_by):
    """The layout of the new array ``e``'s line would allocate: ``"C"`` where known to be
    C-contiguous (a matmul's always is; a ufunc's where its inputs of the result's shape are
    all C-contiguous buffers of plain code: NumPy's ``order='K'`` follows those), ``"F"``
    where one of those inputs is a transposed view (``order='K'`` follows that), else
    ``"?"`` (arguments, constants, other views: C-contiguous as a rule)."""
    if kind is MATMUL:
        return "C"
    full = [v for v in e.inputs if v.size == e.out.size and v.ndim == e.out.ndim]
    if any(_transposed(v, owned, made_by) for v in full):
        return "F"
    if full and all(v.name in owned and owned[v.name][0] == "C" for v in full):
        return "C"
    return "?"


def _transposed(v, owned, made_by):
    if v.name in owned:
        return owned[v.name][0] == "F"
    made = made_by.get(v.name)
    return made is not None and (made.prim is transpose_p or made.prim is linalg.matmul_p)
