"""``save`` and ``load``: the zip archive around ``program.json`` and ``constants.npz``.

Saving is deterministic: the same program gives the same bytes (fixed timestamps and
permissions, sorted JSON keys, npz members written in key order). Loading reads the archive
with ``zipread`` (every size checked before it is read) and ``arrays`` (every ``.npy``
header checked against the program's declarations before its data), then decodes and checks
the program; whatever the file, only ``LoadError`` leaves ``load``.
"""
import contextlib
import io
import json
import os
import zipfile

import numpy as np

from tapegrad.core.tensor import Variable
from tapegrad.ir import IRError, check, derivative_passes, optimize
from tapegrad.ir.names import named
from tapegrad.saved import decode, encode
from tapegrad.saved.arrays import Arrays, Budget
from tapegrad.saved.format import (CONSTANTS_MEMBER, FORMAT, MAX_ARRAYS, MAX_BYTES,
                                   MAX_ELEMENTS, MAX_JSON_BYTES, PROGRAM_MEMBER, VERSION,
                                   VERSIONS,
                                   LoadError)
from tapegrad.saved.loaded import LoadedFunction
from tapegrad.saved.zipread import STORED, ZipReader
from tapegrad.util import nest

_TOP = ("format", "version", "function", "variables", "output_structure")
_DATE = (1980, 1, 1, 0, 0, 0)  # the earliest ZIP timestamp: saved files carry no date


# -- save ---------------------------------------------------------------------------------------
def _check_save_args(signatures, options):
    """TensorFlow's extra arguments: ``options`` a ``SaveOptions`` (``saved/options.py``),
    ``signatures`` not supported (a file holds the one function given)."""
    from tapegrad.saved.options import SaveOptions
    if options is not None and not isinstance(options, SaveOptions):
        raise TypeError(f"save: `options` must be a tf.saved_model.SaveOptions, got {options!r}.")
    if signatures is not None:
        raise NotImplementedError("save: `signatures` is not supported; a tapegrad file holds "
                                  "the one function passed (a ConcreteFunction).")


def save(fn, path, signatures=None, options=None):
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
    _check_save_args(signatures, options)
    data = archive_bytes(fn)
    path = os.fspath(path)
    tmp = f"{path}.{os.getpid()}.partial"
    try:  # write aside, then rename: a crash never leaves a half-written file at ``path``
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def archive_bytes(fn):
    """The saved file of ``fn`` as bytes, built in memory (``save`` writes them; the
    transport pickles and ships them); the same program always gives the same bytes."""
    cf = _concrete(fn)
    if getattr(cf, "custom_gradient_dropped", False):
        raise ValueError(
            "save: the function calls a tf.custom_gradient function, whose gradient function "
            "is Python code that a saved file cannot hold (differentiating the loaded program "
            "would give the plain gradient instead). Save a function that computes the "
            "gradient it needs with a GradientTape inside: that gradient is saved exactly.")
    # The program without algebraic simplification: that one keeps zero gradients zero
    # (rather than unconnected) when the loaded function is differentiated.
    # Values under the user's names (ir/names.py): the file does not keep the origins.
    program = check(named(optimize(cf.raw_program, derivative_passes())))
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
    text = json.dumps(doc, separators=(",", ":"), sort_keys=True,
                      allow_nan=False).encode("utf-8")
    npz = io.BytesIO()
    with zipfile.ZipFile(npz, "w") as z:  # numpy.savez would stamp the time of day
        for key in sorted(enc.arrays):
            member = io.BytesIO()
            np.lib.format.write_array(member, enc.arrays[key], allow_pickle=False)
            z.writestr(_member(f"{key}.npy", zipfile.ZIP_STORED), member.getvalue())
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr(_member(PROGRAM_MEMBER, zipfile.ZIP_DEFLATED), text)
        z.writestr(_member(CONSTANTS_MEMBER, zipfile.ZIP_STORED), npz.getvalue())
    return out.getvalue()



def _member(name, compression):
    info = zipfile.ZipInfo(name, date_time=_DATE)
    info.compress_type, info.create_system, info.external_attr = compression, 3, 0o644 << 16
    return info


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
def load(path, max_bytes=MAX_BYTES):
    """Load a function saved by ``save``; it runs without the original Python code.

    ``path`` is a file name, an open binary file, or the bytes of a saved file. The file is
    validated completely and nothing in it is executed: an invalid, truncated, crafted or
    newer file raises ``LoadError``, and no other exception leaves ``load``. ``max_bytes``
    (default 4 GiB) bounds every byte read or decompressed, checked before reading; a file
    over it is refused with a message naming the bound. The result can be called,
    differentiated by a ``GradientTape`` and vectorized by ``vmap``. See ``tapegrad.saved``
    for an example.
    """
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
        raise TypeError(f"load: max_bytes must be an int >= 0, got {max_bytes!r}")
    where = "<bytes>" if isinstance(path, (bytes, bytearray, memoryview)) else \
        getattr(path, "name", None) if hasattr(path, "read") else os.fspath(path)
    where = where if isinstance(where, str) else "<file>"
    try:
        with _opened(path) as (f, size):
            return _load(f, size, max_bytes)
    except LoadError as e:
        raise LoadError(f"{where}: {e}") from None
    except Exception as e:  # noqa: BLE001 - whatever the file does, only LoadError leaves
        raise LoadError(f"{where}: not a valid tapegrad saved program "
                        f"({_describe(e)})") from None


@contextlib.contextmanager
def _opened(path):
    if isinstance(path, (bytes, bytearray, memoryview)):
        data = bytes(path)
        yield io.BytesIO(data), len(data)
    elif hasattr(path, "read"):
        size = path.seek(0, os.SEEK_END)
        yield path, size
    else:
        with open(os.fspath(path), "rb") as f:
            yield f, os.fstat(f.fileno()).st_size


def _describe(e):
    text = " ".join(str(e).split())[:200]
    if "pickle" in text:  # NumPy's advice about allow_pickle is not for readers of our files
        text = "refused"
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def _load(f, size, max_bytes):
    budget = Budget(max_bytes)
    outer = ZipReader(f, size, "the archive", max_members=2)
    if sorted(outer.members) != sorted([PROGRAM_MEMBER, CONSTANTS_MEMBER]):
        raise LoadError(f"expected exactly the members {PROGRAM_MEMBER!r} and "
                        f"{CONSTANTS_MEMBER!r}, found {sorted(outer.members)[:10]!r}")
    program = outer.members[PROGRAM_MEMBER]
    if program.usize > MAX_JSON_BYTES:
        raise LoadError(f"{PROGRAM_MEMBER} declares {program.usize} bytes, over the limit of "
                        f"{MAX_JSON_BYTES} bytes")
    budget.charge(program.usize, PROGRAM_MEMBER)
    doc = _parse(outer.open(PROGRAM_MEMBER).read_all())
    if outer.members[CONSTANTS_MEMBER].method == STORED:  # as save writes it: read in place
        npz, npz_size = outer.window(CONSTANTS_MEMBER)
    else:
        npz_size = outer.members[CONSTANTS_MEMBER].usize
        budget.charge(npz_size, CONSTANTS_MEMBER)
        npz = io.BytesIO(outer.open(CONSTANTS_MEMBER).read_all())
    # every array is named in program.json (at least 8 bytes each): a bound on the directory
    n_arrays = min(MAX_ARRAYS, program.usize // 8 + 1)
    arrays = Arrays(ZipReader(npz, npz_size, CONSTANTS_MEMBER, max_members=n_arrays,
                              budget=budget), budget)
    return _build(doc, arrays)


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
    if isinstance(doc["version"], bool) or doc["version"] not in VERSIONS:
        raise LoadError(f"format version {decode._short(doc['version'])} is not supported; "
                        f"this tapegrad reads versions {', '.join(map(str, VERSIONS))}")
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
