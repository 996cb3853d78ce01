"""``tf.autograph``: Python control flow on tensors inside ``tapegrad.function``.

``tapegrad.function`` converts the Python function it traces (``autograph=True``, the
default): ``if``/``while``/``for`` whose predicate or range is a symbolic tensor become
``cond``/``while_loop`` primitives, as TensorFlow's AutoGraph does; control flow on Python
values (and on tensors whose values are known while tracing) stays Python, so a function
that does not branch on symbolic tensors traces to the same program as without conversion.

- ``analysis.py``: names a block assigns, which jumps it holds;
- ``jumps.py``: ``return``/``break``/``continue`` lowered to flags;
- ``transformer.py``: statements and expressions rewritten into ``operators`` calls;
- ``conversion.py``: source to converted function (cached per code object);
- ``operators.py`` / ``staging.py``: what converted code calls at trace time.

>>> import tapegrad as tf
>>> @tf.function
... def collatz(n):
...     steps = 0
...     while n > 1:
...         n = n // 2 if n % 2 == 0 else 3 * n + 1
...         steps += 1
...     return steps
>>> int(collatz(tf.constant(27)))
111
"""
import types

from tapegrad.autograph import conversion


def convert(fn):
    """``fn`` with its control flow converted (itself when it cannot be converted)."""
    return conversion.convert(fn, requested=True)


def traced_function(function):
    """What ``tapegrad.function`` object ``function`` traces: its Python function, converted
    unless ``autograph=False`` (converted once, kept on the object)."""
    fn = function.__dict__.get("_ag_function")
    if fn is None:
        fn = function.python_function
        if getattr(function, "autograph", True):
            fn = conversion.convert(fn, requested=True)
        function._ag_function = fn
    return fn


def to_graph(entity, recursive=True, experimental_optional_features=None):
    """The converted Python function of ``entity`` (``tf.autograph.to_graph``).

    >>> import tapegrad as tf
    >>> def f(x):
    ...     return x if x > 0 else -x
    >>> g = tf.autograph.to_graph(f)
    >>> float(g(tf.constant(-2.0)))
    2.0
    """
    fn = getattr(entity, "python_function", entity)
    if not isinstance(fn, (types.FunctionType, types.MethodType)):
        raise TypeError(f"to_graph expects a Python function or method, got {entity!r}")
    return conversion.convert(fn, requested=True)


def to_code(entity, recursive=True, experimental_optional_features=None):
    """The source of the converted function (``tf.autograph.to_code``).

    >>> import tapegrad as tf
    >>> def f(x):
    ...     if x > 0:
    ...         x = x * 2.0
    ...     return x
    >>> "ag__.if_stmt" in tf.autograph.to_code(f)
    True
    """
    return conversion.source(getattr(entity, "python_function", entity))


def do_not_convert(func=None):
    """Mark ``func`` so that tapegrad.function and converted callers run it as it is.

    >>> import tapegrad as tf
    >>> @tf.autograph.experimental.do_not_convert
    ... def f(x):
    ...     return x
    >>> tf.autograph.to_graph(f) is f
    True
    """
    if func is None:
        return do_not_convert
    target = getattr(func, "__func__", func)
    try:
        target.__ag_do_not_convert__ = True
    except (AttributeError, TypeError):
        pass
    return func


def set_loop_options(parallel_iterations=None, swap_memory=None, maximum_iterations=None,
                     shape_invariants=None):
    """Options of the loop whose body starts with this call (``maximum_iterations`` bounds
    a staged loop, which reverse mode inside a trace needs). The converter reads the call
    where it stands; run as a function it does nothing, as in TensorFlow."""


class experimental:  # noqa: N801  (TensorFlow's namespace tf.autograph.experimental)
    do_not_convert = staticmethod(do_not_convert)
    set_loop_options = staticmethod(set_loop_options)


__all__ = ["convert", "do_not_convert", "experimental", "set_loop_options", "to_code",
           "to_graph"]
