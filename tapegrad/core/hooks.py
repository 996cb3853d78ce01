"""Hooks: every place where a lower layer calls into a higher one, in one list.

Layers import only downward (docs/ARCHITECTURE.md, "Layers"). Where a lower layer must
call a higher one, the higher one installs a function here when it is imported. Until
then each default is right, because what would need the higher layer cannot exist yet: no
symbolic size before ``trace/symbolic.py`` is imported; a gradient without the
compiled-derivative cache is interpreted, a Hessian without ``sparsity`` is dense.
(Interpreters need no hook: they are objects on the stack, core/state.py.)

>>> from tapegrad.core import hooks
>>> sorted(hooks.NAMES)  # doctest: +NORMALIZE_WHITESPACE
['batch_coupling', 'compiled_gradient', 'compiled_jacobian', 'complex_rules',
 'indexed_slices', 'recorded_gradient', 'sparse_hessian', 'sparse_jacobian', 'stack',
 'symbolic_sizes']
"""


class _NoSymbolicSizes:
    """No trace for all sizes exists before trace/symbolic.py is imported."""

    @staticmethod
    def ctx_of(value):
        raise AssertionError("a symbolic size without trace/symbolic.py")


# trace/symbolic.py: ``ctx_of(value)``, the trace for all sizes of a symbolic size (used
# by core/tensor.py's conversions)
symbolic_sizes = _NoSymbolicSizes

# ops/shape_ops.py: ``stack(tensors)``, for convert_to_tensor of a list holding tensors
stack = None

# compile/derivative_cache.py: compiled reverse passes of repeated tapes; each returns None
# where it has none, and the pass is interpreted (tape/backward.py, tape/gradient_tape.py)
compiled_gradient = None
compiled_jacobian = None
# compile/recorded_pass.py: the same for a gradient that outer tapes record (nested tapes):
# ``recorded_gradient(entries, n, target_cts, source_ids)`` (tape/backward.py)
recorded_gradient = None

# sparsity/api.py: ``sparse_hessian(f, argnums, sparse, chunk_size, dense)``, the compressed
# Hessian where it pays, else ``dense`` (transforms/functional.py: hessian)
sparse_hessian = None

# sparsity/traced.py: ``sparse_jacobian(path, target, source, reverse, chunk_size, batch)``:
# a traced tape Jacobian block with compressed directions, or None: use the dense basis
# (tape/jacobians.py: tape_jacobians; tape/batch_jacobian.py: tape_batch_jacobian)
sparse_jacobian = None

# sparsity/detect.py: ``batch_coupling(entries, source, target)``: whether examples of a
# batch_jacobian can depend on each other (True, False, or None: not known)
# (tape/jacobians.py)
batch_coupling = None

# primitives/complex.py: ``complex_rules(prim)`` gives a new primitive's derivative rules
# TensorFlow's complex convention, by the kind its block states (core/dispatch.py:
# Primitive; the primitives made before complex.py are adapted when it is imported)
complex_rules = None

# ops/indexed_slices.py: ``indexed_slices(parts, dense_shape)``, the ``tf.IndexedSlices``
# of the rows of row gathers' output cotangents at their indices (``parts``: one
# ``(cotangent, indices)`` pair per gather), concatenated: a gradient through row gathers
# (tape/sparse_rows.py); without it such gradients stay dense
indexed_slices = None

NAMES = frozenset(("symbolic_sizes", "stack", "compiled_gradient",
                   "compiled_jacobian", "recorded_gradient", "sparse_hessian", "sparse_jacobian",
                   "batch_coupling", "complex_rules", "indexed_slices"))


def install(**functions):
    """Install hooks by name (a higher layer, at its import)."""
    for name, f in functions.items():
        if name not in NAMES:
            raise ValueError(f"no hook named {name!r}; the hooks are {sorted(NAMES)}")
        globals()[name] = f
