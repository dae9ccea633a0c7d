"""Zip packages for the tests, including ones whose headers lie (for the Office readers' bounds)."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Iterable, Mapping

_LOCAL_HEADER = b"PK\x03\x04"
_CENTRAL_HEADER = b"PK\x01\x02"


def package(parts: Mapping[str, bytes | str], *, method: int = zipfile.ZIP_DEFLATED) -> bytes:
    """A zip holding `parts` (text parts written as UTF-8)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, body in parts.items():
            archive.writestr(name, body.encode("utf-8") if isinstance(body, str) else body)
    return buffer.getvalue()


def with_declared_size(data: bytes, part: str, declared: int) -> bytes:
    """`data` with `part`'s uncompressed size rewritten to `declared` in both of its headers."""
    patched = bytearray(data)
    name = part.encode("utf-8")
    layouts = ((_LOCAL_HEADER, 22, 26, 30), (_CENTRAL_HEADER, 24, 28, 46))
    for header, size_offset, length_offset, name_offset in layouts:
        start = 0
        while (start := patched.find(header, start)) >= 0:
            name_length = struct.unpack_from("<H", patched, start + length_offset)[0]
            if patched[start + name_offset : start + name_offset + name_length] == name:
                struct.pack_into("<I", patched, start + size_offset, declared)
            start += 4
    return bytes(patched)


def deflated_zeros(size: int, chunk: int = 1 << 20) -> Iterable[bytes]:
    """The raw deflate stream of `size` zero bytes, made a megabyte at a time."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    zeros = bytes(chunk)
    left = size
    while left > 0:
        piece = zeros if left >= chunk else bytes(left)
        yield compressor.compress(piece)
        left -= len(piece)
    yield compressor.flush()


def bomb(parts: Mapping[str, bytes | str], bomb_part: str, inflated: int, declared: int) -> bytes:
    """A zip of `parts` plus `bomb_part`: `inflated` zero bytes declared as `declared`."""
    data = package({**parts, bomb_part: b"placeholder"})
    compressed = b"".join(deflated_zeros(inflated))
    # Rebuild the bomb member by hand: a local header, the stream, and a central entry.
    buffer = io.BytesIO(data)
    with zipfile.ZipFile(buffer) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    del members[bomb_part]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, body in members.items():
            archive.writestr(name, body)
        info = zipfile.ZipInfo(bomb_part)
        info.compress_type = zipfile.ZIP_DEFLATED
        # writestr would compress; write the raw stream through the low-level API instead.
        with archive.open(info, "w", force_zip64=False) as member:
            member.write(b"")
    return _replace_member_stream(out.getvalue(), bomb_part, compressed, declared)


def _replace_member_stream(data: bytes, part: str, stream: bytes, declared: int) -> bytes:
    """Rewrite an empty deflated member into one holding `stream` and declaring `declared` bytes."""
    name = part.encode("utf-8")
    local = data.find(_LOCAL_HEADER)
    while local >= 0:
        name_length, extra_length = struct.unpack_from("<HH", data, local + 26)
        if data[local + 30 : local + 30 + name_length] == name:
            break
        local = data.find(_LOCAL_HEADER, local + 4)
    name_length, extra_length = struct.unpack_from("<HH", data, local + 26)
    old_size = struct.unpack_from("<I", data, local + 18)[0]
    flags = struct.unpack_from("<H", data, local + 6)[0]
    body_start = local + 30 + name_length + extra_length
    body_end = body_start + old_size
    if flags & 0x08:  # a data descriptor follows the (empty) stream: drop it
        descriptor = 16 if data[body_end : body_end + 4] == b"PK\x07\x08" else 12
        body_end += descriptor
    header = bytearray(data[local:body_start])
    struct.pack_into("<H", header, 6, flags & ~0x08)
    struct.pack_into("<III", header, 14, 0, len(stream), declared)
    rebuilt = data[:local] + bytes(header) + stream + data[body_end:]
    shift = len(rebuilt) - len(data)
    return _fix_central(rebuilt, part, local, len(stream), declared, shift)


def _fix_central(
    data: bytes, part: str, local: int, compressed: int, declared: int, shift: int
) -> bytes:
    patched = bytearray(data)
    name = part.encode("utf-8")
    end = patched.rfind(b"PK\x05\x06")
    central = struct.unpack_from("<I", patched, end + 16)[0] + shift
    struct.pack_into("<I", patched, end + 16, central)
    position = central
    while patched[position : position + 4] == _CENTRAL_HEADER:
        name_length, extra_length, comment_length = struct.unpack_from(
            "<HHH", patched, position + 28
        )
        offset = struct.unpack_from("<I", patched, position + 42)[0]
        if offset > local:
            struct.pack_into("<I", patched, position + 42, offset + shift)
        if patched[position + 46 : position + 46 + name_length] == name:
            flags = struct.unpack_from("<H", patched, position + 8)[0]
            struct.pack_into("<H", patched, position + 8, flags & ~0x08)
            struct.pack_into("<III", patched, position + 16, 0, compressed, declared)
        position += 46 + name_length + extra_length + comment_length
    return bytes(patched)
