"""``ProgramBlock``: the NumPy-in, NumPy-out function that runs on each chunk.

It holds compiled programs as saved-format bytes (one per chunk size it was built for) and
their hashes, nothing else. On a worker, each program is loaded, validated and compiled
once per process (``tapegrad.saved.transport.load_cached``); later chunks reuse it. Pickled,
it is its bytes; tokenized (``dask.base.tokenize``), it is their hashes, so the same program
gives the same Dask keys in every session.
"""
import re

import numpy as np

from tapegrad.core.tensor import Tensor
from tapegrad.saved.transport import load_cached, token
from tapegrad.util import nest


class ProgramBlock:
    """Run a compiled program on NumPy chunks whose leading axis is the batch.

    ``programs``: ``{rows: bytes}``, the saved program for each chunk length;
    ``features``: per input, ``(shape[1:], dtype)``; ``outputs``: per output,
    ``(shape[1:], dtype)`` (the same for every chunk length). Calls return one array, or a
    tuple with one array per output. Usable directly with ``dask.array.apply_gufunc`` and
    ``xarray.apply_ufunc(..., dask="parallelized")`` (see ``signature``).

    >>> import numpy as np, tapegrad as tf
    >>> from tapegrad.dask import blockwise
    >>> f = tf.function(lambda x: 2.0 * x, input_signature=[tf.TensorSpec([None, 3])])
    >>> block = blockwise(f, rows=(2,))
    >>> block(np.ones((2, 3), np.float32)).tolist()
    [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]
    >>> block.signature
    '(i0_0)->(o0_0)'
    """

    def __init__(self, programs, features, outputs, name="program"):
        self.programs = {int(r): bytes(b) for r, b in programs.items()}
        self.digests = {r: token(b) for r, b in self.programs.items()}
        self.features = tuple((tuple(s), np.dtype(d)) for s, d in features)
        self.outputs = tuple((tuple(s), np.dtype(d)) for s, d in outputs)
        self.name = name
        # Dask names its tasks after __name__ and splits keys at "-": an identifier only
        self.__name__ = "tapegrad_" + re.sub(r"\W", "_", str(name))

    # -- what Dask needs to know --------------------------------------------------------------
    @property
    def signature(self):
        """The generalized-ufunc signature: the feature axes of every input and output."""
        ins = ",".join("(" + ",".join(f"i{k}_{a}" for a in range(len(s))) + ")"
                       for k, (s, _) in enumerate(self.features))
        outs = ",".join("(" + ",".join(f"o{k}_{a}" for a in range(len(s))) + ")"
                        for k, (s, _) in enumerate(self.outputs))
        return f"{ins}->{outs}"

    @property
    def output_sizes(self):
        return {f"o{k}_{a}": n for k, (s, _) in enumerate(self.outputs)
                for a, n in enumerate(s)}

    @property
    def output_dtypes(self):
        dts = [d for _, d in self.outputs]
        return dts[0] if len(dts) == 1 else tuple(dts)

    def __dask_tokenize__(self):
        return ("tapegrad-block", tuple(sorted(self.digests.items())))

    def __reduce__(self):  # data only: the bytes and the declared shapes
        return ProgramBlock, (self.programs, self.features, self.outputs, self.name)

    def __repr__(self):
        return f"<ProgramBlock {self.name} rows={sorted(self.programs)} {self.signature}>"

    # -- running one chunk --------------------------------------------------------------------
    def __call__(self, *chunks):
        if len(chunks) != len(self.features):
            raise TypeError(f"{self.name}: takes {len(self.features)} arrays, got "
                            f"{len(chunks)}")
        chunks = [np.asarray(c) for c in chunks]
        rows = self._check(chunks)
        fn = load_cached(self.programs[rows], self.digests[rows])
        kept = chunks + _kept_arrays(fn)
        out = [_fresh(t._value if isinstance(t, Tensor) else np.asarray(t), kept)
               for t in nest.flatten(fn(*chunks))]
        return out[0] if len(out) == 1 else tuple(out)

    def _check(self, chunks):
        rows = {c.shape[0] if c.ndim else None for c in chunks}
        for k, (c, (shape, dtype)) in enumerate(zip(chunks, self.features)):
            if c.ndim == 0 or tuple(c.shape[1:]) != shape:
                raise ValueError(
                    f"{self.name}: input {k} has a chunk of shape {tuple(c.shape)}; expected "
                    f"(batch,) + {shape}, with the batch along axis 0")
            if c.dtype != dtype:
                raise TypeError(f"{self.name}: input {k} is {c.dtype.name}, expected "
                                f"{dtype.name}")
        if len(rows) != 1:
            raise ValueError(f"{self.name}: the inputs' chunks have different lengths "
                             f"{sorted(rows)}")
        (n,) = rows
        if n not in self.programs:
            raise ValueError(f"{self.name}: no program for a chunk of {n} rows (built for "
                             f"{sorted(self.programs)}); rechunk the batch axis")
        return n


def _kept_arrays(fn):
    """The arrays a loaded program holds on to: its constants and its variables' values."""
    consts = getattr(fn, "_dask_constants", None)
    if consts is None:
        consts = fn._dask_constants = [np.asarray(c.value) for c in fn.program.constants]
    return consts + [v._value for v in fn.variables]


def _fresh(a, kept):
    """``a`` itself when it is new memory (a program's outputs are new arrays each call), a
    copy when it may share memory with an input chunk, a constant or a variable: a task's
    result is then never a view into something that later tasks read or change. Copying
    only then saves a pass over every result (megabytes per chunk of Jacobians)."""
    a = np.asarray(a)
    if any(np.may_share_memory(a, k) for k in kept):
        return a.copy()
    return a
