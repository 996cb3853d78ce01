"""The ``check`` primitive: ``tf.debugging``'s assertions inside a compiled program.

``check(token, ok, *data; message, summarize)`` raises TensorFlow's ``InvalidArgumentError``
when ``ok`` (a bool tensor) is not all true, with ``message`` and the first ``summarize``
elements of each data tensor, and returns ``token + 1`` (int32). Like ``print``
(primitives/effects.py) it advances the token variable, so a program keeps it and runs it in
the order of the source; ``stateful``: two equal checks are never merged. The message is held
as code points (a saved program's strings are identifiers only).
"""
import numpy as np

from tapegrad.core.dispatch import Primitive
from tapegrad.errors import InvalidArgumentError
from tapegrad.primitives.effects import INT32, _is_text, text
from tapegrad.primitives.params import fail


def failure_text(message, arrays, summarize):
    """``message`` then, for each array, its first ``summarize`` elements (as TensorFlow's
    assertions print their data)."""
    lines = [message] if message else []
    for a in arrays:
        a = np.asarray(a)
        flat = a.reshape(-1)[: (a.size if summarize is None or summarize < 0 else summarize)]
        lines.append(f"First {flat.size} elements of the tensor of shape {a.shape}: {flat}")
    return "\n".join(lines)


def _check(token, ok, *data, message, summarize):
    if not np.all(ok):
        raise InvalidArgumentError(failure_text(text(message), data, summarize))
    return np.asarray((int(token) + 1) & 0x7FFFFFFF, dtype=INT32)


def _validate(token, ok, *data, message, summarize):
    if tuple(token.shape) != () or np.dtype(token.dtype) != INT32:
        fail("check", "token", "must be an int32 scalar")
    if np.dtype(ok.dtype) != np.bool_:
        fail("check", "ok", "must be a bool tensor")
    if not _is_text(message):
        fail("check", "message", "must be a tuple of code points")
    if summarize is not None and not isinstance(summarize, int):
        fail("check", "summarize", f"must be an int or None, got {summarize!r}")


def _abstract(token, ok, *data, **params):
    _validate(token, ok, *data, **params)
    return (), INT32


check_p = Primitive(
    "check", _check, nin=None, nondiff=True, stateful=True, abstract=_abstract,
    validate=_validate, batch=lambda args, batched, **params: None,  # once per example
    value_params=("message", "summarize"),
    emit="_check({args}, message={message}, summarize={summarize})")

EMIT_HELPERS = {"_check": _check}
