"""The names a program's values are shown under, the same in the printed IR, the generated
code and the pictures.

The tracer notes the user's name for a value where it learns one (``Origin.name``: ``h`` for
``h = tf.tanh(x @ w)``; ``h_ct`` and ``h_dot`` for the cotangent and the tangent of ``h``).
``value_names`` makes those hints into names that are unique in the program, valid Python
identifiers, and none of a keyword, a builtin, ``np`` or a name in ``taken``; a value without
a hint keeps its IR name (``t7``). Names change only the text: the program, and what it
computes, stay the same.

>>> import numpy as np
>>> from tapegrad.core.dispatch import PRIMITIVES
>>> from tapegrad.ir import Equation, Origin, Program, Var
>>> f32 = np.dtype("float32")
>>> x, t0, t1 = Var("x", (2,), f32), Var("t0", (2,), f32), Var("t1", (2,), f32)
>>> eqs = (Equation(PRIMITIVES["exp"], (x,), (), (t0,)),
...        Equation(PRIMITIVES["neg"], (t0,), (), (t1,)))
>>> p = Program((x,), (), (), eqs, (t1,),
...             origins=(("t0", Origin("f.py:1", "", False, "max")),))
>>> value_names(p)
{'x': 'x', 't1': 't1', 't0': 'max_1'}
"""
import builtins
import keyword

from tapegrad.ir.core import NameGen

# Names no value may take in generated code: keywords, builtins, the NumPy module.
RESERVED = frozenset(keyword.kwlist) | frozenset(dir(builtins)) | {"np"}


def usable(name):
    """Whether ``name`` can name a value in generated code: an ASCII identifier, not a
    keyword, not a dunder name."""
    return (isinstance(name, str) and name.isidentifier() and name.isascii()
            and not keyword.iskeyword(name) and not name.startswith("__"))


def value_names(program, taken=()):
    """``{IR name: shown name}`` for every value of ``program``.

    Inputs and captures keep their names (the tracer made them identifiers; generated code
    checks them). A value without a hint keeps its IR name where that is usable and free,
    and those are claimed first, so that a user's variable called ``t3`` cannot move the
    IR's ``t3``. Hinted values then take their hint, or ``hint_1``, ``hint_2``... in program
    order. The result depends only on the program: the same program, the same names.
    """
    origins = program.origin_of()
    names = {v.name: v.name for v in program.inputs + program.captures}
    # the function's own name too: generated code defines it
    gen = NameGen(set(taken) | RESERVED | set(names.values()) | {program.name})
    defined = [c.var for c in program.constants]
    defined += [v for e in program.equations for v in e.outs]
    hints = {}
    for v in defined:
        o = origins.get(v.name)
        if o is not None and o.name and o.name != v.name and usable(o.name):
            hints[v.name] = o.name
    for v in defined:
        if v.name not in hints and usable(v.name) and v.name not in gen.taken:
            names[v.name] = v.name
            gen.taken.add(v.name)
    gen.taken.update(program.all_names())  # fresh names avoid every IR name
    suffix = {}  # hint -> the next _k to try (a loop of 10,000 x's stays linear)
    for v in defined:
        if v.name in names:
            continue
        hint = hints.get(v.name)
        if hint is None:
            names[v.name] = gen("c" if v.name[:1] == "c" else "t")
            continue
        k, name = suffix.get(hint, 0), hint
        if k:
            name = f"{hint}_{k}"
        while name in gen.taken:
            k += 1
            name = f"{hint}_{k}"
        suffix[hint] = k + 1
        gen.taken.add(name)
        names[v.name] = name
    return names


def line_values(program):
    """``{IR name: IR name of the value that stands for its user line}``.

    The user's equations of one execution of one line (consecutive user equations, in the
    order the tracer saw them, with the same ``file:line``, up to the first value the user
    named) stand for that named value (``h`` in ``h = tf.tanh(x @ w)``), or, where none is
    named, each for itself. Derivative code says ``d/dh of`` that line.
    """
    out, run, last = {}, [], None

    def close():
        named = [n for n, o in run if o.name]
        for n, _ in run:
            out[n] = named[-1] if named else n

    for n, o in program.origins:
        if o.derivative:
            continue  # forward mode interleaves tangents with the line's own equations
        if o.where != last or (run and run[-1][1].name):  # a new line, or the line again
            close()
            run, last = [], o.where
        run.append((n, o))
    close()
    return out


def named(program):
    """``program`` with its values renamed to the names ``value_names`` shows (origins
    follow): what a saved file stores, so that a loaded program prints, draws and generates
    code under the user's names. The computation is the same."""
    names = value_names(program)
    if all(k == v for k, v in names.items()):
        return program
    ren = {}

    def var(v):
        w = ren.get(v.name)
        if w is None:
            w = ren[v.name] = v._replace(name=names.get(v.name, v.name))
        return w

    return program.replace(
        inputs=tuple(map(var, program.inputs)), captures=tuple(map(var, program.captures)),
        constants=tuple(type(c)(var(c.var), c.value) for c in program.constants),
        equations=tuple(e._replace(inputs=tuple(map(var, e.inputs)),
                                   outs=tuple(map(var, e.outs))) for e in program.equations),
        outputs=tuple(map(var, program.outputs)),
        updates=tuple((i, var(v)) for i, v in program.updates),
        # the names are the values' own now; origins of dead values have nothing to name
        origins=tuple((names[n], o._replace(name="", of=names.get(o.of, "")))
                      for n, o in program.origins if n in names))
