"""The arrays of ``constants.npz``, read without NumPy's loader and within a byte budget.

Each member ``KEY.npy`` is read when the program first names it: its header (at most
``MAX_HEADER`` bytes, a Python literal parsed by ``ast.literal_eval`` and checked field by
field: a dtype from the format's list, a shape, an order) must match the declaration of the
program, and the member's declared size must be the header plus exactly that data, before a
byte of the data is decompressed. The data is then read in bounded pieces straight into the
array, and the member's size and CRC are verified. Every byte read is charged to a
``Budget`` (``max_bytes`` of ``load``), checked before reading.
"""
import ast
import math

import numpy as np

from tapegrad.saved.format import (ARRAY_KEY, CONSTANTS_MEMBER, DTYPES, MAX_ELEMENTS,
                                   LoadError)

MAX_HEADER = 4096   # an .npy header of ours is ~120 bytes; NumPy caps them at 10000
_MAGIC = b"\x93NUMPY"
# Header dtype strings: each format dtype in both byte orders (one byte: no order).
_DESCR = {}
for _d in DTYPES.values():
    _DESCR[_d.newbyteorder("<").str] = _d.newbyteorder("<")
    _DESCR[_d.newbyteorder(">").str] = _d.newbyteorder(">")


def _short(x):
    r = repr(x)
    return r if len(r) <= 80 else r[:77] + "..."


class Budget:
    """Bytes that may still be read and decompressed (``load``'s ``max_bytes``)."""

    def __init__(self, max_bytes):
        self.max_bytes = self.left = max_bytes

    def check(self, n, what):
        if n > self.left:
            raise LoadError(f"{what} needs {n} bytes, over the limit max_bytes="
                            f"{self.max_bytes} ({self.left} left); pass a larger max_bytes "
                            "to load a file this large")

    def charge(self, n, what):
        self.check(n, what)
        self.left -= n


class Arrays:
    """The members of ``constants.npz`` (a ``ZipReader``), each read once, when named."""

    def __init__(self, reader, budget):
        self.reader, self.budget, self.keys, self.used = reader, budget, {}, set()
        total = 0
        for name, m in reader.members.items():
            key = name[:-4] if name.endswith(".npy") else None
            if key is None or not ARRAY_KEY.match(key):
                raise LoadError(f"{CONSTANTS_MEMBER}: unexpected member {_short(name)}")
            self.keys[key] = name
            total += m.usize
        # the uncompressed total, as declared, before anything is decompressed
        budget.check(total, f"{CONSTANTS_MEMBER} (its members, uncompressed)")

    def read(self, key, where, shape, dtype, kinds="biufc"):
        """The array ``key``: declared ``shape`` and ``dtype`` (None: any), of ``kinds``."""
        if not isinstance(key, str) or key not in self.keys:
            raise LoadError(f"{where}: array {_short(key)} is missing from {CONSTANTS_MEMBER}")
        if key in self.used:
            raise LoadError(f"{where}: array {key!r} is used twice")
        self.used.add(key)
        s = self.reader.open(self.keys[key])
        got_shape, got_dtype, fortran, header_len = _header(s, f"{where}: array {key!r}")
        if got_dtype.kind not in kinds:
            raise LoadError(f"{where}: array {key!r} has the unsupported dtype {got_dtype}")
        size = math.prod(got_shape)
        if size > MAX_ELEMENTS or (shape is not None and got_shape != tuple(shape)) \
                or (dtype is not None and got_dtype.name != dtype.name):
            raise LoadError(f"{where}: array {key!r} is {got_dtype.name}{list(got_shape)}, "
                            f"expected {getattr(dtype, 'name', 'int or bool')}"
                            f"{list(shape) if shape is not None else ''}")
        nbytes = size * got_dtype.itemsize
        if s.m.usize != header_len + nbytes:  # before any of the data is decompressed
            raise LoadError(f"{where}: array {key!r} is truncated or has trailing data "
                            f"(member of {s.m.usize} bytes for {header_len + nbytes})")
        self.budget.charge(nbytes + header_len, f"{where}: array {key!r}")
        value = np.empty(size, got_dtype)
        s.readinto(value)
        s.finish()
        value = value.reshape(got_shape, order="F" if fortran else "C")
        return value.astype(DTYPES[got_dtype.name], copy=False)  # native byte order

    def finish(self):
        unused = sorted(set(self.keys) - self.used)
        if unused:
            raise LoadError(f"{CONSTANTS_MEMBER}: unexpected arrays {unused[:10]}")


def _header(s, where):
    """``(shape, dtype, fortran_order, header length)`` of the ``.npy`` stream ``s``."""
    start = s.read(8)
    if len(start) != 8 or start[:6] != _MAGIC or start[6:8] not in (b"\x01\x00", b"\x02\x00"):
        raise LoadError(f"{where} is not an .npy array of version 1.0 or 2.0")
    n_len = 2 if start[6] == 1 else 4
    n = int.from_bytes(s.read(n_len), "little")
    if n > MAX_HEADER:
        raise LoadError(f"{where} has a header of {n} bytes (at most {MAX_HEADER})")
    raw = s.read(n)
    try:
        text = raw.decode("latin1")
        d = ast.literal_eval(text) if text.endswith("\n") else None
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        d = None
    if not (isinstance(d, dict) and set(d) == {"descr", "fortran_order", "shape"}):
        raise LoadError(f"{where} has an invalid .npy header {_short(raw[:60])}")
    descr, fortran, shape = d["descr"], d["fortran_order"], d["shape"]
    if not isinstance(descr, str) or descr not in _DESCR:
        raise LoadError(f"{where} has the unsupported dtype {_short(descr)}")
    if not isinstance(fortran, bool):
        raise LoadError(f"{where} has an invalid fortran_order {_short(fortran)}")
    if not (isinstance(shape, tuple) and len(shape) <= 32 and all(
            isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= MAX_ELEMENTS
            for x in shape)):
        raise LoadError(f"{where} has an invalid shape {_short(shape)}")
    return shape, _DESCR[descr], fortran, 8 + n_len + n
