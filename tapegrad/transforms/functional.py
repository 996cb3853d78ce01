"""Function transforms in JAX's style: ``grad``, ``vjp``, ``jvp``, ``jacrev``, ``hessian``...

Each transform runs the function under a ``GradientTape`` or a ``ForwardAccumulator`` and
differentiates with respect to the arguments in ``argnums``. Arguments may be nested
structures (tuples, lists, dicts) of tensors, NumPy arrays or Python numbers; NumPy arrays
keep their dtype. Results are tensors, in the structure of the arguments (and, for
Jacobians, of the outputs). Because every transform is itself made of recorded operations,
they compose: ``grad(grad(f))``, ``jacfwd(jacrev(f))``, ``vmap(grad(f))``, ``grad(vmap(f))``.

Each differentiated leaf is first copied with a recorded identity, so that an argument that
is also captured by ``f`` (or passed twice) is differentiated only through this argument, as
in JAX, while tapes outside still see the connection.
"""
import functools

import numpy as np

from tapegrad import ops
from tapegrad.core import hooks
from tapegrad.core.tensor import Tensor, convert_to_tensor
from tapegrad.tape.forward_accumulator import ForwardAccumulator
from tapegrad.tape.gradient_tape import GradientTape
from tapegrad.tape import jacobians
from tapegrad.util import nest

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev",
           "jacobian", "hessian", "hvp"]


# -- arguments -------------------------------------------------------------------------------------
def _argnums(argnums, nargs, name):
    """Normalised argnums (a tuple of non-negative ints) and whether one int was given."""
    single = not isinstance(argnums, (tuple, list))
    nums = (argnums,) if single else tuple(argnums)
    if not nums:
        raise ValueError(f"{name}: argnums must name at least one argument.")
    out = []
    for a in nums:
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)):
            raise TypeError(f"{name}: argnums must be an int or a tuple of ints, got "
                            f"{argnums!r}.")
        if not -nargs <= a < nargs:
            raise ValueError(f"{name}: argnums {argnums!r} is out of range for a call with "
                             f"{nargs} positional argument(s).")
        out.append(int(a) % nargs)
    return tuple(out), single


def _leaf(x, name):
    """A fresh, floating tensor for one differentiated leaf."""
    fresh = not isinstance(x, Tensor)
    if fresh:
        if x is None:
            raise TypeError(f"{name}: cannot differentiate with respect to None.")
        x = convert_to_tensor(x)
    if x.dtype.kind not in "fc":
        raise TypeError(f"{name} requires real- or complex-valued inputs (a floating dtype), "
                        f"but got {x.dtype.name}. Cast integer inputs to a float dtype.")
    return x if fresh else ops.identity(x)


def _diff_args(args, nums, name):
    """Copy the differentiated arguments; returns (new args, their trees, flat leaves)."""
    args = list(args)
    trees = []
    for i in nums:
        args[i] = nest.map_structure(lambda x: _leaf(x, name), args[i])
        trees.append(args[i])
    return args, trees, nest.flatten(trees)


def _record(f, args, kwargs, nums, name):
    """Run ``f`` under a fresh tape that watches copies of the differentiated arguments;
    returns (tape, output, trees of the differentiated arguments, their flat leaves)."""
    with GradientTape(watch_accessed_variables=False) as tape:
        args, trees, leaves = _diff_args(args, nums, name)
        tape.watch(leaves)
        out = f(*args, **kwargs)
    return tape, out, trees, leaves


def _split_aux(out, has_aux, name):
    if not has_aux:
        return out, None
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(f"{name} with has_aux=True requires the function to return a pair "
                        f"(output, aux), got {type(out).__name__}.")
    return out[0], out[1]


def _as_tensor(y):
    return y if isinstance(y, Tensor) else convert_to_tensor(y)


def _pack(trees, flat, single):
    """Results for the differentiated arguments: one tree, or a tuple of trees."""
    packed = nest.pack_sequence_as(trees, flat)
    return packed[0] if single else tuple(packed)


def _zeros(shape, dtype):
    return ops.zeros(tuple(shape), dtype=dtype)


# -- reverse mode -------------------------------------------------------------------------------------
def value_and_grad(f, argnums=0, has_aux=False):
    """``f`` and its gradient, as ``jax.value_and_grad``: returns ``(value, grad)``.

    ``f`` must return a floating scalar (or ``(scalar, aux)`` with ``has_aux``, and then the
    result is ``((value, aux), grad)``). The gradient has the structure of the argument, or
    a tuple of them when ``argnums`` is a tuple; unconnected arguments get zeros.

    >>> import tapegrad as tf
    >>> v, g = tf.value_and_grad(lambda x: tf.reduce_sum(x ** 2))(tf.constant([1.0, 2.0]))
    >>> float(v), g.numpy().tolist()
    (5.0, [2.0, 4.0])
    """
    @functools.wraps(f)
    def value_and_grad_f(*args, **kwargs):
        nums, single = _argnums(argnums, len(args), "grad")
        tape, out, trees, leaves = _record(f, args, kwargs, nums, "grad")
        y, aux = _split_aux(out, has_aux, "grad")
        y = _as_tensor(y)
        if y.ndim != 0:
            raise TypeError(f"Gradient only defined for scalar-output functions. Output had "
                            f"shape: {tuple(y.shape)}.")
        if y.dtype.kind not in "fc":
            raise TypeError(f"grad requires real-valued outputs (a floating dtype), but got "
                            f"{y.dtype.name}.")
        g = tape.gradient(y, leaves, unconnected_gradients="zero")
        g = _pack(trees, g, single)
        return ((y, aux), g) if has_aux else (y, g)

    return value_and_grad_f


def grad(f, argnums=0, has_aux=False):
    """The gradient of a scalar function, as ``jax.grad``.

    >>> import tapegrad as tf
    >>> tf.grad(lambda x: x ** 3)(tf.constant(2.0)).numpy()
    array(12., dtype=float32)
    >>> float(tf.grad(tf.grad(lambda x: x ** 3))(tf.constant(2.0)))
    12.0
    """
    vg = value_and_grad(f, argnums, has_aux)

    @functools.wraps(f)
    def grad_f(*args, **kwargs):
        (y, g) = vg(*args, **kwargs)
        return (g, y[1]) if has_aux else g

    return grad_f


def vjp(f, *primals, has_aux=False):
    """``(f(*primals), vjp_fn)``, as ``jax.vjp``; ``vjp_fn(ct)`` pulls a cotangent back.

    ``ct`` has the structure of the output; ``vjp_fn`` returns a tuple with one cotangent
    per primal (zeros where unconnected) and may be called many times. With ``has_aux`` the
    result is ``(out, vjp_fn, aux)``.

    >>> import tapegrad as tf
    >>> y, pullback = tf.vjp(lambda x: x * x, tf.constant([1.0, 3.0]))
    >>> pullback(tf.constant([1.0, 1.0]))[0].numpy().tolist()
    [2.0, 6.0]
    """
    nums = tuple(range(len(primals)))
    tape, out, trees, leaves = _record(f, primals, {}, nums, "vjp")
    out, aux = _split_aux(out, has_aux, "vjp")
    entries = tape._entries
    outs = [_as_tensor(y) for y in nest.flatten(out)]
    state = {}

    def vjp_fn(ct):
        cts = nest.flatten(ct)
        if len(cts) != len(outs):
            raise ValueError(f"vjp: the cotangent has {len(cts)} leaves but the output has "
                             f"{len(outs)}; they must have the same structure.")
        target_cts = {}
        for y, c in zip(outs, cts):
            if y.dtype.kind not in "fc" or c is None:
                continue
            c = ops.convert_to_tensor(c, dtype=y.dtype) if not isinstance(c, Tensor) else c
            if tuple(c.shape) != tuple(y.shape):
                raise ValueError(f"Shape of cotangent input to vjp pullback function "
                                 f"{tuple(c.shape)} must be the same as the shape of the "
                                 f"corresponding output {tuple(y.shape)}.")
            target_cts[id(y)] = c if id(y) not in target_cts else target_cts[id(y)] + c
        if "path" not in state:
            state["path"] = jacobians._Path(entries, {id(s) for s in leaves},
                                            {id(y) for y in outs})
        res = state["path"].backward(target_cts, {id(s) for s in leaves})
        flat = [res.get(id(s)) if res.get(id(s)) is not None else _zeros(s.shape, s.dtype)
                for s in leaves]
        return tuple(nest.pack_sequence_as(trees, flat))

    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


# -- forward mode ----------------------------------------------------------------------------------------
def _tangent_leaves(primal_leaves, tangents, name):
    ts = nest.flatten(tangents)
    if len(ts) != len(primal_leaves):
        raise ValueError(f"{name}: primals and tangents must have the same structure; got "
                         f"{len(primal_leaves)} primal leaves and {len(ts)} tangent leaves.")
    out = []
    for p, t in zip(primal_leaves, ts):
        t = ops.convert_to_tensor(t, dtype=p.dtype) if not isinstance(t, Tensor) else t
        if tuple(t.shape) != tuple(p.shape):
            raise ValueError(f"{name} called with different primal and tangent shapes; got "
                             f"primal shape {tuple(p.shape)} and tangent shape "
                             f"{tuple(t.shape)}.")
        out.append(t if t.dtype == p.dtype else ops.cast(t, p.dtype))
    return out


def _check_tuple(x, what, name):
    if not isinstance(x, (tuple, list)):
        raise TypeError(f"{what} arguments to {name} must be tuples or lists; found "
                        f"{type(x).__name__}.")


def jvp(f, primals, tangents, has_aux=False):
    """``(f(*primals), J @ tangents)``, as ``jax.jvp``; one forward pass, no tape.

    ``primals`` and ``tangents`` are tuples (one entry per argument) of the same structure.

    >>> import tapegrad as tf
    >>> y, t = tf.jvp(lambda x: x * x, (tf.constant(3.0),), (tf.constant(1.0),))
    >>> float(y), float(t)
    (9.0, 6.0)
    """
    _check_tuple(primals, "primal", "jvp")
    _check_tuple(tangents, "tangent", "jvp")
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: {len(primals)} primals but {len(tangents)} tangents.")
    args, trees, leaves = _diff_args(primals, tuple(range(len(primals))), "jvp")
    ts = _tangent_leaves(leaves, list(tangents), "jvp")
    with ForwardAccumulator(leaves, ts) as acc:
        out = f(*args)
    out, aux = _split_aux(out, has_aux, "jvp")
    outs = [_as_tensor(y) for y in nest.flatten(out)]
    tan = [acc.jvp(y, unconnected_gradients="zero") for y in outs]
    res = (nest.pack_sequence_as(out, outs), nest.pack_sequence_as(out, tan))
    return res + (aux,) if has_aux else res


def linearize(f, *primals):
    """``(f(*primals), f_jvp)``, as ``jax.linearize``: ``f_jvp(*tangents)`` is the JVP.

    ``f`` runs once; each ``f_jvp`` call replays only the derivative rules of the recorded
    operations, so it is cheaper than calling ``jvp`` again.

    >>> import tapegrad as tf
    >>> y, f_jvp = tf.linearize(tf.sin, tf.constant(0.0))
    >>> float(f_jvp(tf.constant(2.0)))
    2.0
    """
    nums = tuple(range(len(primals)))
    tape, out, trees, leaves = _record(f, primals, {}, nums, "linearize")
    outs = [_as_tensor(y) for y in nest.flatten(out)]
    path = jacobians._Path(tape._entries, {id(s) for s in leaves}, {id(y) for y in outs})

    def f_jvp(*tangents):
        if len(tangents) != len(primals):
            raise ValueError(f"linearize: f_jvp takes {len(primals)} tangent(s), got "
                             f"{len(tangents)}.")
        ts = _tangent_leaves(leaves, list(tangents), "linearize")
        path._frees = None
        tans = path.forward({id(s): t for s, t in zip(leaves, ts)}, {id(y) for y in outs})
        for s, t in zip(leaves, ts):  # an output that is an input
            tans.setdefault(id(s), t)
        res = [tans.get(id(y)) if tans.get(id(y)) is not None else _zeros(y.shape, y.dtype)
               for y in outs]
        return nest.pack_sequence_as(out, res)

    return out, f_jvp


# -- Jacobians ---------------------------------------------------------------------------------------------
def jacobian(f, argnums=0, mode="auto", chunk_size=None, has_aux=False):
    """The Jacobian of ``f``, computed in the cheaper mode: ``out.shape + arg.shape`` blocks.

    ``mode='auto'`` uses forward mode when the arguments have fewer elements than the
    outputs, else reverse mode; 'forward' and 'reverse' force one. All rows are computed in
    one vectorized pass, in chunks of ``chunk_size`` rows (default: as many as fit
    ``tapegrad.config.memory_budget()``). Nested outputs give nested results: each output
    leaf is replaced by the argument's structure (a tuple of them for tuple ``argnums``).

    >>> import tapegrad as tf
    >>> tf.jacobian(lambda x: x * x)(tf.constant([1.0, 2.0])).numpy().tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    mode = jacobians.check_mode(mode)
    chunk_size = jacobians.check_chunk_size(chunk_size)

    @functools.wraps(f)
    def jac_f(*args, **kwargs):
        nums, single = _argnums(argnums, len(args), "jacobian")
        tape, out, trees, leaves = _record(f, args, kwargs, nums, "jacobian")
        out, aux = _split_aux(out, has_aux, "jacobian")
        outs = [_as_tensor(y) for y in nest.flatten(out)]
        blocks = jacobians.tape_jacobians(tape._entries, outs, leaves, mode=mode,
                                          chunk_size=chunk_size)
        res = []
        for y, row in zip(outs, blocks):
            row = [b if b is not None else _zeros(tuple(y.shape) + tuple(s.shape), s.dtype)
                   for b, s in zip(row, leaves)]
            res.append(_pack(trees, row, single))
        res = nest.pack_sequence_as(out, res) if nest.is_nested(out) else res[0]
        return (res, aux) if has_aux else res

    return jac_f


def jacrev(f, argnums=0, has_aux=False, chunk_size=None):
    """The Jacobian of ``f`` in reverse mode (one vectorized backward pass), as ``jax.jacrev``.

    >>> import tapegrad as tf
    >>> tf.jacrev(lambda x: tf.sin(x))(tf.constant([0.0])).numpy().tolist()
    [[1.0]]
    """
    return jacobian(f, argnums, "reverse", chunk_size, has_aux)


def jacfwd(f, argnums=0, has_aux=False, chunk_size=None):
    """The Jacobian of ``f`` in forward mode (one vectorized JVP pass), as ``jax.jacfwd``.

    >>> import tapegrad as tf
    >>> tf.jacfwd(lambda x: tf.sin(x))(tf.constant([0.0])).numpy().tolist()
    [[1.0]]
    """
    return jacobian(f, argnums, "forward", chunk_size, has_aux)


def hessian(f, argnums=0, has_aux=False, chunk_size=None, sparse=None):
    """The Hessian of ``f``, forward-over-reverse (``jacfwd(jacrev(f))``), as ``jax.hessian``.

    For a scalar ``f`` of an argument of shape ``s`` the result has shape ``s + s``; the
    forward pass runs all directions at once, chunked like ``jacobian``.

    ``sparse``: for one tensor argument, ``None`` (auto) detects the Hessian's sparsity
    pattern (once per structure) and, when a colouring needs at most ``n / 4`` directions,
    evaluates only those (``tapegrad.sparsity.hessian``); ``True`` always does; ``False``
    never does. The values are the same either way on the pattern (a star-coloured plan reads
    some entries from their mirror image, which can differ in the last bit); off it the
    compressed Hessian holds exact zeros where the dense pass's IEEE arithmetic may leave NaN
    or -0.0 (``0 * inf`` of a non-finite input).

    >>> import tapegrad as tf
    >>> tf.hessian(lambda x: tf.reduce_sum(x ** 3))(tf.constant([1.0, 2.0])).numpy().tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    dense = jacobian(jacrev(f, argnums, has_aux), argnums, "forward", chunk_size, has_aux)
    # -- sparsity (tapegrad/sparsity): compressed Hessians for one plain tensor argument --
    if sparse is False or has_aux or hooks.sparse_hessian is None:
        return dense
    return hooks.sparse_hessian(f, argnums, sparse=sparse, chunk_size=chunk_size, _dense=dense)


def hvp(f, primals, tangents):
    """The Hessian-vector product ``jvp(grad(f), primals, tangents)[1]``, forward-over-reverse.

    The Hessian is never built: one gradient computation with a forward-mode tangent.

    >>> import tapegrad as tf
    >>> v = tf.constant([1.0, 2.0])
    >>> tf.hvp(lambda x: tf.reduce_sum(x ** 3), (v,), (tf.constant([1.0, 0.0]),)).numpy().tolist()
    [6.0, 0.0]
    """
    return jvp(grad(f), primals, tangents)[1]
