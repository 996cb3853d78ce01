"""``tf.autodiff``: ForwardAccumulator and GradientTape."""
from tapegrad.tape.forward_accumulator import ForwardAccumulator  # noqa: F401
from tapegrad.tape.gradient_tape import GradientTape  # noqa: F401
