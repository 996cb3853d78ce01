"""``map``, ``jacobian`` and ``batch_jacobian`` over Dask arrays chunked along the batch axis."""
import math
import warnings

import numpy as np

from tapegrad.dask.blocks import ProgramBlock


def _dask_array():
    try:
        import dask.array as da
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("tapegrad.dask needs Dask: pip install 'tapegrad[dask]' "
                          "(dask[array] and distributed)") from None
    return da


def _kind(program):
    from tapegrad.compile import ConcreteFunction, Function
    from tapegrad.saved.loaded import LoadedFunction
    if isinstance(program, Function):
        if program.input_signature is None:
            raise TypeError("tapegrad.dask: this tapegrad.function has no input_signature; "
                            "give it one (a None batch dimension lets every chunk length "
                            "run), or pass a ConcreteFunction or a loaded program")
        return "function"
    if isinstance(program, (ConcreteFunction, LoadedFunction)):
        return "fixed"
    raise TypeError(f"tapegrad.dask: expected a ConcreteFunction, a loaded program or a "
                    f"tapegrad.function with an input_signature, got {type(program).__name__}")


def _concrete_at(program, rows):
    """The fixed-size program that runs chunks of ``rows`` rows."""
    from tapegrad.compile import TensorSpec
    if _kind(program) == "fixed":
        return program
    specs = []
    for k, s in enumerate(program.input_signature):
        shape = tuple(s.shape)
        if not shape or any(d is None for d in shape[1:]):
            raise ValueError(f"tapegrad.dask: input {k}'s signature {list(shape)} must have "
                             f"known feature dimensions (only the batch axis may be None)")
        if shape[0] is not None and shape[0] != rows:
            raise ValueError(f"tapegrad.dask: input {k} is traced for batches of {shape[0]} "
                             f"rows, not {rows}")
        specs.append(TensorSpec((rows,) + shape[1:], s.dtype))
    return program.get_concrete_function(*specs)


def blockwise(program, rows):
    """The ``ProgramBlock`` (NumPy in, NumPy out) of ``program`` for chunks of ``rows``.

    ``rows``: the chunk lengths it must run (one for a fixed-size program). Every input and
    output of the program must carry the batch along axis 0. The block can be handed to
    ``dask.array.apply_gufunc`` or ``xarray.apply_ufunc(..., dask="parallelized")``.

    >>> import numpy as np, tapegrad as tf
    >>> f = tf.function(lambda x: tf.reduce_sum(x, axis=1),
    ...                 input_signature=[tf.TensorSpec([None, 2])])
    >>> blockwise(f, rows=(3,))(np.ones((3, 2), np.float32)).tolist()
    [2.0, 2.0, 2.0]
    """
    from tapegrad.saved.transport import dumps
    programs, features, outputs = {}, None, None
    for r in sorted({int(r) for r in rows}):
        cf = _concrete_at(program, r)
        prog = cf.program
        feats = [(v.shape[1:], v.dtype) for v in prog.inputs]
        outs = [(v.shape[1:], v.dtype) for v in prog.outputs]
        for what, vs in (("input", prog.inputs), ("output", prog.outputs)):
            for k, v in enumerate(vs):
                if not v.shape or v.shape[0] != r:
                    raise ValueError(
                        f"tapegrad.dask: {what} {k} of {prog.name} is {v!r}; every input and "
                        f"output must carry the batch of {r} rows along axis 0")
        if features is None:
            features, outputs = feats, outs
        elif (feats, outs) != (features, outputs):
            raise ValueError("tapegrad.dask: the program's feature shapes depend on the "
                             "batch size; it cannot be mapped over chunks")
        programs[r] = dumps(cf)  # raises here, before anything is sent, if it cannot be saved
    return ProgramBlock(programs, features, outputs, name=getattr(program, "__name__", None)
                        or program.program.name)


def _fixed_rows(program):
    rows = {v.shape[0] for v in program.program.inputs if v.shape}
    if len(rows) != 1:
        raise ValueError("tapegrad.dask: a fixed-size program's inputs must share one batch "
                         f"length along axis 0, found {sorted(rows)}")
    return rows.pop()


def map(program, *arrays, chunk_size=None, check_coupling=True):  # noqa: A001 - Dask's word
    """Evaluate a compiled program over arrays chunked along axis 0; lazily.

    ``program``: a ``ConcreteFunction``, a loaded program (both run chunks of exactly their
    traced batch length) or a ``tapegrad.function`` with an ``input_signature`` whose batch
    axis is None (any chunk length; one trace per distinct length). ``arrays``: Dask or
    NumPy arrays, one per program input, with the batch along axis 0. Returns a Dask array,
    or a tuple of them for several outputs, with the right ``chunks``, ``dtype`` and
    ``meta``. Programs travel to the workers as saved-format bytes and are compiled once
    per worker process.

    Chunk by chunk is right only for programs whose examples are independent: over more
    than one chunk, a program whose output rows can depend on other rows of its inputs (a
    mean over the batch, batch normalization in training, ``batch_jacobian`` of such a
    model) raises ``ValueError`` instead of giving numbers that depend on the chunking
    (found structurally; ``check_coupling=False`` skips the check, for a program you know
    to be per-example that the structural check cannot clear).

    >>> import numpy as np, dask.array as da, tapegrad as tf
    >>> f = tf.function(lambda x: x * x, input_signature=[tf.TensorSpec([None, 2])])
    >>> xs = da.ones((10, 2), chunks=(4, 2), dtype=np.float32)
    >>> y = map(f, xs)
    >>> y.chunks, float(y.sum().compute())
    (((4, 4, 2), (2,)), 20.0)
    """
    da = _dask_array()
    if not arrays:
        raise TypeError("tapegrad.dask.map: no arrays to map over")
    kind = _kind(program)
    fixed = _fixed_rows(program) if kind == "fixed" else None
    xs = [a if isinstance(a, da.Array) else da.from_array(np.asarray(a), chunks=-1)
          for a in arrays]
    n = xs[0].shape[0] if xs[0].ndim else None
    for k, a in enumerate(xs):
        if a.ndim == 0 or a.shape[0] != n:
            raise ValueError(f"tapegrad.dask.map: every array needs the same batch length "
                             f"along axis 0; array {k} has shape {a.shape}, array 0 {xs[0].shape}")
        if any(math.isnan(c) for c in a.chunks[0]):
            raise ValueError(f"tapegrad.dask.map: array {k} has unknown chunk sizes; call "
                             "compute_chunk_sizes() first")
    if fixed is not None:
        if chunk_size not in (None, fixed):
            raise ValueError(f"tapegrad.dask.map: this program runs batches of exactly "
                             f"{fixed} rows; chunk_size={chunk_size} cannot be used")
        if n % fixed:
            raise ValueError(
                f"tapegrad.dask.map: {n} rows do not split into batches of {fixed}, the "
                f"program's traced batch; use a tapegrad.function with a None batch "
                f"dimension in its input_signature to run chunks of any length")
        chunk_size = fixed
    axis0 = chunk_size or xs[0].chunks[0]  # an int: chunks of that length, the last shorter
    # Feature axes in one chunk each (the gufunc's core dimensions); the batch as asked.
    xs = [a.rechunk((axis0,) + (-1,) * (a.ndim - 1)) for a in xs]
    block = blockwise(program, rows=set(xs[0].chunks[0]))
    if check_coupling and len(xs[0].chunks[0]) > 1:
        _refuse_coupled(program, kind, min(xs[0].chunks[0]))
    for k, (a, (shape, dtype)) in enumerate(zip(xs, block.features)):
        if tuple(a.shape[1:]) != shape:
            raise ValueError(f"tapegrad.dask.map: array {k} has shape {a.shape}; the program "
                             f"expects (batch,) + {shape}")
        if a.dtype != dtype:
            raise TypeError(f"tapegrad.dask.map: array {k} is {a.dtype.name}; the program "
                            f"expects {dtype.name} (cast it with astype)")
    metas = tuple(np.empty((0,) * (1 + len(s)), d) for s, d in block.outputs)
    # The block (its program bytes, possibly megabytes of weights) is one key of the graph
    # that every task depends on: it travels to each worker once, not with every task.
    from dask import delayed
    program_key = delayed(block, pure=True, traverse=False)
    return da.apply_gufunc(tapegrad_program, block.signature, *xs, block=program_key,
                           output_sizes=block.output_sizes, allow_rechunk=False,
                           meta=metas[0] if len(metas) == 1 else metas)


def _refuse_coupled(program, kind, rows):
    """Raise if examples of ``program``'s batch can depend on each other (then its chunks
    would compute other numbers than the whole batch); warn if that cannot be decided."""
    from tapegrad.sparsity.detect import program_batch_coupled
    verdict = program_batch_coupled(_concrete_at(program, rows).program)
    if verdict is None and kind == "function" and rows > 2:
        # too large to decide at this size: the same function traced for 2 rows has the
        # same structure
        verdict = program_batch_coupled(_concrete_at(program, 2).program)
    name = getattr(program, "__name__", None) or program.program.name
    if verdict:
        raise ValueError(
            f"tapegrad.dask.map: {name} couples the examples of its batch (an output row can "
            f"depend on other rows of an input: a mean over the batch, batch normalization "
            f"in training, batch_jacobian of such a model), so chunk by chunk it would "
            f"compute other numbers than on the whole batch. Use one chunk along axis 0, "
            f"or a per-example program (tapegrad.dask.jacobian for per-example Jacobians)")
    if verdict is None:
        warnings.warn(f"tapegrad.dask.map: could not check that {name}'s examples are "
                      f"independent (its dependency structure is too large to follow); "
                      f"the chunks are correct only if they are", stacklevel=3)


def tapegrad_program(*chunks, block):
    """The task of one chunk: run ``block`` (a ``ProgramBlock``) on its arrays."""
    return block(*chunks)


def _input_signature(xs):
    from tapegrad.compile import TensorSpec
    return [TensorSpec([None] + list(xs.shape[1:]), np.dtype(xs.dtype))]


def batch_jacobian(f, xs, chunk_size=None, check_coupling=True):
    """``tape.batch_jacobian(f(x), x)`` over a Dask array of inputs, lazily.

    ``f`` maps a batch ``[b, ...]`` to outputs ``[b, ...]``; the result has shape
    ``[N, *out_features, *in_features]`` and is compiled once per chunk length. A model
    whose examples depend on each other (batch normalization in training) has no
    per-example Jacobian; over several chunks that is a ``ValueError`` (see ``map``).

    >>> import numpy as np, dask.array as da, tapegrad as tf
    >>> xs = da.from_array(np.arange(6, dtype=np.float32).reshape(3, 2), chunks=(2, 2))
    >>> batch_jacobian(lambda x: x ** 2, xs).compute()[2].tolist()
    [[8.0, 0.0], [0.0, 10.0]]
    """
    from tapegrad.compile import function
    from tapegrad.tape.gradient_tape import GradientTape

    @function(input_signature=_input_signature(xs))
    def batch_jacobian_program(x):
        with GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        return tape.batch_jacobian(y, x)

    return map(batch_jacobian_program, xs, chunk_size=chunk_size,
               check_coupling=check_coupling)


def jacobian(f, xs, chunk_size=None):
    """The Jacobian of ``f`` (one example in, one out) at every row of ``xs``, lazily.

    The result has shape ``[N, *out_shape, *in_shape]``: ``tf.vmap(tf.jacobian(f))``
    compiled once per chunk length and mapped over the chunks.

    >>> import numpy as np, dask.array as da, tapegrad as tf
    >>> xs = da.from_array(np.ones((4, 2), np.float32), chunks=(2, 2))
    >>> jacobian(lambda x: tf.reduce_sum(x * x), xs).compute().tolist()
    [[2.0, 2.0], [2.0, 2.0], [2.0, 2.0], [2.0, 2.0]]
    """
    from tapegrad.compile import function
    from tapegrad.transforms.functional import jacobian as jacobian_of
    from tapegrad.batching.vmap import vmap
    per_example = vmap(jacobian_of(f))

    @function(input_signature=_input_signature(xs))
    def jacobian_program(x):
        return per_example(x)

    return map(jacobian_program, xs, chunk_size=chunk_size)
