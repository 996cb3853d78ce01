"""``tf.Module``: a base class that finds the variables held by a model's attributes."""
import contextlib
import re

from tapegrad.core.tensor import Variable
from tapegrad.train import checkpoint


def _snake(name):
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


class Module:
    """Base class for models: ``variables``, ``trainable_variables`` and ``submodules`` are
    collected from the attributes (also inside lists, tuples and dicts), as in TensorFlow.

    >>> import tapegrad as tf
    >>> class Dense(tf.Module):
    ...     def __init__(self, name=None):
    ...         super().__init__(name=name)
    ...         self.w = tf.Variable(tf.ones([2, 1]), name="w")
    ...         self.b = tf.Variable(0.0, trainable=False, name="b")
    >>> d = Dense()
    >>> d.name, [v.name for v in d.variables], [v.name for v in d.trainable_variables]
    ('dense', ['b:0', 'w:0'], ['w:0'])
    """

    def __init__(self, name=None):
        if name is None:
            name = _snake(type(self).__name__)
        self._name = name

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if checkpoint._PENDING:  # a restore waiting for a Variable set here (TensorFlow's
            checkpoint.restore_pending()  # deferred restoration)

    @property
    def name(self):
        return self.__dict__.get("_name") or _snake(type(self).__name__)

    @property
    def name_scope(self):
        return contextlib.nullcontext()

    @property
    def variables(self):
        """Every variable reachable from this module's attributes, each once."""
        return tuple(self._flatten(lambda x: isinstance(x, Variable)))

    @property
    def trainable_variables(self):
        """The variables with ``trainable=True``."""
        return tuple(self._flatten(lambda x: isinstance(x, Variable) and x.trainable))

    @property
    def non_trainable_variables(self):
        return tuple(self._flatten(lambda x: isinstance(x, Variable) and not x.trainable))

    @property
    def submodules(self):
        """Every module reachable from this one's attributes (not this one), each once."""
        return tuple(self._flatten(lambda x: isinstance(x, Module)))

    def _flatten(self, predicate):
        # TensorFlow's order: attributes sorted by name, depth-first; each object once
        out, seen = [], {id(self)}

        def walk(value):
            if isinstance(value, dict):
                for k in sorted(value, key=str):
                    walk(value[k])
                return
            if isinstance(value, (list, tuple)):
                for v in value:
                    walk(v)
                return
            if id(value) in seen:
                return
            if isinstance(value, Variable) or isinstance(value, Module):
                seen.add(id(value))
                if predicate(value):
                    out.append(value)
                if isinstance(value, Module):
                    walk_module(value)

        def walk_module(m):
            attrs = vars(m)
            for k in sorted(attrs):
                walk(attrs[k])

        walk_module(self)
        return out

    @classmethod
    def with_name_scope(cls, method):
        return method

    def __repr__(self):
        return f"<{type(self).__module__}.{type(self).__name__} name={self.name!r}>"
