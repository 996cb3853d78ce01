"""Hostile saved files, each built here byte by byte: memory bombs, zip bombs, lying sizes,
encrypted and exotic members, crafted params. Each gives ``LoadError`` (and allocates
nothing of the declared size), or loads a program that does what it declares.
"""
import io
import json
import struct
import tracemalloc
import zipfile
import zlib

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.saved import LoadError

MiB = 2 ** 20


# ---- building files -----------------------------------------------------------------------
def var(name, shape, dtype="float64"):
    return {"name": name, "shape": list(shape), "dtype": dtype}


def eqn(prim, inputs, params, out):
    return {"primitive": prim, "inputs": inputs, "params": params, "outputs": [out]}


def doc(inputs, equations, outputs, constants=()):
    return {"format": "tapegrad.saved", "version": 1,
            "function": {"name": "f", "inputs": inputs, "captures": [],
                         "constants": list(constants), "equations": equations,
                         "outputs": outputs, "updates": []},
            "variables": [],
            "output_structure": {"tuple": [{"tensor": i} for i in range(len(outputs))]}}


def npy(shape, dtype="float64", data=None):
    """An .npy header for ``shape`` and ``dtype``, followed by ``data`` (or zeros)."""
    buf = io.BytesIO()
    d = np.dtype(dtype)
    np.lib.format.write_array_header_1_0(
        buf, {"descr": np.lib.format.dtype_to_descr(d), "fortran_order": False,
              "shape": tuple(shape)})
    n = int(np.prod(shape)) * d.itemsize
    return buf.getvalue() + (bytes(n) if data is None else data)


def member(name, raw, method=0, usize=None, flags=0, crc=None, data=None):
    """A ZIP member: ``raw`` bytes, stored (0) or deflated (8) here unless ``data`` (the
    bytes as written) is given; sizes and CRC as declared (default: the true ones)."""
    if data is None:
        data = raw if method == 0 else zlib.compress(raw, 9)[2:-4]
    return dict(name=name.encode(), data=data, method=method, flags=flags,
                usize=len(raw) if usize is None else usize,
                crc=zlib.crc32(raw) if crc is None else crc)


def zip_bytes(members):
    """A ZIP archive written by hand, so that any field can lie."""
    out, central = io.BytesIO(), []
    for m in members:
        offset = out.tell()
        out.write(struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, m["flags"], m["method"], 0,
                              0x21, m["crc"], len(m["data"]), m["usize"], len(m["name"]), 0))
        out.write(m["name"] + m["data"])
        central.append(struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, m["flags"],
                                   m["method"], 0, 0x21, m["crc"], len(m["data"]), m["usize"],
                                   len(m["name"]), 0, 0, 0, 0, 0, offset) + m["name"])
    start = out.tell()
    out.write(b"".join(central))
    out.write(struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(members), len(members),
                          out.tell() - start, start, 0))
    return out.getvalue()


def archive(d, arrays=(), program_method=8):
    """A saved file: ``d`` as program.json, ``arrays`` (members) as constants.npz."""
    text = json.dumps(d, separators=(",", ":")).encode()
    return zip_bytes([member("program.json", text, program_method),
                      member("constants.npz", zip_bytes(list(arrays)))])


def zeros_deflated(n_mib):
    """Deflate data of ``n_mib`` MiB of zeros (about 1 KiB per MiB), made without them."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    seg = c.compress(bytes(MiB)) + c.flush(zlib.Z_FULL_FLUSH)  # the same bytes each MiB
    return seg * n_mib + zlib.compressobj(9, zlib.DEFLATED, -15).flush()


def load_bounded(data, limit=16 * MiB, **kw):
    """``tf.saved.load(data)`` while tracing Python and NumPy allocations: the peak stays
    below ``limit`` (far below the sizes the hostile files declare)."""
    tracemalloc.start()
    try:
        try:
            return tf.saved.load(data, **kw)
        finally:
            peak = tracemalloc.get_traced_memory()[1]
            assert peak < limit, f"load allocated {peak} bytes"
    finally:
        tracemalloc.stop()


# ---- memory bombs --------------------------------------------------------------------------------
def test_a_tiny_file_declaring_huge_inputs_loads_without_allocating_them():
    big, half = [2 ** 20, 2 ** 20], [2 ** 19, 2 ** 20]
    d = doc([var("x", big), var("h", half)], [
        eqn("argmax", ["x"], {"axis": {"int": 1}, "output_type": {"dtype": "int64"}},
            var("a", [2 ** 20], "int64")),
        eqn("concat", ["h", "h"], {"axis": {"int": 0}}, var("c", big)),
        eqn("pad", ["h"], {"paddings": {"tuple": [{"tuple": [{"int": 1}, {"int": 1}]},
                                                  {"tuple": [{"int": 0}, {"int": 0}]}]},
                           "constant_values": {"float": "0.0"}}, var("p", [2 ** 19 + 2, 2 ** 20])),
    ], ["a", "c", "p"])
    data = archive(d)
    assert len(data) < 1024  # 2**40 elements declared by well under a kilobyte
    m = load_bounded(data)
    assert [v.shape for v in m.program.outputs] == [(2 ** 20,), tuple(big), (2 ** 19 + 2, 2 ** 20)]


def test_a_lying_declaration_of_a_huge_input_is_refused_without_allocating():
    d = doc([var("x", [2 ** 20, 2 ** 20])], [
        eqn("argmax", ["x"], {"axis": {"int": 1}, "output_type": {"dtype": "int64"}},
            var("a", [2 ** 20, 1], "int64"))], ["a"])
    with pytest.raises(LoadError, match="declared"):
        load_bounded(archive(d))


def _constant_doc(shape):
    return doc([], [], ["k"], constants=[{"var": var("k", shape), "data": "const0",
                                          "broadcast": False}])


def test_a_compressed_npz_member_is_bounded_by_max_bytes_before_it_is_decompressed():
    n = 256  # MiB of float64 zeros, in about 256 KiB of deflate data
    header = npy([n * MiB // 8], data=b"")
    c = zlib.compressobj(9, zlib.DEFLATED, -15)  # one deflate stream: the header, the zeros
    stream = c.compress(header) + c.flush(zlib.Z_FULL_FLUSH) + zeros_deflated(n)
    m = member("const0.npy", b"", 8, data=stream, usize=len(header) + n * MiB, crc=0)
    f = archive(_constant_doc([n * MiB // 8]), [m])
    assert len(f) < 400 * 1024
    with pytest.raises(LoadError, match="max_bytes=1048576"):
        load_bounded(f, max_bytes=MiB)


def test_a_zip_bomb_is_refused_before_it_is_decompressed():
    stream = zeros_deflated(1024)  # 1 GiB of zeros in about 1 MiB
    header = npy([2], data=b"")
    honest = member("const0.npy", b"", 8, data=stream, usize=2 ** 30, crc=0)
    f = archive(_constant_doc([2]), [honest])
    assert len(f) < 1100 * 1024
    with pytest.raises(LoadError, match="const0"):  # the program declares 2 elements
        load_bounded(f)
    # the same data behind a central directory that declares the 2 elements the program
    # does: decompression stops at the declared size, and the excess is detected
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    stream = c.compress(header) + c.flush(zlib.Z_FULL_FLUSH) + zeros_deflated(1024)
    lying = member("const0.npy", b"", 8, data=stream, usize=len(header) + 16,
                   crc=zlib.crc32(header + bytes(16)))
    with pytest.raises(LoadError, match="longer than its declared"):
        load_bounded(archive(_constant_doc([2]), [lying]))


def test_the_default_bound_is_named_when_a_file_declares_more():
    # a central directory declaring 6 GiB of arrays, in a file of a few hundred bytes
    ms = [member(f"const{i}.npy", npy([2]), 8, usize=3 * 2 ** 30) for i in range(2)]
    with pytest.raises(LoadError, match=f"max_bytes={tf.saved.MAX_BYTES}"):
        load_bounded(archive(_constant_doc([2]), ms))
    assert tf.saved.MAX_BYTES == 2 ** 32  # the documented default (docs/saved_format.md)


def test_a_missing_or_unreadable_path_is_a_load_error(tmp_path):
    with pytest.raises(LoadError, match="No such file"):
        tf.saved.load(tmp_path / "nowhere.tgz")
    with pytest.raises(LoadError):
        tf.saved.load(tmp_path)  # a directory


def test_a_program_json_bomb_is_refused_before_it_is_decompressed():
    stream = zeros_deflated(100)
    m = member("program.json", b"", 8, data=stream, usize=100 * MiB, crc=0)
    f = zip_bytes([m, member("constants.npz", zip_bytes([]))])
    with pytest.raises(LoadError, match="over the limit"):
        load_bounded(f)
    lying = member("program.json", b"", 8, data=stream, usize=100, crc=0)
    f = zip_bytes([lying, member("constants.npz", zip_bytes([]))])
    with pytest.raises(LoadError, match="longer than its declared|not a valid"):
        load_bounded(f)


def test_a_directory_of_a_million_members_is_refused_before_it_is_parsed():
    d = _constant_doc([2])
    entry = member("const0.npy", npy([2]))
    npz = zip_bytes([entry])
    # patch the end record to claim a million members
    npz = npz[:-22] + struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF,
                                  *struct.unpack("<II", npz[-10:-2]), 0)
    text = json.dumps(d).encode()
    f = zip_bytes([member("program.json", text, 8), member("constants.npz", npz)])
    with pytest.raises(LoadError):
        load_bounded(f)


# ---- exotic archives ---------------------------------------------------------------------------
def _good_bytes(tmp_path):
    f = tf.function(lambda x: tf.reduce_sum(x * tf.constant([1.0, 2.0, 3.0]), axis=[0]))
    tf.saved.save(f.get_concrete_function(tf.zeros([3])), tmp_path / "g.tgz")
    return (tmp_path / "g.tgz").read_bytes()


def test_an_encrypted_member_is_refused(tmp_path):
    data = bytearray(_good_bytes(tmp_path))
    i = data.index(b"PK\x01\x02")  # the first central directory entry: set "encrypted"
    data[i + 8] |= 1
    with pytest.raises(LoadError, match="encrypted"):
        tf.saved.load(bytes(data))


def test_members_compressed_otherwise_than_stored_or_deflated_are_refused(tmp_path):
    good = tmp_path / "g.tgz"
    good.write_bytes(_good_bytes(tmp_path))
    bad = tmp_path / "b.tgz"
    with zipfile.ZipFile(good) as z, zipfile.ZipFile(bad, "w") as out:
        out.writestr("program.json", z.read("program.json"), zipfile.ZIP_BZIP2)
        out.writestr("constants.npz", z.read("constants.npz"))
    with pytest.raises(LoadError, match="method 12"):
        tf.saved.load(bad)


def test_deflated_npz_members_and_a_deflated_npz_load(tmp_path):
    good = tmp_path / "g.tgz"
    good.write_bytes(_good_bytes(tmp_path))
    with zipfile.ZipFile(good) as z:
        text, npz = z.read("program.json"), z.read("constants.npz")
    with zipfile.ZipFile(io.BytesIO(npz)) as z:
        arrays = [member(n, z.read(n), 8) for n in z.namelist()]
    f = zip_bytes([member("program.json", text, 8),
                   member("constants.npz", zip_bytes(arrays), 8)])
    m = tf.saved.load(f)
    assert m(tf.constant([1.0, 1.0, 1.0])).numpy().tolist() == 6.0


def test_the_arguments_of_load_may_be_a_path_bytes_or_a_file(tmp_path):
    data = _good_bytes(tmp_path)
    for src in (tmp_path / "g.tgz", str(tmp_path / "g.tgz"), data, io.BytesIO(data)):
        assert tf.saved.load(src)(tf.constant([1.0, 0.0, 0.0])).numpy().tolist() == 1.0
    with pytest.raises(TypeError, match="max_bytes"):
        tf.saved.load(data, max_bytes=-1)


def test_a_crafted_npy_header_is_refused(tmp_path):
    d = _constant_doc([2])
    for header in [b"{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2,), }",
                   b"{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x': 1}",
                   b"__import__('os').system('true')",
                   b"{'descr': 'O', 'fortran_order': False, 'shape': (2,), }",
                   b"(" * 3000]:
        raw = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header) + 1) + header + b"\n"
        f = archive(d, [member("const0.npy", raw + bytes(16))])
        with pytest.raises(LoadError) as e:
            tf.saved.load(f)
        assert "pickle" not in str(e.value)


def test_no_numpy_advice_about_pickles_reaches_our_errors(tmp_path):
    d = _constant_doc([2])
    buf = io.BytesIO()
    np.save(buf, np.array([None, None], dtype=object), allow_pickle=True)
    with pytest.raises(LoadError) as e:
        tf.saved.load(archive(d, [member("const0.npy", buf.getvalue())]))
    assert "allow_pickle" not in str(e.value) and "unsupported dtype" in str(e.value)


def test_a_future_format_version_is_refused(tmp_path):
    d = _constant_doc([2])
    d["version"] = 2
    with pytest.raises(LoadError, match="version 2 is not supported"):
        tf.saved.load(archive(d, [member("const0.npy", npy([2]))]))


# ---- crafted params --------------------------------------------------------------------------
def _one(prim, in_shape, params, out_shape, out_dtype="float64", nin=1, in_dtype="float64"):
    ins = [var(f"x{i}", in_shape, in_dtype) for i in range(nin)]
    return archive(doc(ins, [eqn(prim, [v["name"] for v in ins], params,
                                 var("y", out_shape, out_dtype))], ["y"]))


def T(*ints):
    return {"tuple": [{"int": i} for i in ints]}


CRAFTED = {
    "tuple-valued dtype": (_one("cast", [3], {"dtype": {"tuple": [{"str": "float32"}]}}, [3],
                                "float32"), "dtype must be a dtype name"),
    "dtype name with quotes": (_one("cast", [3], {"dtype": {"str": "f4')"}}, [3], "float32"),
                               "letters, digits"),
    "bad transpose perm": (_one("transpose", [2, 3], {"perm": T(0, 0)}, [2, 2]),
                           "permutation"),
    "short transpose perm": (_one("transpose", [2, 3, 4], {"perm": T(1, 0)}, [3, 2]),
                             "permutation"),
    "argsort axis None declared [3,3]": (
        _one("argsort", [3, 3], {"axis": {"none": None}, "descending": {"bool": False},
                                 "stable": {"bool": True}}, [3, 3], "int32"), "must be an int"),
    "argmax axis out of range": (_one("argmax", [3, 4], {"axis": {"int": 2}, "output_type": {
        "dtype": "int64"}}, [3], "int64"), r"must lie in \[0, 1\]"),
    "reduce_sum axis out of range": (_one("reduce_sum", [3, 4], {"axis": T(5), "keepdims": {
        "bool": False}}, [3]), r"must lie in \[0, 1\]"),
    "reduce_sum repeated axis": (_one("reduce_sum", [3, 4], {"axis": T(0, 0), "keepdims": {
        "bool": False}}, [4]), "repeats an axis"),
    "reduce_max of an empty axis": (_one("reduce_max", [0, 4], {"axis": T(0), "keepdims": {
        "bool": False}}, [4]), "no identity"),
    "cumsum negative axis": (_one("cumsum", [3], {"axis": {"int": -1}, "exclusive": {
        "bool": False}, "reverse": {"bool": False}}, [3]), r"must lie in \[0, 0\]"),
    "concat axis out of range": (_one("concat", [3], {"axis": {"int": 1}}, [6], nin=2),
                                 r"must lie in \[0, 0\]"),
    "take axis out of range": (archive(doc([var("x", [3]), var("i", [2], "int64")], [
        eqn("take", ["x", "i"], {"axis": {"int": 1}}, var("y", [2]))], ["y"])),
        r"must lie in \[0, 0\]"),
    "einsum operand count": (_one("einsum", [2, 2], {"subscripts": {"str": "ij,jk->ik"}},
                                  [2, 2]), "name 2 operands"),
    "einsum rank": (_one("einsum", [2, 2], {"subscripts": {"str": "ijk->i"}}, [2]),
                    "rank 2"),
    "einsum letter sizes": (archive(doc([var("a", [2, 3]), var("b", [4, 5])], [
        eqn("einsum", ["a", "b"], {"subscripts": {"str": "ij,jk->ik"}}, var("y", [2, 5]))],
        ["y"])), "sizes 3 and 4"),
    "einsum unknown output letter": (_one("einsum", [2, 2], {"subscripts": {"str": "ij->iz"}},
                                          [2, 2]), "only letters of the operands"),
    "einsum ellipsis": (_one("einsum", [2, 2], {"subscripts": {"str": "...->..."}}, [2, 2]),
                        "letters only"),
    "reshape to another size": (_one("reshape", [2, 3], {"shape": T(4, 2)}, [4, 2]),
                                "needs 8"),
    "broadcast_to a smaller rank": (_one("broadcast_to", [2, 3], {"shape": T(3)}, [2, 3]),
                                    "cannot be broadcast"),
    "pad widths of the wrong rank": (_one("pad", [2, 3], {"paddings": {"tuple": [T(1, 1)]},
                                                          "constant_values": {"int": 0}},
                                          [4, 3]), "2 pairs"),
    "pad value outside the integer dtype": (_one(
        "pad", [2], {"paddings": {"tuple": [T(1, 1)]}, "constant_values": {"float": "0.5"}},
        [4], "int8", in_dtype="int8"), "not a int8 value"),
    "getitem index out of range": (archive(doc([var("x", [3, 4])], [eqn(
        "getitem", ["x"], {"index": {"index": [{"int": 3}]}}, var("y", [4]))], ["y"])),
        "out of bounds"),
    "index_add of the wrong shape": (archive(doc([var("g", [2])], [eqn(
        "index_add", ["g"], {"index": {"index": [{"int": 1}]}, "shape": T(3, 4)},
        var("y", [3, 4]))], ["y"])), "not the shape"),
    "integer_pow negative on ints": (_one("integer_pow", [3], {"y": {"int": -1}}, [3], "int64",
                                          in_dtype="int64"), "negative power"),
    "exp of bools declared bool": (_one("exp", [3], {}, [3], "bool", in_dtype="bool"),
                                   "the rule gives"),
    "random_normal of ints": (archive(doc([], [eqn("random_normal", [], {
        "shape": T(2), "dtype": {"dtype": "int32"}, "mean": {"float": "0.0"},
        "stddev": {"float": "1.0"}, "seed": {"int": 1}}, var("y", [2], "int32"))], ["y"])),
        "kinds f"),
    "random_normal negative stddev": (archive(doc([], [eqn("random_normal", [], {
        "shape": T(2), "dtype": {"dtype": "float64"}, "mean": {"float": "0.0"},
        "stddev": {"float": "-1.0"}, "seed": {"int": 1}}, var("y", [2]))], ["y"])), ">= 0"),
    "argmax output_type float": (_one("argmax", [3, 4], {"axis": {"int": 1}, "output_type": {
        "dtype": "float32"}}, [3], "float32"), "int32"),
}


@pytest.mark.parametrize("case", sorted(CRAFTED))
def test_crafted_params_are_refused(case):
    data, message = CRAFTED[case]
    with pytest.raises(LoadError, match=message):
        tf.saved.load(data)


# ---- reproducible files ------------------------------------------------------------------------
def test_saving_the_same_program_twice_gives_the_same_bytes(tmp_path):
    w = tf.Variable(np.arange(6.0, dtype=np.float32).reshape(3, 2), name="w")
    f = tf.function(lambda x: {"b": tf.matmul(x, w), "a": x[:, ::-1] * 2.0})
    cf = f.get_concrete_function(tf.zeros([2, 3]))
    tf.saved.save(cf, tmp_path / "a.tgz")
    tf.saved.save(cf, tmp_path / "b.tgz")
    tf.saved.save(f.get_concrete_function(tf.zeros([2, 3])), tmp_path / "c.tgz")
    a = (tmp_path / "a.tgz").read_bytes()
    assert a == (tmp_path / "b.tgz").read_bytes() == (tmp_path / "c.tgz").read_bytes()
    with zipfile.ZipFile(io.BytesIO(a)) as z:
        assert {i.date_time for i in z.infolist()} == {(1980, 1, 1, 0, 0, 0)}
        with zipfile.ZipFile(io.BytesIO(z.read("constants.npz"))) as inner:
            assert {i.date_time for i in inner.infolist()} == {(1980, 1, 1, 0, 0, 0)}
            assert inner.namelist() == sorted(inner.namelist())
