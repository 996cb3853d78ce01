"""What the converter needs to know about a block of statements, read from the AST alone.

- ``assigned``: the names a block binds in the function's own scope (not in nested
  functions, classes, lambdas or comprehensions, which have scopes of their own);
- ``declared``: the names a function declares ``global`` or ``nonlocal``;
- ``always_returns``: whether every path through a block ends in ``return`` or ``raise``;
- ``jumps``: which of ``return``/``break``/``continue`` a statement contains (``break`` and
  ``continue`` only where they leave the loop being looked at, not a nested one).
"""
import ast

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp)


class _Assigned(ast.NodeVisitor):
    def __init__(self):
        self.names = []

    def add(self, name):
        if name not in self.names:
            self.names.append(name)

    def visit_Name(self, node):
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.add(node.id)

    def visit_FunctionDef(self, node):  # the name is bound here; the body is another scope
        for d in node.decorator_list:
            self.visit(d)
        self.add(node.name)

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

    def visit_Lambda(self, node):
        pass

    def _comprehension(self, node):  # only a walrus binds in the enclosing scope
        for n in ast.walk(node):
            if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
                self.add(n.target.id)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_Import(self, node):
        for a in node.names:
            self.add(a.asname or a.name.split(".")[0])

    visit_ImportFrom = visit_Import

    def visit_ExceptHandler(self, node):
        if node.name:
            self.add(node.name)
        self.generic_visit(node)

    def visit_Global(self, node):
        pass

    visit_Nonlocal = visit_Global


def assigned(stmts):
    """Names bound by ``stmts`` in their own scope, in first-seen order."""
    v = _Assigned()
    for s in stmts:
        v.visit(s)
    return v.names


def declared(fn_node):
    """``(global names, nonlocal names)`` declared directly in function ``fn_node``."""
    g, nl = set(), set()
    for n in _own_nodes(fn_node.body):
        if isinstance(n, ast.Global):
            g.update(n.names)
        elif isinstance(n, ast.Nonlocal):
            nl.update(n.names)
    return g, nl


def _own_nodes(stmts):
    """Every node of ``stmts`` outside nested scopes."""
    todo = list(stmts)
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, _SCOPES):
            todo.extend(ast.iter_child_nodes(n))


def parameters(fn_node):
    a = fn_node.args
    names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
    names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
    return names


def always_returns(stmts):
    """Does every path through ``stmts`` end in ``return`` or ``raise``?"""
    for s in stmts:
        if isinstance(s, (ast.Return, ast.Raise)):
            return True
        if isinstance(s, ast.If) and always_returns(s.body) and always_returns(s.orelse):
            return True
        if isinstance(s, ast.With) and always_returns(s.body):
            return True
    return False


def jumps(node):
    """``{'return', 'break', 'continue'}`` found in ``node`` (breaks and continues only
    where they belong to the loop around ``node``, not to a loop nested inside it)."""
    found = set()

    def walk(n, in_loop):
        if isinstance(n, _SCOPES):
            return
        if isinstance(n, ast.Return):
            found.add("return")
        elif isinstance(n, ast.Break) and not in_loop:
            found.add("break")
        elif isinstance(n, ast.Continue) and not in_loop:
            found.add("continue")
        if isinstance(n, (ast.For, ast.While, ast.AsyncFor)):
            for c in n.body:
                walk(c, True)
            for c in n.orelse:  # a loop's else belongs to the outer loop
                walk(c, in_loop)
            walk(n.iter if isinstance(n, (ast.For, ast.AsyncFor)) else n.test, in_loop)
            return
        for c in ast.iter_child_nodes(n):
            walk(c, in_loop)
    walk(node, False)
    return found


def has_yield(fn_node):
    return any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await))
               for n in _own_nodes(fn_node.body))
