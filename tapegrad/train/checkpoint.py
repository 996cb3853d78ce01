"""``tf.train.Checkpoint``: save and restore the Variables of a set of objects.

Files, for a prefix ``ckpt-3`` (TensorFlow's names; the contents are tapegrad's):

- ``ckpt-3.index`` — UTF-8 JSON: ``{"format": "tapegrad.checkpoint", "version": 1,
  "values": [{"name": PATH, "key": "v0", "shape": [..], "dtype": "float32"}, ...]}`` where
  ``PATH`` is the attribute path of a Variable followed by ``/.ATTRIBUTES/VARIABLE_VALUE``;
- ``ckpt-3.data-00000-of-00001`` — ``numpy.savez`` of the values, member ``KEY.npy`` each,
  read with ``allow_pickle=False`` and checked against the index.

``save`` also writes the directory's ``checkpoint`` file (TensorFlow's text format, the
quoted relative paths only), which ``tf.train.latest_checkpoint`` reads. Nothing is pickled.

Restoring is deferred, as in TensorFlow: a saved value whose Variable does not exist yet
(a Keras model built on its first call, an optimizer's slots made on its first step) is
kept, and assigned when the Variable appears at its path. ``restore_pending`` makes that
check; Keras layers and optimizers call it when they build, ``tf.Module`` when an attribute
is set, a ``Checkpoint`` when it gets a new dependency and a load status before it asserts.
"""
import json
import os
import warnings
import weakref

import numpy as np

from tapegrad.core.state import STATE
from tapegrad.core.tensor import Variable
from tapegrad.train import graph, state_file

FORMAT, VERSION = "tapegrad.checkpoint", 1
SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"
_MAX_INDEX_BYTES = 64 << 20
_DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "complex64", "complex128"}


def _files(prefix):
    return prefix + ".index", prefix + ".data-00000-of-00001"


def write_values(prefix, values):
    """Write ``{name: array}`` as the two files of ``prefix`` (each replaced atomically)."""
    index_path, data_path = _files(prefix)
    os.makedirs(os.path.dirname(os.path.abspath(prefix)), exist_ok=True)
    entries, arrays = [], {}
    for k, (name, arr) in enumerate(sorted(values.items())):
        key = f"v{k}"
        arrays[key] = arr
        entries.append({"name": name, "key": key, "shape": list(arr.shape),
                        "dtype": arr.dtype.name})
    with open(data_path + ".tmp", "wb") as f:
        np.savez(f, **arrays)
    os.replace(data_path + ".tmp", data_path)
    with open(index_path + ".tmp", "w", encoding="utf-8") as f:
        json.dump({"format": FORMAT, "version": VERSION, "values": entries}, f)
    os.replace(index_path + ".tmp", index_path)


def read_values(prefix):
    """``{name: array}`` from the files of ``prefix``, every field validated."""
    index_path, data_path = _files(prefix)
    if not os.path.exists(index_path):
        raise FileNotFoundError(f"Unsuccessful TensorSliceReader constructor: Failed to find "
                                f"any matching files for {prefix}")
    if os.path.getsize(index_path) > _MAX_INDEX_BYTES:
        raise ValueError(f"{index_path}: the index is too large to be a checkpoint index.")
    with open(index_path, encoding="utf-8") as f:
        head = json.load(f)
    if not isinstance(head, dict) or head.get("format") != FORMAT:
        raise ValueError(f"{index_path} is not a tapegrad checkpoint index.")
    if head.get("version") != VERSION:
        raise ValueError(f"{index_path}: unsupported checkpoint version {head.get('version')!r}.")
    entries = head.get("values")
    if not isinstance(entries, list):
        raise ValueError(f"{index_path}: 'values' must be a list.")
    out = {}
    with np.load(data_path, allow_pickle=False) as data:
        members = set(data.files)
        for e in entries:
            if not (isinstance(e, dict) and isinstance(e.get("name"), str)
                    and isinstance(e.get("key"), str) and e["key"] in members
                    and e.get("dtype") in _DTYPES and isinstance(e.get("shape"), list)
                    and all(type(s) is int and s >= 0 for s in e["shape"])):
                raise ValueError(f"{index_path}: malformed entry {e!r}.")
            arr = data[e["key"]]
            if arr.dtype.name != e["dtype"] or list(arr.shape) != e["shape"]:
                raise ValueError(f"{index_path}: the data of {e['name']!r} does not match its "
                                 "declared shape and dtype.")
            if e["name"] in out:
                raise ValueError(f"{index_path}: {e['name']!r} appears twice.")
            out[e["name"]] = arr
    return out


class Checkpoint:
    """Groups objects (Variables, models, optimizers, anything holding Variables) to save
    and restore their Variables together.

    >>> import os, tempfile, tapegrad as tf
    >>> class Net:
    ...     def __init__(self):
    ...         self.w = tf.Variable([1.0, 2.0])
    >>> net, step = Net(), tf.Variable(0)
    >>> ckpt = tf.train.Checkpoint(step=step, net=net)
    >>> path = ckpt.save(os.path.join(tempfile.mkdtemp(), "ckpt"))
    >>> _ = net.w.assign([0.0, 0.0])
    >>> ckpt.restore(path).assert_consumed()
    <...CheckpointLoadStatus object at ...>
    >>> net.w.numpy().tolist(), os.path.basename(path)
    ([1.0, 2.0], 'ckpt-1')
    """

    def __init__(self, root=None, **kwargs):
        object.__setattr__(self, "_children", {})
        object.__setattr__(self, "_save_counter", None)
        if root is not None:
            self._children.update(graph._children(root))
        for name, obj in sorted(kwargs.items()):
            setattr(self, name, obj)

    def __setattr__(self, name, obj):
        # as in TensorFlow, ``ckpt.name = obj`` adds (or replaces) a dependency
        if name.startswith("_"):
            return object.__setattr__(self, name, obj)
        if not graph.is_trackable(obj):
            raise ValueError("`Checkpoint` was expecting a trackable object (an object "
                             f"derived from `Trackable`), got {obj!r}.")
        self._children[name] = obj
        restore_pending()

    def __getattr__(self, name):
        children = self.__dict__.get("_children", {})
        if name in children:
            return children[name]
        raise AttributeError(f"'Checkpoint' object has no attribute '{name}'")

    @property
    def save_counter(self):
        """The number of ``save`` calls so far (a Variable, saved with the checkpoint)."""
        if self._save_counter is None:
            self._save_counter = Variable(np.int64(0), trainable=False, name="save_counter")
        return self._save_counter

    def _variables(self):
        return {p + SUFFIX: v for p, v in graph.variables_by_path(self._roots()).items()}

    def write(self, file_prefix, options=None):
        """Write the checkpoint to exactly ``file_prefix`` (no counter, no state file)."""
        file_prefix = os.fspath(file_prefix)
        write_values(file_prefix, {n: np.array(v._value) for n, v in self._variables().items()})
        return file_prefix

    def save(self, file_prefix, options=None):
        """Write ``{file_prefix}-{n}`` (n counts saves) and record it in the directory's
        ``checkpoint`` file; returns the path."""
        counter = self.save_counter
        counter.assign_add(1)
        path = self.write(f"{os.fspath(file_prefix)}-{int(counter)}")
        state_file.record(path)
        return path

    def read(self, save_path, options=None):
        """Restore from ``save_path`` (a prefix written by ``write`` or ``save``)."""
        return self.restore(save_path)

    def restore(self, save_path, options=None):
        """Assign the saved values to the Variables found at the same paths.

        ``save_path`` None restores nothing (``restore(manager.latest_checkpoint)`` on a
        first run). A value whose Variable does not exist yet is assigned when it is
        created (deferred restoration, as in TensorFlow); a newer restore of this
        checkpoint replaces what an older one still waited for. The returned status's
        ``assert_consumed()`` says whether everything matched.
        """
        if save_path is None:
            return CheckpointLoadStatus(None)
        saved = read_values(os.fspath(save_path))
        if self._save_counter is None and "save_counter" + SUFFIX in saved:
            self.save_counter  # noqa: B018 (created, so the saved count is restored)
        for r in list(_PENDING):
            if r.checkpoint() is self:
                _PENDING.remove(r)
        restoration = _Restoration(self, saved, os.fspath(save_path))
        restoration.run()
        if restoration.pending:
            _PENDING.append(restoration)
        return CheckpointLoadStatus(restoration)

    def _roots(self):
        kids = sorted(self._children.items())
        if self._save_counter is not None:
            kids.append(("save_counter", self._save_counter))
        return kids


def _assign(var, value, name):
    if tuple(value.shape) != tuple(var.shape):
        raise ValueError(f"Received incompatible tensor with shape {tuple(value.shape)} when "
                         f"attempting to restore variable with shape {tuple(var.shape)} and "
                         f"name {name}.")
    if value.dtype != var.dtype:
        if value.dtype.kind != var.dtype.kind:  # float32 into float64 is fine, not int
            raise TypeError(f"Cannot restore {name}: the checkpoint holds {value.dtype.name}, "
                            f"the variable is {var.dtype.name}.")
        value = value.astype(var.dtype)
    if STATE.stack.tracers:
        # a Variable created inside tf.function (a model built on its first call there):
        # its restored value is its initial value, set now, not an assignment the traced
        # program would repeat on every call
        with var._lock:
            var._value = np.array(value)
    else:
        var.assign(value)


# Restorations still waiting for Variables to be created, oldest first (so a newer one's
# values win where two wait for the same Variable).
_PENDING = []


def restore_pending():
    """Give the Variables created since a ``restore`` their saved values (TensorFlow's
    deferred restoration); a no-op when no restore is waiting.

    >>> import os, tempfile, tapegrad as tf
    >>> class Net:
    ...     pass
    >>> net = Net(); net.w = tf.Variable([1.0, 2.0])
    >>> path = tf.train.Checkpoint(net=net).save(os.path.join(tempfile.mkdtemp(), "c"))
    >>> other = Net(); ckpt = tf.train.Checkpoint(net=other)
    >>> status = ckpt.restore(path)          # other.w does not exist yet
    >>> other.w = tf.Variable([0.0, 0.0]); restore_pending()
    >>> other.w.numpy().tolist()
    [1.0, 2.0]
    """
    if not _PENDING:
        return
    for r in list(_PENDING):
        r.run()
        if not r.pending and r in _PENDING:
            _PENDING.remove(r)


class _Restoration:
    """One ``restore``: the saved values and which of them still wait for a Variable.

    It holds the checkpoint's objects weakly where they allow it (so waiting keeps no
    model alive); when they are all gone it is dropped, with a warning if values never
    found their Variable and ``expect_partial`` was not called."""

    def __init__(self, checkpoint, saved, path):
        self.checkpoint = weakref.ref(checkpoint)
        self.saved, self.path = saved, path
        self.pending = set(saved)
        self.partial = False
        self._roots = []
        for name, obj in checkpoint._roots():
            try:
                self._roots.append((name, weakref.ref(obj, self._gone), True))
            except TypeError:  # a list or dict: held as it is
                self._roots.append((name, obj, False))

    def roots(self):
        ckpt = self.checkpoint()
        if ckpt is not None:  # its dependencies now, including ones added since
            return ckpt._roots()
        return [(n, ref() if weak else ref) for n, ref, weak in self._roots
                if not weak or ref() is not None]

    def current(self):
        return {p + SUFFIX: v for p, v in graph.variables_by_path(self.roots()).items()}

    def run(self):
        if not self.pending:
            return
        current = self.current()
        for name in sorted(self.pending):
            var = current.get(name)
            if var is not None:
                self.pending.discard(name)  # a value that does not fit fails once
                _assign(var, self.saved[name], name)

    def _gone(self, _ref):
        if self.checkpoint() is not None or any(ref() is not None for _, ref, weak in
                                                 self._roots if weak):
            return
        if any(not weak for _, _, weak in self._roots):
            return
        if self in _PENDING:
            _PENDING.remove(self)
            if self.pending and not self.partial:
                warnings.warn(f"Restoring {self.path}: the objects were deleted while "
                              f"{len(self.pending)} saved values were not restored (no "
                              f"variable at {sorted(self.pending)[:3]}...). Build the "
                              "objects after restoring or before it (call the model once; "
                              "optimizer.build(model.trainable_variables)), or use "
                              ".expect_partial().", stacklevel=2)


class CheckpointLoadStatus:
    """What a restore matched: ``assert_consumed``, ``assert_existing_objects_matched``,
    ``expect_partial`` (no warning about saved values nothing took). Each assertion first
    gives Variables created since the restore their values."""

    def __init__(self, restoration):
        self._r = restoration

    def _state(self):
        restore_pending()
        r = self._r
        current = r.current()
        return sorted(r.pending), sorted(set(current) - set(r.saved))

    def assert_consumed(self):
        """Every saved value restored, and every Variable found got a value."""
        if self._r is None:
            return self
        unused, missing = self._state()
        if unused or missing:
            raise AssertionError(
                f"Unresolved checkpoint values: saved but not restored {unused}; "
                f"variables without a saved value {missing}.")
        return self

    def assert_existing_objects_matched(self):
        """Every Variable found now got a saved value."""
        if self._r is None:
            return self
        _, missing = self._state()
        if missing:
            raise AssertionError(f"Variables without a saved value: {missing}")
        return self

    def assert_nontrivial_match(self):
        return self

    def expect_partial(self):
        """Saved values that never find a Variable are not warned about."""
        if self._r is not None:
            self._r.partial = True
        return self

    def run_restore_ops(self, session=None):
        """Nothing to run: values are assigned by ``restore`` itself (or when their
        Variables are created)."""

    initialize_or_restore = run_restore_ops
