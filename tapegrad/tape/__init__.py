"""Recorders: ``GradientTape`` (reverse mode), ``ForwardAccumulator`` (forward mode), the
reverse pass, custom gradients and the vectorized Jacobian pass."""
