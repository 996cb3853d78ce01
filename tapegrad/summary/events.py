"""TensorBoard's event files, written and read without TensorFlow or protobuf: the TFRecord
framing (length, masked CRC-32C, data, masked CRC-32C) around hand-encoded ``Event``
protocol buffers holding ``Summary`` values (TensorFlow 2's form: a tensor and the plugin
that reads it, "scalars" or "histograms").

>>> rec = encode_event(wall_time=1.0, step=3, values=[scalar_value("loss", 0.5)])
>>> decode_event(rec)["summary"][0]["tag"], decode_event(rec)["step"]
('loss', 3)
"""
import struct

import numpy as np

# ---- CRC-32C (Castagnoli), TFRecord's checksum ------------------------------------------------
_POLY = 0x82F63B78
_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ _POLY if _c & 1 else _c >> 1
    _TABLE.append(_c)


def crc32c(data):
    """CRC-32C of ``data`` (bytes). ``crc32c(b"123456789") == 0xE3069283``."""
    crc = 0xFFFFFFFF
    table = _TABLE
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc(data):
    """TFRecord's masked CRC: rotate right by 15 and add a constant (mod 2**32)."""
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(record):
    """One TFRecord: the record's length and data, each followed by its masked CRC."""
    n = struct.pack("<Q", len(record))
    return n + struct.pack("<I", masked_crc(n)) + record + struct.pack("<I", masked_crc(record))


def unframe(data):
    """The records of a TFRecord file's bytes; a bad length or checksum raises ValueError."""
    out, i = [], 0
    while i < len(data):
        if i + 12 > len(data):
            raise ValueError("truncated record header")
        n_bytes = data[i:i + 8]
        (n,) = struct.unpack("<Q", n_bytes)
        if struct.unpack("<I", data[i + 8:i + 12])[0] != masked_crc(n_bytes):
            raise ValueError("bad length checksum")
        rec = data[i + 12:i + 12 + n]
        if len(rec) != n or struct.unpack("<I", data[i + 12 + n:i + 16 + n])[0] != \
                masked_crc(rec):
            raise ValueError("bad or truncated record")
        out.append(rec)
        i += 16 + n
    return out


# ---- protocol buffer encoding -----------------------------------------------------------------
def _varint(n):
    n &= 0xFFFFFFFFFFFFFFFF  # negative int64s take ten bytes, as protobuf writes them
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field, wire):
    return _varint(field << 3 | wire)


def _bytes(field, data):
    return _key(field, 2) + _varint(len(data)) + data


def _uint(field, n):
    return _key(field, 0) + _varint(n)


_DT = {np.dtype(np.float32): 1, np.dtype(np.float64): 2}  # TensorFlow's DataType numbers


def _tensor(array):
    """A ``TensorProto`` of a float32/float64 array (dtype, shape, raw content)."""
    dims = b"".join(_bytes(2, _uint(1, d)) for d in array.shape)  # TensorShapeProto.dim
    dtype = array.dtype if array.dtype in _DT else np.dtype(np.float32)
    content = np.ascontiguousarray(array, dtype=dtype.newbyteorder("<")).tobytes()
    return _uint(1, _DT[dtype]) + _bytes(2, dims) + _bytes(4, content)


def _value(tag, array, plugin):
    metadata = _bytes(1, _bytes(1, plugin.encode()))  # SummaryMetadata.plugin_data.plugin_name
    return _bytes(1, tag.encode()) + _bytes(9, metadata) + _bytes(8, _tensor(array))


def scalar_value(tag, value):
    """A ``Summary.Value`` of a scalar, as ``tf.summary.scalar`` writes it (float32)."""
    return _value(tag, np.asarray(value, np.float32).reshape(()), "scalars")


def histogram_value(tag, buckets):
    """A ``Summary.Value`` of a histogram: ``buckets`` is ``[k, 3]`` (left edge, right
    edge, count), as ``tf.summary.histogram`` writes it (float64)."""
    return _value(tag, np.asarray(buckets, np.float64).reshape(-1, 3), "histograms")


def encode_event(wall_time, step=0, values=None, file_version=None):
    """An ``Event``: wall time, step, and a file version or a summary of ``values``."""
    out = _key(1, 1) + struct.pack("<d", wall_time) + _uint(2, step)
    if file_version is not None:
        out += _bytes(3, file_version.encode())
    if values:
        out += _bytes(5, b"".join(_bytes(1, v) for v in values))
    return out


# ---- decoding (what the tests read back) ------------------------------------------------------
def _fields(data):
    i, out = 0, []
    while i < len(data):
        key, i = _read_varint(data, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _read_varint(data, i)
        elif wire == 1:
            v, i = data[i:i + 8], i + 8
        elif wire == 2:
            n, i = _read_varint(data, i)
            v, i = data[i:i + n], i + n
        elif wire == 5:
            v, i = data[i:i + 4], i + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        out.append((field, v))
    return out


def _read_varint(data, i):
    n = shift = 0
    while True:
        b = data[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


def _decode_tensor(data):
    dtype, dims, content = 1, [], b""
    for f, v in _fields(data):
        if f == 1:
            dtype = v
        elif f == 2:
            dims = [dict(_fields(d)).get(1, 0) for k, d in _fields(v) if k == 2]
        elif f == 4:
            content = v
    np_dtype = {1: np.float32, 2: np.float64}[dtype]
    return np.frombuffer(content, np.dtype(np_dtype).newbyteorder("<")).reshape(dims)


def decode_event(data):
    """An ``Event`` record as a dict: wall_time, step, file_version, and ``summary``: a list
    of {tag, plugin, value (an array)}."""
    out = {"wall_time": 0.0, "step": 0, "summary": []}
    for f, v in _fields(data):
        if f == 1:
            out["wall_time"] = struct.unpack("<d", v)[0]
        elif f == 2:
            out["step"] = v - (1 << 64) if v >= 1 << 63 else v
        elif f == 3:
            out["file_version"] = v.decode()
        elif f == 5:
            for k, val in _fields(v):
                if k != 1:
                    continue
                item = {}
                for vf, vv in _fields(val):
                    if vf == 1:
                        item["tag"] = vv.decode()
                    elif vf == 8:
                        item["value"] = _decode_tensor(vv)
                    elif vf == 9:
                        plugin = dict(_fields(vv)).get(1, b"")
                        item["plugin"] = dict(_fields(plugin)).get(1, b"").decode()
                out["summary"].append(item)
    return out


def read_events(path):
    """Every ``Event`` of the event file at ``path``, decoded (``decode_event``)."""
    with open(path, "rb") as f:
        return [decode_event(r) for r in unframe(f.read())]
