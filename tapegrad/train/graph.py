"""The variables an object holds, each named by the attribute path that reaches it.

``tf.train.Checkpoint`` saves Variables by where they sit in the object graph
(``model/layers/0/kernel``), not by their names. This walk finds them in any object: the
attributes of plain Python objects (public ones first, then private, each in sorted order),
list, tuple and dict items, and an object's ``variables`` (a Keras model or optimizer, a
``tf.Module``) for whatever the attributes did not reach. A variable reached by several
paths is saved once, under the first. Functions, classes, modules and compiled functions
are not entered: what they capture belongs to the objects that own it.
"""
import types

from tapegrad.core.tensor import Tensor, Variable

_LEAF_TYPES = (str, bytes, int, float, complex, bool, type(None), range, slice, type,
               types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
               types.MethodType, types.GeneratorType, memoryview)
_MAX_DEPTH = 32


def _skip(obj):
    if isinstance(obj, _LEAF_TYPES) or (isinstance(obj, Tensor)
                                        and not isinstance(obj, Variable)):
        return True
    mod = type(obj).__module__ or ""
    # compiled functions keep traces and caches, not state of their own; NumPy, the
    # standard library's threading/IO objects and the like hold no Variables
    return (mod.startswith(("tapegrad.compile", "numpy", "threading", "_thread", "io",
                            "logging", "weakref", "builtins", "collections.abc"))
            and not isinstance(obj, (list, tuple, dict)))


def _children(obj):
    """``(name, child)`` pairs of one object, in the walk's order."""
    if isinstance(obj, dict):
        return [(str(k), v) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))]
    if isinstance(obj, (list, tuple)):
        return [(str(i), v) for i, v in enumerate(obj)]
    attrs = getattr(obj, "__dict__", None)
    out = []
    if isinstance(attrs, dict):
        names = sorted(n for n in attrs if isinstance(n, str) and not n.startswith("__"))
        out = [(n, attrs[n]) for n in names if not n.startswith("_")]
        out += [(n, attrs[n]) for n in names if n.startswith("_")]
    if "variables" not in (attrs or {}):
        try:
            vs = getattr(obj, "variables", None)
        except Exception:  # a property that cannot run yet (an unbuilt model, say)
            vs = None
        if callable(vs):
            vs = None
        if isinstance(vs, (list, tuple)) and all(isinstance(v, Variable) for v in vs):
            out.append(("variables", list(vs)))
    return out


def variables_by_path(root_children):
    """``{path: Variable}`` for the objects ``root_children`` (a list of (name, object))."""
    found, seen_vars, seen_objs = {}, set(), set()

    def walk(name, obj, path, depth):
        if isinstance(obj, Variable):
            if id(obj) not in seen_vars:
                seen_vars.add(id(obj))
                found[path] = obj
            return
        if depth > _MAX_DEPTH or _skip(obj) or id(obj) in seen_objs:
            return
        seen_objs.add(id(obj))
        for child_name, child in _children(obj):
            walk(child_name, child, f"{path}/{_escape(child_name)}", depth + 1)

    for name, obj in root_children:
        walk(name, obj, _escape(name), 0)
    return found


def _escape(name):
    # '/' separates the path's parts; '.' opens TensorFlow's '.ATTRIBUTES' suffix
    return name.replace("/", "%2F")


def is_trackable(obj):
    """What ``Checkpoint(name=obj)`` accepts: a Variable or an object that can hold some."""
    if isinstance(obj, Variable):
        return True
    return not _skip(obj) and not isinstance(obj, Tensor) and (
        isinstance(obj, (list, tuple, dict)) or hasattr(obj, "__dict__"))
