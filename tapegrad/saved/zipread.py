"""A ZIP reader for untrusted archives: every size is checked before a byte is read.

``zipfile`` trusts an archive's sizes: it parses a central directory of any length, and it
decompresses a member whole when asked for it. Here the end record is read first (a bounded
read at the end of the file), the number of members and the size of the central directory
are checked against the caller's limits before the directory is parsed, and a member is
read as a ``MemberStream`` in bounded pieces: never more than its declared size comes out
of the decompressor, and its size and CRC are verified at its end. Only stored and deflated
members are read; encrypted ones, archives on several disks and members that overlap the
directory are refused. Every problem raises ``LoadError``.
"""
import struct
import zlib

from tapegrad.saved.format import LoadError

STORED, DEFLATED = 0, 8
CHUNK = 1 << 20                     # bytes read or decompressed per step
_EOCD = struct.Struct("<4sHHHHIIH")            # end of central directory record
_EOCD64_LOCATOR = struct.Struct("<4sIQI")
_EOCD64 = struct.Struct("<4sQHHIIQQQQ")
_CENTRAL = struct.Struct("<4sHHHHHHIIIHHHHHII")  # central directory file header
_LOCAL = struct.Struct("<4sHHHHHIIIHH")          # local file header
_MAX_COMMENT = 0xFFFF
_MAX_ENTRY = _CENTRAL.size + 3 * 1024            # a directory entry, name and extra fields


class Member:
    """One member as the central directory declares it."""

    __slots__ = ("name", "method", "flags", "csize", "usize", "crc", "offset")

    def __init__(self, name, method, flags, csize, usize, crc, offset):
        self.name, self.method, self.flags = name, method, flags
        self.csize, self.usize, self.crc, self.offset = csize, usize, crc, offset


class ZipReader:
    """The members of the archive in ``f`` (a seekable binary file of ``size`` bytes).

    ``max_members`` bounds the central directory before it is parsed; its bytes are charged
    to ``budget`` (an ``arrays.Budget``) before they are read.
    """

    def __init__(self, f, size, where, max_members, budget=None):
        self.f, self.size, self.where = f, size, where
        end = self._end_record()
        count, cd_size, cd_offset = end
        if count > max_members:
            self.fail(f"holds {count} members, more than the {max_members} expected")
        if cd_size > count * _MAX_ENTRY:
            self.fail(f"has a central directory of {cd_size} bytes for {count} members")
        if budget is not None:
            budget.charge(cd_size, f"{where}'s central directory")
        self.members = {}
        data = self._read_at(cd_offset, cd_size)
        pos = 0
        for _ in range(count):
            m, pos = self._entry(data, pos)
            if m.name in self.members:
                self.fail(f"holds the member {m.name!r} twice")
            self.members[m.name] = m
        if pos != cd_size:
            self.fail("has a central directory that does not match its end record")
        self.data_end = cd_offset  # members lie before the directory

    def fail(self, msg):
        raise LoadError(f"{self.where} {msg}")

    def _read_at(self, offset, n):
        if offset < 0 or n < 0 or offset + n > self.size:
            self.fail("is truncated (a size or offset points past its end)")
        self.f.seek(offset)
        data = self.f.read(n)
        if len(data) != n:
            self.fail("is truncated")
        return data

    def _end_record(self):
        tail_len = min(self.size, _EOCD.size + _MAX_COMMENT)
        tail = self._read_at(self.size - tail_len, tail_len)
        i = tail.rfind(b"PK\x05\x06")
        if i < 0 or len(tail) - i < _EOCD.size:
            self.fail("is not a ZIP archive (no end record)")
        (_, disk, cd_disk, n_here, count, cd_size, cd_offset,
         comment) = _EOCD.unpack_from(tail, i)
        eocd_at = self.size - tail_len + i
        if 0xFFFF in (n_here, count) or 0xFFFFFFFF in (cd_size, cd_offset):
            return self._zip64_end(eocd_at)
        if disk or cd_disk or n_here != count:
            self.fail("spans several disks")
        if cd_offset + cd_size > eocd_at:
            self.fail("has a central directory that overlaps its end record")
        return count, cd_size, cd_offset

    def _zip64_end(self, eocd_at):
        at = eocd_at - _EOCD64_LOCATOR.size
        sig, disk, rec_at, n_disks = _EOCD64_LOCATOR.unpack(
            self._read_at(at, _EOCD64_LOCATOR.size))
        if sig != b"PK\x06\x07" or disk or n_disks != 1 or rec_at + _EOCD64.size > at:
            self.fail("has a damaged ZIP64 end record")
        (sig, _, _, _, disk, cd_disk, n_here, count, cd_size,
         cd_offset) = _EOCD64.unpack(self._read_at(rec_at, _EOCD64.size))
        if sig != b"PK\x06\x06" or disk or cd_disk or n_here != count:
            self.fail("has a damaged ZIP64 end record")
        if cd_offset + cd_size > rec_at:
            self.fail("has a central directory that overlaps its end record")
        return count, cd_size, cd_offset

    def _entry(self, data, pos):
        if pos + _CENTRAL.size > len(data):
            self.fail("has a truncated central directory")
        (sig, _, _, flags, method, _, _, crc, csize, usize, n_name, n_extra, n_comment,
         disk, _, _, offset) = _CENTRAL.unpack_from(data, pos)
        if sig != b"PK\x01\x02":
            self.fail("has a damaged central directory")
        start = pos + _CENTRAL.size
        end = start + n_name + n_extra + n_comment
        if end > len(data):
            self.fail("has a truncated central directory")
        raw = data[start:start + n_name]
        if not (raw and raw.isascii() and raw.decode("ascii").isprintable()):
            self.fail(f"has a member name that is not printable ASCII: {raw[:40]!r}")
        name = raw.decode("ascii")
        extra = data[start + n_name:start + n_name + n_extra]
        usize, csize, offset = self._zip64_sizes(extra, usize, csize, offset, name)
        if flags & 0x41:
            self.fail(f"holds the encrypted member {name!r}")
        if method not in (STORED, DEFLATED):
            self.fail(f"holds the member {name!r} compressed with method {method}; only "
                      "stored and deflated members are read")
        if method == STORED and csize != usize:
            self.fail(f"holds the stored member {name!r} with two different sizes")
        if disk not in (0, 0xFFFF):
            self.fail("spans several disks")
        return Member(name, method, flags, csize, usize, crc, offset), end

    def _zip64_sizes(self, extra, usize, csize, offset, name):
        want = [usize == 0xFFFFFFFF, csize == 0xFFFFFFFF, offset == 0xFFFFFFFF]
        if not any(want):
            return usize, csize, offset
        pos = 0
        while pos + 4 <= len(extra):
            tag, n = struct.unpack_from("<HH", extra, pos)
            if tag == 1:
                vals, body = [], extra[pos + 4:pos + 4 + n]
                for k in range(len(body) // 8):
                    vals.append(struct.unpack_from("<Q", body, 8 * k)[0])
                got = [usize, csize, offset]
                for i in range(3):
                    if want[i]:
                        if not vals:
                            break
                        got[i] = vals.pop(0)
                else:
                    return tuple(got)
            pos += 4 + n
        self.fail(f"holds the member {name!r} without its ZIP64 sizes")

    def open(self, name):
        """A ``MemberStream`` of member ``name`` (checked to lie inside the archive)."""
        m = self.members[name]
        sig, _, _, _, _, _, _, _, _, n_name, n_extra = _LOCAL.unpack(
            self._read_at(m.offset, _LOCAL.size))
        if sig != b"PK\x03\x04":
            self.fail(f"has a damaged local header for {name!r}")
        local_name = self._read_at(m.offset + _LOCAL.size, n_name)
        if local_name != name.encode("ascii"):
            self.fail(f"names the member {name!r} differently in its local header")
        start = m.offset + _LOCAL.size + n_name + n_extra
        if start + m.csize > self.data_end:
            self.fail(f"holds the member {name!r} past the start of its central directory")
        return MemberStream(self.f, start, m, f"{self.where} member {name!r}")

    def window(self, name):
        """Member ``name`` (stored) as a file of its own: a bounded view, nothing read."""
        s = self.open(name)
        if s.m.method != STORED:
            raise ValueError("window: the member is compressed")
        return _Window(self.f, s.pos, s.m.usize), s.m.usize


class MemberStream:
    """A member's bytes in bounded pieces; ``finish`` verifies its size and CRC."""

    def __init__(self, f, start, m, where):
        self.f, self.pos, self.m, self.where = f, start, m, where
        self.left_in, self.left_out, self.crc = m.csize, m.usize, 0
        self.d = zlib.decompressobj(-15) if m.method == DEFLATED else None
        self.tail = b""

    def fail(self, msg):
        raise LoadError(f"{self.where} {msg}")

    def _raw(self, n):
        n = min(n, self.left_in)
        self.f.seek(self.pos)
        data = self.f.read(n)
        if len(data) != n:
            self.fail("is truncated")
        self.pos += n
        self.left_in -= n
        return data

    def _piece(self, want):
        if self.d is None:
            return self._raw(min(want, CHUNK))
        while True:
            if not self.tail:
                self.tail = self._raw(CHUNK)
            try:  # max_length: never more output than asked for, whatever the ratio
                out = self.d.decompress(self.tail, want)
            except zlib.error as e:
                self.fail(f"is not valid deflate data ({e})")
            self.tail = self.d.unconsumed_tail
            if out:
                return out
            if self.d.eof or (not self.tail and not self.left_in):
                return b""

    def read(self, n):
        """Exactly ``min(n, bytes left)`` bytes."""
        n = min(n, self.left_out)
        parts, got = [], 0
        while got < n:
            piece = self._piece(min(n - got, CHUNK))
            if not piece:
                self.fail(f"is shorter than its declared {self.m.usize} bytes")
            parts.append(piece)
            got += len(piece)
        data = b"".join(parts)
        self.crc = zlib.crc32(data, self.crc)
        self.left_out -= len(data)
        return data

    def readinto(self, buf):
        """Fill the writable bytes ``buf`` (a memoryview), piece by piece."""
        mv, at = memoryview(buf).cast("B"), 0
        while at < len(mv):
            data = self.read(min(CHUNK, len(mv) - at))
            mv[at:at + len(data)] = data
            at += len(data)

    def finish(self):
        """Check that the member ended where declared and its CRC matches."""
        if self.left_out:
            self.fail(f"was not read to its end ({self.left_out} bytes left)")
        if self.d is not None:
            while not self.d.eof and (self.tail or self.left_in):
                if not self.tail:
                    self.tail = self._raw(CHUNK)
                try:
                    extra = self.d.decompress(self.tail, 1)
                except zlib.error as e:
                    self.fail(f"is not valid deflate data ({e})")
                if extra:
                    self.fail(f"is longer than its declared {self.m.usize} bytes")
                self.tail = self.d.unconsumed_tail
            if not self.d.eof:
                self.fail("ends before its deflate stream does (truncated)")
            if self.d.unused_data or self.tail or self.left_in:
                self.fail("has trailing data after its deflate stream")
        elif self.left_in:
            self.fail("has trailing data")
        if self.crc != self.m.crc:
            self.fail("fails its CRC check (damaged)")

    def read_all(self):
        data = self.read(self.left_out)
        self.finish()
        return data


class _Window:
    """``length`` bytes of ``f`` from ``start``, as a seekable read-only file."""

    def __init__(self, f, start, length):
        self.f, self.start, self.length, self.at = f, start, length, 0

    def seek(self, offset, whence=0):
        self.at = offset if whence == 0 else self.at + offset if whence == 1 else \
            self.length + offset
        return self.at

    def tell(self):
        return self.at

    def read(self, n=-1):
        n = self.length - self.at if n is None or n < 0 else min(n, self.length - self.at)
        if n <= 0:
            return b""
        self.f.seek(self.start + self.at)
        data = self.f.read(n)
        self.at += len(data)
        return data
