"""From a Python function to its converted twin: source, AST, code object, function.

The source comes from ``inspect`` (the function's code object, so a decorator's wrapper is
never skipped). The converted ``def`` is compiled inside a factory whose parameters are the
original's free variables and ``ag__``, then rebuilt with ``types.FunctionType`` on the
original's globals, defaults and *closure cells*: globals and closed-over variables are the
same objects, so later changes to them are seen, exactly as by the original. Line numbers
are the original's, so errors and the tracer's messages point at the user's lines.

Conversion is cached per code object (a nested function made anew on every call of its
parent is converted once); functions that cannot be converted (no source, generators,
lambdas) are used as they are.
"""
import ast
import copy
import inspect
import os
import sysconfig
import textwrap
import types
import weakref

from tapegrad.ir.core import NameGen

_CACHE = {}          # code object -> converted code object, or None (use the original)
_SOURCE = {}         # converted code object -> its source (for to_code)
_LAMBDA = "__ag_lambda"  # the name a converted lambda's def is compiled under
_MADE = weakref.WeakKeyDictionary()  # function -> its converted function
_SKIP_ROOTS = {"tapegrad", "numpy", "scipy", "builtins", "functools", "inspect", "abc",
               "collections", "typing", "contextlib", "threading", "dask", "distributed",
               "xarray", "pytest", "_pytest", "pluggy", "hypothesis", "unittest", "doctest",
               "copy", "operator", "itertools", "weakref", "re", "enum", "dataclasses"}
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_LIBRARY_DIRS = tuple({sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib",
                                                        "platlib") if sysconfig.get_paths().get(k)})


class Names(NameGen):
    """Fresh identifiers that no name of the function uses: ``names("_break")`` (then
    ``_break_1``, ...), and ``index()`` numbering the helper functions of a statement."""

    def __init__(self, taken):
        super().__init__(taken)
        self.k = 0

    def __call__(self, base):
        return self.reserve(base)

    def index(self):
        while True:
            self.k += 1
            k = self.k
            if not any(f"{p}_{k}" in self.taken for p in
                       ("if_body", "else_body", "get_state", "set_state", "loop_test",
                        "loop_body", "_itr", "extra_test")):
                return k


def is_user_function(fn, requested=False):
    """Is ``fn`` a plain Python function of the user's (not a library's, not marked)?
    ``requested``: conversion was asked for (tapegrad.function, to_graph): any module."""
    if not isinstance(fn, types.FunctionType) or getattr(fn, "__ag_do_not_convert__", False):
        return False
    if getattr(fn, "__ag_converted__", False):
        return False
    if fn.__code__.co_filename.startswith(_PACKAGE):  # tapegrad's own code (tf.jacobian's
        return False                                   # wrapper), as TF never converts TF
    if requested:
        return True
    root = (getattr(fn, "__module__", None) or "").split(".")[0]
    if root in _SKIP_ROOTS:
        return False
    return not fn.__code__.co_filename.startswith(_LIBRARY_DIRS)


def _parse(fn):
    """The ``def`` of ``fn`` as an AST at its original line numbers, or None."""
    code = fn.__code__
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE
                        | inspect.CO_ASYNC_GENERATOR):
        return None
    try:
        lines, first = inspect.getsourcelines(code)
        text = textwrap.dedent("".join(lines))
        tree = ast.parse(text)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    ast.increment_lineno(tree, first - 1)
    if code.co_name == "<lambda>":  # columns: the dedented text's, the code's + shift
        return _lambda(tree, code, len(lines[0]) - len(text.splitlines(True)[0]))
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.FunctionDef) or node.name != code.co_name:
        return None
    return node


def _lambda(tree, code, shift):
    """A lambda as ``def <name>(args): return body``: the one lambda of its line whose
    parameters are the code's (None when that does not single it out)."""
    params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)
             and n.lineno == code.co_firstlineno
             and tuple(a.arg for a in n.args.posonlyargs + n.args.args + n.args.kwonlyargs)
             == params]
    if len(found) > 1:  # several on the line: the one whose columns hold the code's
        cols = [c for line, _, c, end in code.co_positions()  # (RESUME spans nothing)
                if line == code.co_firstlineno and c is not None and end and end > c]
        found = [n for n in found if cols and n.col_offset + shift <= min(cols)
                 and max(cols) <= n.end_col_offset + shift]
    if len(found) != 1:
        return None
    lam = found[0]
    node = ast.FunctionDef(name=_LAMBDA, args=lam.args, body=[ast.Return(value=lam.body)],
                           decorator_list=[], returns=None, type_comment=None)
    return ast.copy_location(node, lam)


def convert_code(fn):
    """The converted code object of ``fn`` (cached), or None when it stays as it is."""
    code = fn.__code__
    if code in _CACHE:
        return _CACHE[code]
    from tapegrad.autograph import analysis
    from tapegrad.autograph.transformer import convert_function
    new = None
    node = _parse(fn)
    if node is not None and not analysis.has_yield(node) and _is_the_source(node, code):
        taken = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        taken |= set(code.co_varnames) | set(code.co_freevars) | set(code.co_cellvars)
        node = convert_function(node, Names(taken))
        new = _compile(node, code)
    if len(_CACHE) > 4096:  # bounded: a process converting endless new code objects
        _CACHE.clear()
    _CACHE[code] = new
    return new


def _is_the_source(node, code):
    """Does ``node``, compiled as it is, give ``code``'s names, variables and constants? Not
    when the file changed since the function was defined (inspect reads the file now) or
    the wrong lambda was found: then the function is not converted, never converted from
    other source. (The bytecode itself differs with the interpreter's optimisations.)"""
    try:
        again = _compile(copy.deepcopy(node), code, keep=False)
    except (SyntaxError, StopIteration, ValueError):
        return False
    return _signature_of(again) == _signature_of(code)


def _signature_of(code):
    return (code.co_names, code.co_varnames, code.co_freevars, code.co_argcount,
            code.co_kwonlyargcount, [_signature_of(c) if isinstance(c, types.CodeType)
                                     else (type(c).__name__, repr(c)) for c in code.co_consts])


def _compile(node, code, keep=True):
    free = [n for n in code.co_freevars if n != "ag__"]
    factory = ast.FunctionDef(
        name="__ag_factory",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in free + ["ag__"]],
                           vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                           defaults=[]),
        body=[node, ast.Return(value=ast.Name(id=node.name, ctx=ast.Load()))],
        decorator_list=[], returns=None, type_comment=None)
    ast.copy_location(factory, node)
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    compiled = compile(module, code.co_filename, "exec", dont_inherit=True)
    fcode = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    inner = next(c for c in fcode.co_consts if isinstance(c, types.CodeType)
                 and c.co_name == node.name)
    if keep:
        _SOURCE[inner] = ast.unparse(node)
    return inner


def make(fn, code):
    """A function running ``code`` with ``fn``'s globals, defaults and closure cells."""
    from tapegrad.autograph import operators
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    closure = tuple(types.CellType(operators) if n == "ag__" else cells[n]
                    for n in code.co_freevars)
    new = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__dict__.update(fn.__dict__)
    new.__qualname__, new.__module__, new.__doc__ = fn.__qualname__, fn.__module__, fn.__doc__
    new.__annotations__ = fn.__annotations__
    new.__ag_converted__ = True
    return new


def convert(fn, requested=False):
    """``fn`` converted (a bound method: its function, bound again), or ``fn`` itself."""
    if isinstance(fn, types.MethodType):
        f = convert(fn.__func__, requested)
        return fn if f is fn.__func__ else types.MethodType(f, fn.__self__)
    if not is_user_function(fn, requested):
        return fn
    hit = _MADE.get(fn)
    if hit is None:
        code = convert_code(fn)
        hit = fn if code is None else make(fn, code)
        try:
            _MADE[fn] = hit
        except TypeError:
            pass
    return hit


def source(fn):
    """The converted source of ``fn`` (``tf.autograph.to_code``)."""
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"to_code expects a Python function, got {fn!r}")
    code = convert_code(fn)
    if code is None:
        raise ValueError(f"tapegrad.autograph could not convert {fn.__qualname__}: its source "
                         "is not available (a lambda, a generator, or code made by exec).")
    return _SOURCE[code] + "\n"
