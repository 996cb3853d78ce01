"""The control-flow converter: ``if``/``while``/``for``, boolean operators and calls, rewritten
into calls of ``tapegrad.autograph.operators`` (``ag__``) that decide at trace time.

Each statement becomes small functions over the variables it assigns (its *state*):

    if x > 0:                       def if_body():  nonlocal y; y = x
        y = x                       def else_body(): nonlocal y; y = -x
    else:                    ->     def get_state(): return (y,)
        y = -x                      def set_state(vars_): nonlocal y; (y,) = vars_
                                    ag__.if_stmt(x > 0, if_body, else_body, get_state,
                                                 set_state, ('y',), {})

``ag__.if_stmt`` runs one branch when the predicate has a value (a Python bool or a concrete
tensor), exactly as Python would, and stages a ``cond`` when it is symbolic. Loops are the
same with a test or an iterable. ``a and b``/``a or b``/``not a``/``a if c else b`` become
``ag__.and_``/``or_``/``not_``/``if_exp`` (lazy operands), and ``f(...)`` becomes
``ag__.callee(f)(...)``, so user functions called from a converted one are converted too.
State variables not yet bound are set to ``ag__.Undefined`` at the top of the function, so
the ``nonlocal`` declarations always have a binding. Nested functions and classes are left
alone here; they are converted when called.
"""
import ast

from tapegrad.autograph import analysis
from tapegrad.autograph.jumps import _located, _name

_DIRECTIVE = "set_loop_options"


def _ag(attr):
    return ast.Attribute(value=_name("ag__"), attr=attr, ctx=ast.Load())


def _call(fn, args, keywords=()):
    return ast.Call(func=_ag(fn), args=list(args), keywords=list(keywords))


def _thunk(expr):
    return ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                                         kw_defaults=[], kwarg=None, defaults=[]), body=expr)


def _def(name, params, body):
    args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=p) for p in params], vararg=None,
                         kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    return ast.FunctionDef(name=name, args=args, body=body or [ast.Pass()], decorator_list=[],
                           returns=None, type_comment=None)


def _tuple(names, store=False):
    return ast.Tuple(elts=[_name(n, store) for n in names],
                     ctx=ast.Store() if store else ast.Load())


class ControlFlow(ast.NodeTransformer):
    """Converts one function's body (after ``jumps.Lowering``)."""

    def __init__(self, names, globals_, return_flags):
        self.names = names
        self.globals = globals_
        self.state_names = []  # every name some statement carries as state
        self.return_flags = tuple(return_flags or ())

    # -- helpers ---------------------------------------------------------------------------
    def _scope(self, state):
        out = []
        local = [n for n in state if n not in self.globals]
        glob = [n for n in state if n in self.globals]
        if local:
            out.append(ast.Nonlocal(names=local))
        if glob:
            out.append(ast.Global(names=glob))
        return out

    def _state_functions(self, state, k):
        get, put = f"get_state_{k}", f"set_state_{k}"
        for n in state:
            if n not in self.state_names:
                self.state_names.append(n)
        getter = _def(get, [], [ast.Return(value=_tuple(state))])
        setter = _def(put, ["_vars"], self._scope(state) + (
            [ast.Assign(targets=[_tuple(state, store=True)], value=_name("_vars"))]
            if state else [ast.Pass()]))
        return get, put, [getter, setter]

    def _opts(self, body):
        """Loop options from ``set_loop_options(...)`` calls at the top of a loop body
        (AutoGraph's directive); the calls are removed."""
        keys, values = [], []
        while body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Call):
            f = body[0].value.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            if name != _DIRECTIVE:
                break
            for kw in body.pop(0).value.keywords:
                keys.append(ast.Constant(kw.arg))
                values.append(kw.value)
        if self.return_flags:
            keys.append(ast.Constant("return_flags"))
            values.append(ast.Constant(self.return_flags))
        return ast.Dict(keys=keys, values=values)

    # -- statements ------------------------------------------------------------------------
    def visit_FunctionDef(self, node):  # nested scopes: converted when called
        return node

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

    def visit_If(self, node):
        state = analysis.assigned(node.body + node.orelse)
        self.generic_visit(node)
        k = self.names.index()
        body, orelse = f"if_body_{k}", f"else_body_{k}"
        get, put, fns = self._state_functions(state, k)
        out = [_def(body, [], self._scope(state) + node.body),
               _def(orelse, [], self._scope(state) + (node.orelse or [ast.Pass()]))] + fns
        out.append(ast.Expr(value=_call("if_stmt", [
            node.test, _name(body), _name(orelse), _name(get), _name(put),
            ast.Tuple(elts=[ast.Constant(n) for n in state], ctx=ast.Load()),
            self._opts([])])))
        return _located(out, node)

    def visit_While(self, node):
        if node.orelse:
            raise NotImplementedError("while/else is moved out by jumps.Lowering")
        opts = self._opts(node.body)
        state = analysis.assigned(node.body)
        self.generic_visit(node)
        k = self.names.index()
        test, body = f"loop_test_{k}", f"loop_body_{k}"
        get, put, fns = self._state_functions(state, k)
        out = [_def(test, [], [ast.Return(value=node.test)]),
               _def(body, [], self._scope(state) + node.body)] + fns
        out.append(ast.Expr(value=_call("while_stmt", [
            _name(test), _name(body), _name(get), _name(put),
            ast.Tuple(elts=[ast.Constant(n) for n in state], ctx=ast.Load()), opts])))
        return _located(out, node)

    def visit_For(self, node):
        opts = self._opts(node.body)
        state = analysis.assigned([node.target] + node.body)
        extra = getattr(node, "ag_extra_test", None)
        self.generic_visit(node)
        if extra is not None:
            extra = self.visit(extra)
        k = self.names.index()
        body, itr, test = f"loop_body_{k}", f"_itr_{k}", f"extra_test_{k}"
        get, put, fns = self._state_functions(state, k)
        unpack = ast.Assign(targets=[node.target], value=_name(itr))
        out = [_def(body, [itr], self._scope(state) + [unpack] + node.body)]
        if extra is not None:
            out.append(_def(test, [], [ast.Return(value=extra)]))
        out += fns
        out.append(ast.Expr(value=_call("for_stmt", [
            self._iterable(node.iter), _name(test) if extra is not None else ast.Constant(None),
            _name(body), _name(get), _name(put),
            ast.Tuple(elts=[ast.Constant(n) for n in state], ctx=ast.Load()), opts])))
        return _located(out, node)

    def _iterable(self, it):
        # ``for i in tf.range(n)``: the call goes through ag__.for_iter, which keeps a range
        # of symbolic bounds as bounds (a loop counter) instead of building a tensor
        call = self.visit(it)
        if not isinstance(call, ast.Call) or any(isinstance(a, ast.Starred) for a in call.args):
            return call
        f = call.func
        if isinstance(f, ast.Call) and isinstance(f.func, ast.Attribute) and \
                f.func.attr == "callee":
            f = f.args[0]
        return ast.copy_location(ast.Call(func=_ag("for_iter"), args=[f] + call.args,
                                          keywords=call.keywords), it)

    def visit_Return(self, node):
        # a variable only some branches defined is TensorFlow's error once returned
        self.generic_visit(node)
        if node.value is not None:
            node.value = ast.copy_location(_call("checked", [node.value]), node.value)
        return node

    # -- expressions -----------------------------------------------------------------------
    def visit_BoolOp(self, node):
        self.generic_visit(node)
        fn = "and_" if isinstance(node.op, ast.And) else "or_"
        return ast.copy_location(_call(fn, [_thunk(v) for v in node.values]), node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(_call("not_", [node.operand]), node)
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        return ast.copy_location(_call("if_exp", [node.test, _thunk(node.body),
                                                  _thunk(node.orelse)]), node)

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Name) and f.id in ("super", "locals", "globals", "vars"):
            return node  # they read the caller's frame
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
                f.value.id == "ag__":
            return node
        node.func = ast.copy_location(_call("callee", [f]), f)
        return node


def convert_function(node, names):
    """Convert FunctionDef ``node`` in place (returns it)."""
    from tapegrad.autograph.jumps import Lowering
    params = set(analysis.parameters(node))
    globals_, nonlocals = analysis.declared(node)
    flags = Lowering(names).function(node)
    cf = ControlFlow(names, globals_, flags)
    node.body = [cf.visit(s) for s in node.body]
    node.body = [s for x in node.body for s in (x if isinstance(x, list) else [x])]
    fresh = [n for n in cf.state_names if n not in params and n not in globals_
             and n not in nonlocals and n not in (flags or ())]
    if fresh:
        init = [ast.Assign(targets=[_name(n, store=True)],
                           value=_call("Undefined", [ast.Constant(n)])) for n in fresh]
        node.body = _located(init, node.body[0]) + node.body
    node.decorator_list = []
    return node
