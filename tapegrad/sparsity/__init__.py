"""Sparse Jacobians and Hessians by structural sparsity detection and graph colouring.

A banded or otherwise sparse Hessian needs far fewer Hessian-vector products than ``n``:
columns that never meet in a row can share one tangent direction. This package

1. detects the structural pattern by running one small dependency rule per kind of
   primitive (the kind its block states, ``Primitive.sparsity``) over the recorded (or
   traced) computation (``dependencies``, ``detect``); primitives of no kind get a
   conservative "everything depends on everything", so the pattern never misses an entry;
2. colours it (``colouring``: distance-2 for Jacobians, star colouring for Hessians);
3. evaluates ``c`` directions in one vectorized forward(-over-reverse) pass and scatters the
   compressed result into the dense one (``compressed``).

``tapegrad.hessian`` uses this automatically for one tensor argument when the colouring
needs at most ``n / 4`` directions (``sparse=None``); ``sparse=True``/``False`` force it.
Inside ``tapegrad.function``, ``GradientTape.jacobian`` and ``batch_jacobian`` of one
source compress their basis the same way where it pays (``traced``), with the numbers of
the dense basis.

>>> import tapegrad as tf
>>> f = lambda x: tf.reduce_sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
>>> x = tf.constant([0.5] * 8, dtype=tf.float64)
>>> p = tf.sparsity.pattern(f, x)
>>> int(p.sum()), bool((tf.sparsity.hessian(f)(x).numpy() != 0).sum() <= p.sum())
(22, True)
"""
from tapegrad.sparsity.api import hessian, jacobian, pattern  # noqa: F401
from tapegrad.sparsity.colouring import (distance2_colouring, hessian_plan,  # noqa: F401
                                         jacobian_plan, star_colouring)
from tapegrad.sparsity.detect import program_pattern, tape_pattern  # noqa: F401
from tapegrad.sparsity import traced  # noqa: F401  (installs the traced tape Jacobian's hook)

__all__ = ["hessian", "jacobian", "pattern", "program_pattern", "tape_pattern",
           "distance2_colouring", "star_colouring", "hessian_plan", "jacobian_plan"]
