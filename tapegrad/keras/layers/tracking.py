"""Which layers and variables a layer holds: attributes (also in lists and dicts) are
recorded in assignment order, as Keras's tracker does. Lists and dicts assigned to a layer
become tracked containers, so ``self.blocks.append(Dense(3))`` is seen too.

The flattened weight list of each layer is cached against one global version number that
any tracking change bumps, so ``model.trainable_variables`` in a training loop is a list
copy, not a walk of the model.
"""
from tapegrad.keras import _tf as tf

_VERSION = [0]


def changed():
    _VERSION[0] += 1


def _is_layer(x):
    from tapegrad.keras.layers.base import Layer
    return isinstance(x, Layer)


def _add(owner, value):
    if owner is None:  # a copy made by tf.nest: nothing to tell
        return
    if isinstance(value, tf.Variable):
        owner._track_variable(value)
    elif _is_layer(value):
        if value is not owner and not any(x is value for x in owner._layers):
            owner._layers.append(value)
            changed()
    elif isinstance(value, (list, tuple)):
        for v in value:
            _add(owner, v)
    elif isinstance(value, dict):
        for v in value.values():
            _add(owner, v)


def _remove(owner, value):
    if owner is None:
        return
    if isinstance(value, tf.Variable):
        for own in (owner._trainable_variables, owner._non_trainable_variables):
            own[:] = [v for v in own if v is not value]
    elif _is_layer(value):
        owner._layers[:] = [x for x in owner._layers if x is not value]
    elif isinstance(value, (list, tuple)):
        for v in value:
            _remove(owner, v)
    elif isinstance(value, dict):
        for v in value.values():
            _remove(owner, v)
    changed()


class TrackedList(list):
    """A list that tells its layer about layers and variables added to it."""

    def __init__(self, values=(), owner=None):
        super().__init__(values)
        self._owner = owner

    def append(self, v):
        super().append(v)
        _add(self._owner, v)

    def extend(self, vs):
        vs = list(vs)
        super().extend(vs)
        _add(self._owner, vs)

    def insert(self, i, v):
        super().insert(i, v)
        _add(self._owner, v)

    def __setitem__(self, i, v):
        _remove(self._owner, self[i])
        super().__setitem__(i, v)
        _add(self._owner, v)

    def __iadd__(self, vs):
        self.extend(vs)
        return self

    def pop(self, i=-1):
        v = super().pop(i)
        _remove(self._owner, v)
        return v

    def remove(self, v):
        super().remove(v)
        _remove(self._owner, v)


class TrackedDict(dict):
    """A dict that tells its layer about layers and variables stored in it."""

    def __init__(self, values=(), owner=None):
        super().__init__(values)
        self._owner = owner

    def __setitem__(self, k, v):
        if k in self:
            _remove(self._owner, self[k])
        super().__setitem__(k, v)
        _add(self._owner, v)

    def __delitem__(self, k):
        _remove(self._owner, self[k])
        super().__delitem__(k)

    def update(self, *args, **kwargs):
        for k, v in dict(*args, **kwargs).items():
            self[k] = v


def track(owner, value):
    """Record ``value`` (being assigned to an attribute of ``owner``); returns what to store."""
    if type(value) is list:
        value = TrackedList(value, owner)
    elif type(value) is dict:
        value = TrackedDict(value, owner)
    elif not (isinstance(value, (tf.Variable, tuple, list, dict)) or _is_layer(value)):
        return value
    _add(owner, value)
    return value


def untrack(owner, value):
    if isinstance(value, (tf.Variable, list, tuple, dict)) or _is_layer(value):
        _remove(owner, value)


def weights(layer):
    """The layer's own weights, trainable then not, then its sublayers' (cached)."""
    cached = layer.__dict__.get("_weights_cache")
    if cached is not None and cached[0] == _VERSION[0]:
        return cached[1]
    out, seen = [], set()
    for v in layer._trainable_variables + layer._non_trainable_variables:
        if id(v) not in seen:
            seen.add(id(v))
            out.append(v)
    for sub in layer._layers:
        for v in weights(sub):
            if id(v) not in seen:
                seen.add(id(v))
                out.append(v)
    out = tuple(out)
    layer.__dict__["_weights_cache"] = (_VERSION[0], out)
    return out
