"""``tf.sparse``: SparseTensor and the functions that densify, build and reorder it."""
from tapegrad.ops.sparse_ops import (SparseTensor, from_dense, reorder,  # noqa: F401
                                     sparse_dense_matmul, to_dense)
