"""Recorders: ``GradientTape`` (reverse mode) and ``ForwardAccumulator`` (forward mode)."""
