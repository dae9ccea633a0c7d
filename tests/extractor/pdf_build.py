"""Raw PDFs written object by object, for tests that need what no PDF library would write."""

from __future__ import annotations

import zlib


def pdf(objects: list[bytes], *, root: int = 1, xref: bool = True) -> bytes:
    """A PDF whose object N (1-based) is objects[N-1], with a correct cross-reference table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    start = len(out)
    if xref:
        out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
        for offset in offsets:
            out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        root,
        start,
    )
    return bytes(out)


def stream(data: bytes, extra: bytes = b"") -> bytes:
    return b"<< /Length %d %s >>\nstream\n" % (len(data), extra) + data + b"\nendstream"


def flate(data: bytes) -> bytes:
    return zlib.compress(data, 9)


FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"


def one_page(content: bytes, *, extra_resources: bytes = b"", filters: bytes = b"") -> list[bytes]:
    """Objects 1-5: catalog, pages, a page showing `content` (object 4), the font (object 5)."""
    return [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> " + extra_resources + b" >> >>",
        stream(content, filters),
        FONT,
    ]


def text_content(lines: list[str], size: int = 11, top: int = 740) -> bytes:
    ops = [b"BT /F1 %d Tf" % size]
    y = top
    for line in lines:
        ops.append(b"1 0 0 1 72 %d Tm (%s) Tj" % (y, line.encode("latin-1")))
        y -= int(size * 1.3)
    ops.append(b"ET")
    return b"\n".join(ops)
