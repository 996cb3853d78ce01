"""``tf.train.Checkpoint``: save and restore the Variables of a set of objects.

Files, for a prefix ``ckpt-3`` (TensorFlow's names; the contents are tapegrad's):

- ``ckpt-3.index`` — UTF-8 JSON: ``{"format": "tapegrad.checkpoint", "version": 1,
  "values": [{"name": PATH, "key": "v0", "shape": [..], "dtype": "float32"}, ...]}`` where
  ``PATH`` is the attribute path of a Variable followed by ``/.ATTRIBUTES/VARIABLE_VALUE``;
- ``ckpt-3.data-00000-of-00001`` — ``numpy.savez`` of the values, member ``KEY.npy`` each,
  read with ``allow_pickle=False`` and checked against the index.

``save`` also writes the directory's ``checkpoint`` file (TensorFlow's text format, the
quoted relative paths only), which ``tf.train.latest_checkpoint`` reads. Nothing is pickled.
"""
import json
import os
import warnings

import numpy as np

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
        kids = sorted(self._children.items())
        if self._save_counter is not None:
            kids.append(("save_counter", self._save_counter))
        return {p + SUFFIX: v for p, v in graph.variables_by_path(kids).items()}

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
        """Assign the saved values to the Variables found at the same paths now.

        ``save_path`` None restores nothing (``restore(manager.latest_checkpoint)`` on a
        first run). Variables must exist: restoring does not wait for them to be created
        (TensorFlow defers such restores), so build models and optimizers first; the
        returned status's ``assert_consumed()`` says whether everything matched.
        """
        if save_path is None:
            return CheckpointLoadStatus({}, {}, None)
        saved = read_values(os.fspath(save_path))
        if self._save_counter is None and "save_counter" + SUFFIX in saved:
            self.save_counter  # noqa: B018 (created, so the saved count is restored)
        current = self._variables()
        for name, var in current.items():
            if name in saved:
                _assign(var, saved[name], name)
        return CheckpointLoadStatus(saved, current, save_path)


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
    var.assign(value)


class CheckpointLoadStatus:
    """What a restore matched: ``assert_consumed``, ``assert_existing_objects_matched``,
    ``expect_partial`` (silences the warning about saved values nothing took)."""

    def __init__(self, saved, current, path):
        self._unused = sorted(set(saved) - set(current))
        self._missing = sorted(set(current) - set(saved))
        self._path, self._partial = path, not saved

    def assert_consumed(self):
        """Every saved value restored, and every Variable found got a value."""
        self._partial = True
        if self._unused or self._missing:
            raise AssertionError(
                f"Unresolved checkpoint values: saved but not restored {self._unused}; "
                f"variables without a saved value {self._missing}.")
        return self

    def assert_existing_objects_matched(self):
        """Every Variable found now got a saved value."""
        self._partial = True
        if self._missing:
            raise AssertionError(f"Variables without a saved value: {self._missing}")
        return self

    def assert_nontrivial_match(self):
        return self

    def expect_partial(self):
        self._partial = True
        return self

    def run_restore_ops(self, session=None):
        """Nothing to run: values are assigned by ``restore`` itself."""

    initialize_or_restore = run_restore_ops

    def __del__(self):
        if not self._partial and self._unused:
            warnings.warn(f"Restoring {self._path}: {len(self._unused)} saved values were not "
                          f"restored (no variable at {self._unused[:3]}...). Build the objects "
                          "before restoring (call the model once; optimizer.build("
                          "model.trainable_variables)), or use .expect_partial().",
                          stacklevel=2)
