"""A PDF's pictures read with OCR (formats/ocr.py): the image objects as files Leptonica decodes,
and the words placed back on the page as runs, so the layout reader reads a scanned page as it
reads any other.

An image object is read as the file it holds (JPEG, JPEG 2000, CCITT fax, which pypdf wraps as a
TIFF) or its raw samples (gray, RGB, CMYK by its black, an index of gray or RGB; 8 bits, 1 bit
gray or a mask, 16 bits by their high byte) as a PNM; JBIG2 is not read. Its width and height are
checked against the 40 M pixel bound from its dictionary before its stream is decoded, and from
its own header before Leptonica decodes it.

Each word lands where the image is drawn (the picture's matrix maps the image's unit square on
the page), on its line's baseline, at the point size Tesseract reads at 300 pixels an inch turned
to the size the image is shown at; the strokes painted out of the image are the page's rules.
"""

from __future__ import annotations

import math
from typing import Any

from extractor_sandbox.formats.ocr import (
    EncodedImage,
    FileOcr,
    ImageReading,
    ImageUnread,
    check_pixels,
    pnm_image,
)
from extractor_sandbox.formats.pdf.content import Matrix, Picture, Rule, Run, apply

OCR_FONT = "ocr"
_FILE_FILTERS = {"/DCTDecode": "JPEG", "/DCT": "JPEG", "/JPXDecode": "JPEG 2000"}
_CCITT = ("/CCITTFaxDecode", "/CCF")
_JBIG2 = "/JBIG2Decode"


def image_file(obj: Any) -> EncodedImage:
    """The image object `obj` as a file Leptonica reads; raises ImageUnread naming why not."""
    width, height = _int(obj.get("/Width")), _int(obj.get("/Height"))
    check_pixels(width, height)
    filters = obj.get("/Filter")
    names = [
        str(f) for f in (filters if isinstance(filters, list) else [filters] if filters else [])
    ]
    if _JBIG2 in names:
        raise ImageUnread("it is JBIG2, which only a separate program decodes: not read")
    try:
        data = obj.get_data()
    except Exception as error:
        raise ImageUnread(f"its stream cannot be decoded ({type(error).__name__})") from None
    last = names[-1] if names else ""
    if last in _FILE_FILTERS or last in _CCITT:
        # pypdf leaves a JPEG's or JPEG 2000's bytes as they are and wraps CCITT fax in a TIFF
        return EncodedImage(bytes(data), width, height)
    return _samples_image(obj, bytes(data), width, height)


def _samples_image(obj: Any, data: bytes, width: int, height: int) -> EncodedImage:
    """Raw samples as a PNM, by the image's colour space and bits per component."""
    if obj.get("/ImageMask"):
        inverted = _decode_inverted(obj)
        return pnm_image(data if inverted else _invert(data), width, height, "bits")
    bits = _int(obj.get("/BitsPerComponent")) or 8
    space, base, lookup = _colour_space(obj.get("/ColorSpace"))
    if space == "indexed":
        if bits != 8:
            raise ImageUnread(f"an indexed image of {bits} bits a sample is not read")
        return _indexed(data, width, height, base, lookup)
    channels = {"gray": 1, "rgb": 3, "cmyk": 4}.get(space)
    if channels is None:
        raise ImageUnread(f"its colour space ({space}) is not read")
    if bits == 1 and channels == 1:
        inverted = _decode_inverted(obj)
        # PDF's 1-bit gray is 0 for black, PBM's 1
        return pnm_image(data if inverted else _invert(data), width, height, "bits")
    if bits == 16:
        data = data[0::2]
    elif bits != 8:
        raise ImageUnread(f"an image of {bits} bits a sample is not read")
    if len(data) < width * height * channels:
        raise ImageUnread("its samples are fewer than its size needs")
    if channels == 4:
        black = data[3 : width * height * 4 : 4]
        return pnm_image(_invert(black), width, height, "gray")
    kind = "gray" if channels == 1 else "rgb"
    if channels == 1 and _decode_inverted(obj):
        data = _invert(data)
    return pnm_image(data, width, height, kind)


def _indexed(data: bytes, width: int, height: int, base: str, lookup: bytes) -> EncodedImage:
    count = width * height
    data = data[:count]
    if base == "gray":
        table = (lookup + bytes(256))[:256]
        return pnm_image(data.translate(table), width, height, "gray")
    if base == "rgb":
        padded = (lookup + bytes(768))[:768]
        out = bytearray(count * 3)
        for channel in range(3):
            out[channel::3] = data.translate(padded[channel::3])
        return pnm_image(bytes(out), width, height, "rgb")
    raise ImageUnread(f"an index of {base} is not read")


def _colour_space(value: Any) -> tuple[str, str, bytes]:
    """(space, the index's base, the index's lookup) of a /ColorSpace."""
    value = value.get_object() if hasattr(value, "get_object") else value
    if isinstance(value, list) and value:
        family = str(value[0])
        if family == "/Indexed" and len(value) >= 4:
            base, _, _ = _colour_space(value[1])
            lookup = value[3].get_object() if hasattr(value[3], "get_object") else value[3]
            raw: bytes = b""
            if isinstance(lookup, (bytes, bytearray)):
                raw = bytes(lookup)
            elif hasattr(lookup, "get_data"):  # a stream
                raw = bytes(lookup.get_data())
            elif hasattr(lookup, "original_bytes"):  # a string pypdf read as text
                raw = bytes(lookup.original_bytes)
            return "indexed", base, raw
        if family == "/ICCBased" and len(value) >= 2:
            stream = value[1].get_object()
            n = _int(stream.get("/N"))
            return {1: "gray", 3: "rgb", 4: "cmyk"}.get(n, f"ICC of {n}"), "", b""
        if family in ("/CalGray", "/CalRGB", "/Lab"):
            return {"/CalGray": "gray", "/CalRGB": "rgb", "/Lab": "Lab"}[family], "", b""
        return family.strip("/"), "", b""
    name = str(value) if value is not None else "/DeviceGray"
    return (
        {
            "/DeviceGray": "gray",
            "/G": "gray",
            "/DeviceRGB": "rgb",
            "/RGB": "rgb",
            "/DeviceCMYK": "cmyk",
            "/CMYK": "cmyk",
        }.get(name, name.strip("/")),
        "",
        b"",
    )


def _decode_inverted(obj: Any) -> bool:
    decode = obj.get("/Decode")
    try:
        return decode is not None and float(decode[0]) > float(decode[1])
    except (TypeError, ValueError, IndexError):
        return False


_INVERT = bytes(255 - k for k in range(256))


def _invert(data: bytes) -> bytes:
    return data.translate(_INVERT)


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


# -- words on the page -------------------------------------------------------------------------


def shown_inches(matrix: Matrix) -> tuple[float, float]:
    """The width and height (inches) the unit square of an image is shown at under `matrix`."""
    a, b, c, d, _, _ = matrix
    return math.hypot(a, b) / 72.0, math.hypot(c, d) / 72.0


def read_picture(ocr: FileOcr, picture: Picture) -> ImageReading:
    """OCR of a picture the page draws; raises ImageUnread naming why it is not read."""
    if picture.image is None or picture.matrix is None:
        raise ImageUnread("an image drawn inline is not read")
    width_in, height_in = shown_inches(picture.matrix)
    key = picture.key if picture.key is not None else id(picture.image)
    ocr.admit(key)
    return ocr.read(key, image_file(picture.image), width_in, height_in)


def placed_runs(
    reading: ImageReading, matrix: Matrix, first_order: int
) -> tuple[list[Run], list[Rule]]:
    """The image's words as runs on the page, and its painted-out strokes as the page's rules."""
    width, height = max(reading.width, 1), max(reading.height, 1)

    def at(px: float, py: float) -> tuple[float, float]:
        return apply(matrix, px / width, 1.0 - py / height)

    _, height_in = shown_inches(matrix)
    ppi = height / height_in if height_in > 0 else 300.0
    angle = int(round(math.degrees(math.atan2(matrix[1], matrix[0])) / 90.0)) % 4 * 90
    runs: list[Run] = []
    for k, word in enumerate(reading.words):
        if not word.text.strip("|") or not word.text.strip():
            continue  # a grid line too light to be found, read as bars
        x0, y0 = at(word.left, word.baseline)
        x1, y1 = at(word.right, word.baseline)
        if word.size > 0:
            size = word.size * 300.0 / ppi
        else:
            size = (word.bottom - word.top) / ppi * 72.0
        if size <= 0:
            continue
        runs.append(
            Run(
                word.text,
                x0,
                y0,
                x1,
                y1,
                size,
                OCR_FONT,
                word.bold,
                False,
                angle,
                first_order + k,
                None,
                first_order + k,
            )
        )
    rules: list[Rule] = []
    for rx0, ry0, rx1, ry1 in reading.rules:
        ax, ay = at(rx0, ry0)
        bx, by = at(rx1, ry1)
        rules.append(Rule(min(ax, bx), min(ay, by), max(ax, bx), max(ay, by)))
    return runs, rules


def line_texts(reading: ImageReading) -> list[str]:
    """The image's text lines, in the order Tesseract read them (a picture on a page of text)."""
    lines: dict[int, list[str]] = {}
    for word in reading.words:
        if word.text.strip("|").strip():
            lines.setdefault(word.line, []).append(word.text)
    return [" ".join(words) for _, words in sorted(lines.items())]
