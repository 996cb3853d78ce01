"""Compiled tapegrad programs over Dask arrays, on one machine or a cluster.

``map(program, *arrays)`` evaluates a compiled program (a ``ConcreteFunction``, a loaded
program, or a ``tapegrad.function`` with an ``input_signature``) over Dask arrays chunked
along the batch axis and returns lazy Dask arrays; ``jacobian`` and ``batch_jacobian`` do
the README's workflow, the Jacobian at many, many inputs. Programs travel to the workers as
their saved-format bytes (data, validated on load, never code) and are compiled once per
worker.

>>> import numpy as np, dask.array as da, tapegrad as tf
>>> import tapegrad.dask as tgd
>>> w = tf.Variable(np.full((3, 2), 0.5, np.float32))
>>> xs = da.ones((1000, 3), chunks=(250, 3), dtype=np.float32)
>>> J = tgd.batch_jacobian(lambda x: tf.tanh(x @ w), xs)     # lazy: [1000, 2, 3]
>>> J.shape, J.chunks[0]
((1000, 2, 3), (250, 250, 250, 250))
>>> bool(np.allclose(J[:2].compute(), J[-2:].compute()))
True

On a cluster: ``distributed.Client("tcp://scheduler:8786")``, then the same code; see the
README's "Scale out" section. Needs the ``dask`` extra (``dask[array]`` and ``distributed``).
"""
from tapegrad.dask.blocks import ProgramBlock  # noqa: F401
from tapegrad.dask.mapping import batch_jacobian, blockwise, jacobian, map  # noqa: F401

__all__ = ["ProgramBlock", "batch_jacobian", "blockwise", "jacobian", "map"]
