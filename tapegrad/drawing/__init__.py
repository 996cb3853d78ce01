"""Pictures of derivative programs: ``tapegrad.draw(obj, path=None, format=None)``.

Draws a ``GradientTape`` (what it recorded), a ``ConcreteFunction``, a loaded program or an
IR ``Program``: nodes are primitives labelled with their output shapes and dtypes; the
user's operations are yellow, derivative code (emitted by a gradient, a Jacobian or forward
mode while tracing) red, control-flow sub-programs dashed clusters. It always returns the
Graphviz DOT text; with ``path`` it also writes ``.dot``, or ``.svg``/``.png``/``.pdf``
through the ``graphviz`` package when Graphviz's ``dot`` program is installed (Debian:
``apt install graphviz``). Without ``dot``, SVG comes from a pure-Python layered layout.
Programs of thousands of equations are summarised by user line.

>>> import tapegrad as tf
>>> f = tf.function(lambda x: tf.sin(x) * 2.0)
>>> dot = tf.draw(f.get_concrete_function(tf.constant([1.0, 2.0])))
>>> dot.splitlines()[0], "sin" in dot
('digraph "fn_lambda" {', True)
"""
import os
import shutil

from tapegrad.drawing.graph import Graph, from_program, from_tape, summarise  # noqa: F401
from tapegrad.drawing.render import to_dot, to_svg

FORMATS = ("dot", "svg", "png", "pdf")


def graph(obj, max_nodes=300):
    """The ``Graph`` model of ``obj`` (see ``draw``)."""
    from tapegrad.compile.concrete import ConcreteFunction
    from tapegrad.ir.core import Program
    from tapegrad.saved.loaded import LoadedFunction
    from tapegrad.tape.gradient_tape import GradientTape
    if isinstance(obj, GradientTape):
        if obj._entries is None:
            raise ValueError("draw: this non-persistent tape was already used by gradient(); "
                             "its records are gone (use persistent=True to draw it after)")
        return from_tape(obj, max_nodes)
    if isinstance(obj, ConcreteFunction):
        return from_program(obj.program, max_nodes)
    if isinstance(obj, LoadedFunction):
        return from_program(obj.program, max_nodes)
    if isinstance(obj, Program):
        return from_program(obj, max_nodes)
    if hasattr(obj, "get_concrete_function") and getattr(obj, "input_signature", None):
        return from_program(obj.get_concrete_function().program, max_nodes)
    raise TypeError(f"draw: expected a GradientTape, a ConcreteFunction, a loaded program or "
                    f"an IR Program, got {type(obj).__name__}")


def draw(obj, path=None, format=None, max_nodes=300):  # noqa: A002 - graphviz's word
    """Draw ``obj``; return its DOT text, and write ``path`` if given.

    ``format``: one of ``'dot'``, ``'svg'``, ``'png'``, ``'pdf'`` (default: the suffix of
    ``path``). ``max_nodes``: more operations than this are summarised.
    """
    g = graph(obj, max_nodes)
    dot = to_dot(g)
    if path is None and format is None:
        return dot
    fmt = (format or os.path.splitext(os.fspath(path))[1].lstrip(".") or "dot").lower()
    if fmt not in FORMATS:
        raise ValueError(f"draw: unknown format {fmt!r}; supported formats: "
                         f"{', '.join(FORMATS)}")
    if path is None:
        raise ValueError("draw: a format without a path; give path= to write a file")
    data = render(g, dot, fmt)
    with open(path, "wb") as f:
        f.write(data)
    return dot


def has_dot():
    """Whether Graphviz's ``dot`` program and the ``graphviz`` Python package are there."""
    try:
        import graphviz  # noqa: F401
    except ImportError:
        return False
    return shutil.which("dot") is not None


def render(g, dot, fmt):
    """The bytes of ``g`` in ``fmt`` (Graphviz if present; SVG also without it)."""
    if fmt == "dot":
        return dot.encode()
    if has_dot():
        import graphviz
        return graphviz.Source(dot).pipe(format=fmt)
    if fmt == "svg":
        return to_svg(g).encode()
    raise RuntimeError(f"draw: writing {fmt} needs Graphviz's dot program and the graphviz "
                       f"package (Debian: apt install graphviz; pip install graphviz); "
                       f"'svg' and 'dot' work without them")


def svg(obj, max_nodes=300):
    """SVG text of ``obj`` (Jupyter's ``_repr_svg_``)."""
    g = graph(obj, max_nodes)
    return render(g, to_dot(g), "svg").decode()


def _repr_svg_(self):
    return svg(self)


def _install():
    # Jupyter shows these objects as pictures; the classes live in lower layers, so this
    # (higher) layer gives them the method.
    from tapegrad.compile.concrete import ConcreteFunction
    from tapegrad.saved.loaded import LoadedFunction
    from tapegrad.tape.gradient_tape import GradientTape
    for cls in (ConcreteFunction, LoadedFunction, GradientTape):
        cls._repr_svg_ = _repr_svg_


_install()
