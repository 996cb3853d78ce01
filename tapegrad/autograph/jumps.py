"""Lowering ``return``, ``break`` and ``continue`` to flags, before control flow is converted.

A jump cannot cross the functions that a converted ``if`` or loop body becomes, so each is
replaced by assignments to flags, and the statements a jump skips are guarded by them:

- ``return x`` -> ``do_return = True; retval_ = x``; what follows is guarded by
  ``if not do_return:`` and the function ends with ``return ag__.retval(...)``;
- ``break`` -> ``break_ = True``; the loop also tests ``not break_`` before each iteration;
- ``continue`` -> ``continue_ = True``, reset at the top of each iteration.

The flags are ordinary variables, so a flag set under a tensor predicate becomes a boolean
tensor and the guards become ``cond`` s: the semantics of AutoGraph's jump converters. A
loop's ``else`` is moved after the loop, guarded by the loop's ``break_`` flag.
"""
import ast

from tapegrad.autograph import analysis


def _name(id_, store=False):
    return ast.Name(id=id_, ctx=ast.Store() if store else ast.Load())


def _assign(name, value):
    return ast.Assign(targets=[_name(name, store=True)], value=value)


def _not_any(flags):
    test = _name(flags[0]) if len(flags) == 1 else ast.BoolOp(
        op=ast.Or(), values=[_name(f) for f in flags])
    return ast.UnaryOp(op=ast.Not(), operand=test)


def _located(nodes, at):
    for n in nodes:
        ast.copy_location(n, at)
        for c in ast.walk(n):
            if not hasattr(c, "lineno") and "lineno" in c._attributes:
                ast.copy_location(c, at)
    return nodes


class _Loop:
    def __init__(self, brk, cont):
        self.brk, self.cont = brk, cont


class Lowering:
    """Rewrites one function's body; ``names`` makes fresh identifiers."""

    def __init__(self, names):
        self.names = names
        self.ret = None  # (do_return, retval_) once returns are lowered

    def function(self, node):
        """Lower ``node``'s body in place; returns the flag names of ``return``, or None."""
        nested = any("return" in analysis.jumps(s) for s in node.body
                     if not isinstance(s, ast.Return))
        if nested:
            self.ret = (self.names("_do_return"), self.names("_retval"))
        body = self.block(node.body, None)
        if self.ret is not None:
            do_return, retval = self.ret
            first = node.body[0]
            head = _located([
                _assign(do_return, ast.Constant(False)),
                _assign(retval, _call("UndefinedReturnValue", []))], first)
            tail = _located([ast.Return(value=_call("retval", [
                _name(retval), _name(do_return),
                ast.Constant(analysis.always_returns(node.body))]))], node.body[-1])
            body = head + body + tail
        node.body = body or [ast.Pass()]
        return self.ret

    def block(self, stmts, loop):
        out = []
        for k, s in enumerate(stmts):
            if isinstance(s, ast.Return) and self.ret is not None:
                value = s.value if s.value is not None else ast.Constant(None)
                return out + _located([_assign(self.ret[0], ast.Constant(True)),
                                       _assign(self.ret[1], value)], s)
            if isinstance(s, ast.Break) and loop is not None:
                return out + _located([_assign(loop.brk, ast.Constant(True))], s)
            if isinstance(s, ast.Continue) and loop is not None:
                return out + _located([_assign(loop.cont, ast.Constant(True))], s)
            found = analysis.jumps(s)  # before the statement's own jumps are lowered
            out += self.statement(s, loop)
            flags = []
            if "return" in found and self.ret is not None:
                flags.append(self.ret[0])
            if loop is not None and "break" in found:
                flags.append(loop.brk)
            if loop is not None and "continue" in found:
                flags.append(loop.cont)
            rest = stmts[k + 1:]
            if flags and rest:
                guarded = self.block(rest, loop) or [ast.Pass()]
                out += _located([ast.If(test=_not_any(flags), body=guarded, orelse=[])],
                                rest[0])
                return out
        return out

    def statement(self, s, loop):
        if isinstance(s, ast.If):
            s.body = self.block(s.body, loop) or [ast.Pass()]
            s.orelse = self.block(s.orelse, loop)
            return [s]
        if isinstance(s, (ast.With, ast.AsyncWith)):
            s.body = self.block(s.body, loop) or [ast.Pass()]
            return [s]
        if isinstance(s, ast.Try):
            s.body = self.block(s.body, loop) or [ast.Pass()]
            for h in s.handlers:
                h.body = self.block(h.body, loop) or [ast.Pass()]
            s.orelse = self.block(s.orelse, loop)
            s.finalbody = self.block(s.finalbody, loop)
            return [s]
        if isinstance(s, (ast.While, ast.For)):
            return self.loop(s, loop)
        return [s]

    def loop(self, s, outer):
        inner = set().union(*[analysis.jumps(c) for c in s.body]) if s.body else set()
        me = _Loop(self.names("_break") if "break" in inner else None,
                   self.names("_continue") if "continue" in inner else None)
        body = self.block(s.body, me) or [ast.Pass()]
        if me.cont:
            body = _located([_assign(me.cont, ast.Constant(False))], s.body[0]) + body
        s.body = body
        stop = [f for f in (me.brk, self.ret[0] if self.ret and "return" in inner else None)
                if f]
        if stop:
            test = _not_any(stop)
            if isinstance(s, ast.While):
                s.test = ast.BoolOp(op=ast.And(), values=[test, s.test])
            else:
                s.ag_extra_test = test  # read by the control-flow converter
        before = _located([_assign(me.brk, ast.Constant(False))], s) if me.brk else []
        after = []
        if s.orelse:
            orelse = self.block(s.orelse, outer) or [ast.Pass()]
            after = _located([ast.If(test=_not_any(stop), body=orelse, orelse=[])],
                             s.orelse[0]) if stop else orelse
            s.orelse = []
        return before + [s] + after


def _call(fn, args):
    return ast.Call(func=ast.Attribute(value=_name("ag__"), attr=fn, ctx=ast.Load()),
                    args=args, keywords=[])
