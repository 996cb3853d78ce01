"""``save`` and ``load``: the zip archive around ``program.json`` and ``constants.npz``."""
import io
import json
import os
import zipfile
import zlib

import numpy as np

from tapegrad.core.tensor import Variable
from tapegrad.ir import IRError, check, cse, dce, fold_constants, optimize
from tapegrad.saved import decode, encode
from tapegrad.saved.format import (ARRAY_KEY, CONSTANTS_MEMBER, DTYPES, FORMAT, MAX_ELEMENTS,
                                   MAX_JSON_BYTES, PROGRAM_MEMBER, VERSION, LoadError)
from tapegrad.saved.loaded import LoadedFunction
from tapegrad.util import nest

_TOP = ("format", "version", "function", "variables", "output_structure")


# -- save ---------------------------------------------------------------------------------------
def save(fn, path):
    """Save a compiled function to ``path`` (one file): its program, constants and variables.

    ``fn`` is a ``ConcreteFunction`` (``f.get_concrete_function(...)``) or a
    ``tapegrad.function`` with an ``input_signature``. Captured variables are saved with
    their current values and come back as new ``tf.Variable`` s. Nothing is pickled.

    >>> import os, tempfile, tapegrad as tf
    >>> f = tf.function(lambda x: x * 2.0 + 1.0)
    >>> path = os.path.join(tempfile.mkdtemp(), "f.tgz")
    >>> tf.saved.save(f.get_concrete_function(tf.zeros([2])), path)
    >>> tf.saved.load(path)(tf.constant([0.0, 1.0])).numpy().tolist()
    [1.0, 3.0]
    """
    cf = _concrete(fn)
    # The program without algebraic simplification: that one keeps zero gradients zero
    # (rather than unconnected) when the loaded function is differentiated.
    program = check(optimize(cf.raw_program, (fold_constants, cse, dce)))
    variables = list(cf.variables)
    if len(variables) != len(program.captures):
        raise ValueError("save: a function that takes tf.Variables as arguments cannot be "
                         "saved; let it capture them (use them inside without passing them).")
    n_leaves = len(nest.flatten(cf.structured_outputs))
    if n_leaves != len(program.outputs):
        raise ValueError("save: the function returns Python values besides tensors; only "
                         "(nested lists, tuples and dicts of) tensors can be saved.")
    enc = encode.Encoder()
    doc = {"format": FORMAT, "version": VERSION,
           "function": enc.program(program),
           "variables": [{"name": v.name, "trainable": bool(v.trainable),
                          "data": enc.array("var", np.asarray(v._value))} for v in variables],
           "output_structure": encode.tree(cf.structured_outputs, iter(range(n_leaves)))}
    text = json.dumps(doc, separators=(",", ":"), allow_nan=False).encode("utf-8")
    npz = io.BytesIO()
    np.savez(npz, **enc.arrays)
    path = os.fspath(path)
    tmp = f"{path}.{os.getpid()}.partial"
    try:  # write aside, then rename: a crash never leaves a half-written file at ``path``
        with open(tmp, "wb") as f, zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(PROGRAM_MEMBER, text)
            z.writestr(zipfile.ZipInfo(CONSTANTS_MEMBER), npz.getvalue(), zipfile.ZIP_STORED)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _concrete(fn):
    from tapegrad.compile import ConcreteFunction, Function
    if isinstance(fn, ConcreteFunction):
        return fn
    if isinstance(fn, Function):
        if fn.input_signature is None:
            raise TypeError("save: this tapegrad.function has no input_signature, so which "
                            "trace to save is ambiguous; pass f.get_concrete_function(...) "
                            "with example arguments or TensorSpecs.")
        return fn.get_concrete_function()
    raise TypeError(f"save: expected a ConcreteFunction or a tapegrad.function, got "
                    f"{type(fn).__name__}.")


# -- load -----------------------------------------------------------------------------------------
def load(path, max_bytes=2 ** 34):
    """Load a function saved by ``save``; it runs without the original Python code.

    The file is validated completely and nothing in it is executed: an invalid, truncated or
    crafted file raises ``LoadError``. ``max_bytes`` bounds the constants read into memory.
    The result can be called, differentiated by a ``GradientTape`` and vectorized by ``vmap``.
    See ``tapegrad.saved`` for an example.
    """
    where = os.fspath(path)
    try:
        with zipfile.ZipFile(where) as z:
            names = z.namelist()
            if sorted(names) != sorted([PROGRAM_MEMBER, CONSTANTS_MEMBER]):
                raise LoadError(f"{where}: expected exactly the members {PROGRAM_MEMBER!r} "
                                f"and {CONSTANTS_MEMBER!r}, found {names[:10]!r}")
            if z.getinfo(PROGRAM_MEMBER).file_size > MAX_JSON_BYTES:
                raise LoadError(f"{where}: {PROGRAM_MEMBER} is larger than {MAX_JSON_BYTES} "
                                "bytes")
            if z.getinfo(CONSTANTS_MEMBER).file_size > max_bytes:
                raise LoadError(f"{where}: the constants take more than max_bytes={max_bytes}")
            doc = _parse(z.read(PROGRAM_MEMBER))
            arrays = Arrays(z.read(CONSTANTS_MEMBER))
        return _build(doc, arrays)
    except LoadError as e:
        if str(e).startswith(where):
            raise
        raise LoadError(f"{where}: {e}") from None
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError, TypeError, KeyError,
            IndexError, AttributeError, RecursionError, UnicodeDecodeError, IRError,
            NotImplementedError) as e:  # NotImplementedError: zip features we do not read
        raise LoadError(f"{where}: not a valid tapegrad saved program "
                        f"({type(e).__name__}: {e})") from None


def _no_duplicates(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise LoadError(f"{PROGRAM_MEMBER}: the key {k!r} appears twice in one object")
        d[k] = v
    return d


def _no_floats(s):  # the format writes floats as typed strings: a bare JSON number is foreign
    raise LoadError(f"{PROGRAM_MEMBER}: unexpected JSON number {s[:40]!r}")


def _parse(raw):
    doc = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicates,
                     parse_float=_no_floats, parse_constant=_no_floats)
    decode.keys(doc, _TOP, PROGRAM_MEMBER)
    if doc["format"] != FORMAT:
        raise LoadError(f"not a tapegrad saved program (format {decode._short(doc['format'])})")
    if doc["version"] != VERSION or isinstance(doc["version"], bool):
        raise LoadError(f"format version {decode._short(doc['version'])} is not supported; "
                        f"this tapegrad reads version {VERSION}")
    return doc


def _build(doc, arrays):
    program = decode.Decoder(arrays).program(doc["function"], "function")
    try:
        check(program)
    except IRError as e:
        raise LoadError(f"inconsistent program: {e}") from None
    specs = decode.as_list(doc["variables"], "variables")
    if len(specs) != len(program.captures):
        raise LoadError(f"variables: {len(specs)} entries for {len(program.captures)} captures")
    variables = []
    for k, (spec, cap) in enumerate(zip(specs, program.captures)):
        w = f"variables[{k}]"
        decode.keys(spec, ("name", "trainable", "data"), w)
        name, trainable = spec["name"], spec["trainable"]
        if not (isinstance(name, str) and len(name) <= 256 and name.isprintable()):
            raise LoadError(f"{w}: invalid name {decode._short(name)}")
        if not isinstance(trainable, bool):
            raise LoadError(f"{w}: trainable must be true or false")
        value = np.array(arrays.read(spec["data"], w, cap.shape, cap.dtype))
        variables.append(Variable(value, trainable=trainable,
                                  name=name[:-2] if name.endswith(":0") else name))
    arrays.finish()
    leaves = []
    structure = _tree(doc["output_structure"], leaves, "output_structure")
    if leaves != list(range(len(program.outputs))):
        raise LoadError(f"output_structure: leaves {leaves[:20]} do not number the "
                        f"{len(program.outputs)} outputs in order")
    return LoadedFunction(program, variables, structure)


def _tree(d, leaves, where):
    if not isinstance(d, dict) or len(d) != 1:
        raise LoadError(f"{where}: invalid structure {decode._short(d)}")
    (kind, v), = d.items()
    if kind == "tensor":
        leaves.append(decode.as_int(v, where, 0, MAX_ELEMENTS))
        return None
    if kind in ("list", "tuple"):
        items = [_tree(x, leaves, where) for x in decode.as_list(v, where)]
        return items if kind == "list" else tuple(items)
    if kind == "dict":
        out = {}
        for item in decode.as_list(v, where):
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
                raise LoadError(f"{where}: dict items are [key, structure] pairs")
            out[item[0]] = _tree(item[1], leaves, where)
        return out
    raise LoadError(f"{where}: invalid structure {decode._short(d)}")


class Arrays:
    """The members of ``constants.npz``, each read once, after its header was checked."""

    def __init__(self, data):
        self.npz = np.load(io.BytesIO(data), allow_pickle=False)
        if not isinstance(self.npz, np.lib.npyio.NpzFile):
            raise LoadError(f"{CONSTANTS_MEMBER} is not an npz archive")
        self.keys = {}
        for name in self.npz.zip.namelist():
            key = name[:-4] if name.endswith(".npy") else None
            if key is None or not ARRAY_KEY.match(key) or key in self.keys:
                raise LoadError(f"{CONSTANTS_MEMBER}: unexpected member {decode._short(name)}")
            self.keys[key] = name
        self.used = set()

    def read(self, key, where, shape, dtype, kinds="biufc"):
        if not isinstance(key, str) or key not in self.keys:
            raise LoadError(f"{where}: array {decode._short(key)} is missing from "
                            f"{CONSTANTS_MEMBER}")
        if key in self.used:
            raise LoadError(f"{where}: array {key!r} is used twice")
        self.used.add(key)
        info = self.npz.zip.getinfo(self.keys[key])
        with self.npz.zip.open(info) as f:  # the header first: no object arrays, no surprises
            version = np.lib.format.read_magic(f)
            if version not in ((1, 0), (2, 0)):
                raise LoadError(f"{where}: unsupported .npy version {version}")
            read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                           else np.lib.format.read_array_header_2_0)
            got_shape, _, got_dtype = read_header(f)
            header_len = f.tell()
        if got_dtype.hasobject or got_dtype.kind not in kinds or got_dtype.name not in DTYPES:
            raise LoadError(f"{where}: array {key!r} has the unsupported dtype {got_dtype}")
        size = int(np.prod(got_shape, dtype=object)) if got_shape else 1
        if size > MAX_ELEMENTS or (shape is not None and tuple(got_shape) != tuple(shape)) \
                or (dtype is not None and got_dtype.name != dtype.name):
            raise LoadError(f"{where}: array {key!r} is {got_dtype.name}{list(got_shape)}, "
                            f"expected {getattr(dtype, 'name', 'int or bool')}"
                            f"{list(shape) if shape is not None else ''}")
        if info.file_size != header_len + size * got_dtype.itemsize:
            raise LoadError(f"{where}: array {key!r} is truncated or has trailing data")
        value = self.npz[key]
        return value.astype(DTYPES[got_dtype.name], copy=False)  # native byte order

    def finish(self):
        unused = sorted(set(self.keys) - self.used)
        if unused:
            raise LoadError(f"{CONSTANTS_MEMBER}: unexpected arrays {unused[:10]}")
