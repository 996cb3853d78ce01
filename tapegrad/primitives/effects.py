"""The ``print`` primitive: ``tf.print`` inside a compiled program, and its formatting.

``print(token, *tensors; template, summarize, sep, end, stream)`` prints the values when it
runs and returns ``token + 1`` (int32). A program keeps it because the token is the new
value of a variable (``tf.print`` assigns it, ``ops/logging_ops.py``): updates are outputs,
so dead-code elimination keeps the equation, and each print takes the token the previous
one made, so prints run in the order of the source, also inside ``cond`` branches and loop
bodies, which carry the variable like any other. ``stateful``: two equal prints are two
prints (never merged). ``template`` is the structure of ``tf.print``'s arguments, with
``("t", k)`` where the k-th tensor goes. Text (the template's strings, ``sep``, ``end``) is
held as tuples of code points, so that a saved program (whose strings are identifiers only)
can hold it.
"""
import builtins
import sys

import numpy as np

from tapegrad.core.dispatch import Primitive
from tapegrad.primitives.params import fail

INT32 = np.dtype("int32")


def encode(value, tensors, is_tensor):
    """``value`` (tf.print's argument) as a hashable template; tensors appended to ``tensors``."""
    if is_tensor(value):
        tensors.append(value)
        return ("t", len(tensors) - 1)
    if isinstance(value, (list, tuple)):
        return ("l" if isinstance(value, list) else "u",
                tuple(encode(v, tensors, is_tensor) for v in value))
    if isinstance(value, dict):
        return ("d", tuple((codes(repr(k)), encode(v, tensors, is_tensor))
                           for k, v in value.items()))
    return ("s", codes(str(value)))


def codes(text):
    """``text`` as a tuple of code points (the form params hold text in)."""
    return tuple(ord(c) for c in text)


def text(points):
    return "".join(map(chr, points))


def render(template, arrays, summarize):
    """The text of one template item, as TensorFlow's tf.print writes it."""
    kind, body = template
    if kind == "t":
        a = np.asarray(arrays[body])
        if a.ndim == 0:
            return str(a.item())
        opts = {"separator": " "}
        if summarize is not None and summarize >= 0:
            opts.update(threshold=2 * summarize, edgeitems=summarize)
        else:
            opts.update(threshold=sys.maxsize)
        return np.array2string(a, **opts)
    if kind in ("l", "u"):
        parts = ", ".join(render(t, arrays, summarize) for t in body)
        return f"[{parts}]" if kind == "l" else f"({parts})"
    if kind == "d":
        return "{" + ", ".join(f"{text(k)}: {render(t, arrays, summarize)}"
                               for k, t in body) + "}"
    return text(body)


def stream_of(stream):
    """The file a stream param names: ``"stderr"`` / ``"stdout"`` (looked up when it
    prints, so redirections apply), or the object itself."""
    if stream == "stdout":
        return sys.stdout
    if stream == "stderr":
        return sys.stderr
    return stream


def write(template, arrays, summarize, sep, end, stream):
    """Print the rendered template (``sep`` and ``end`` as code points)."""
    builtins.print(text(sep).join(render(t, arrays, summarize) for t in template),
                   end=text(end), file=stream_of(stream))


def _print(token, *arrays, template, summarize, sep, end, stream):
    write(template, arrays, summarize, sep, end, stream)
    return np.asarray((int(token) + 1) & 0x7FFFFFFF, dtype=INT32)


def _validate(token, *xs, template, summarize, sep, end, stream):
    if tuple(token.shape) != () or np.dtype(token.dtype) != INT32:
        fail("print", "token", "must be an int32 scalar")
    if not (_is_text(sep) and _is_text(end)):
        fail("print", "sep", "sep and end must be tuples of code points")
    if summarize is not None and not isinstance(summarize, int):
        fail("print", "summarize", f"must be an int or None, got {summarize!r}")
    if isinstance(stream, str) and stream not in ("stdout", "stderr") or (
            not isinstance(stream, str) and not callable(getattr(stream, "write", None))):
        fail("print", "stream", f"must be 'stdout', 'stderr' or a file, got {stream!r}")
    _check_template(template, len(xs))


def _check_template(template, n):
    if not isinstance(template, tuple):
        fail("print", "template", f"{template!r} is not a tuple")
    for item in template:
        if not (isinstance(item, tuple) and len(item) == 2):
            fail("print", "template", f"{item!r} is not a (kind, value) pair")
        kind, body = item
        if kind == "t" and not (isinstance(body, int) and 0 <= body < n):
            fail("print", "template", f"tensor index {body!r} out of range")
        elif kind in ("l", "u"):
            _check_template(body, n)
        elif kind == "d":
            if not all(isinstance(p, tuple) and len(p) == 2 and _is_text(p[0]) for p in body):
                fail("print", "template", f"{body!r} is not a tuple of (key, item) pairs")
            _check_template(tuple(t for _, t in body), n)
        elif kind == "s" and not _is_text(body):
            fail("print", "template", f"{body!r} is not a tuple of code points")
        elif kind not in ("t", "l", "u", "d", "s"):
            fail("print", "template", f"unknown kind {kind!r}")


def _is_text(points):
    return isinstance(points, tuple) and all(
        isinstance(c, int) and not isinstance(c, bool) and 0 <= c < 0x110000 for c in points)


def _abstract(token, *xs, **params):
    _validate(token, *xs, **params)
    return (), INT32


def _loop_over_examples(args, batched, **params):
    """None: vmap prints once per example (the interpreter's loop)."""
    return None


print_p = Primitive(
    "print", _print, nin=None, nondiff=True, stateful=True, abstract=_abstract,
    validate=_validate, batch=_loop_over_examples,
    value_params=("template", "sep", "end", "summarize"),  # code points, any edge count
    emit="_print({args}, template={template}, summarize={summarize}, sep={sep}, end={end}, "
         "stream={stream})")

EMIT_HELPERS = {"_print": _print}
