"""Error types, named as in ``tf.errors``. Each subclasses the matching Python error."""


class InvalidArgumentError(ValueError):
    """An operation got arguments it cannot work with (a shape mismatch, say)."""


class OutOfRangeError(IndexError):
    """An index is out of range."""


class UnimplementedError(NotImplementedError):
    """An operation is not implemented for these arguments."""


class NotFoundError(LookupError):
    """No kernel (or entity) exists for the request, e.g. a scatter max of booleans."""


class FailedPreconditionError(RuntimeError):
    """The state an operation needs is not ready (a lookup table with no vocabulary yet)."""
