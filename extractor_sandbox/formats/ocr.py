"""OCR: Tesseract 5 and Leptonica through their C APIs (ctypes), inside the confined child.

The seed's "OCR." paragraph. The child may start no program, so Tesseract is a library here, not
the `tesseract` command. `warm_ocr` (the child's warm-up, before its limits) holds OpenMP to one
thread; the libraries are loaded and the models read there, or, where the confined child may still
read files (Landlock), on the first picture a file shows. Recognising an image opens no file and
starts no thread. The settings (LOOM_EXTRACTOR_OCR, _LANGUAGES, _MAX_IMAGES) are
extractor_sandbox/ocr_settings.py's, which the service reads without loading any of this.

Bounds: an image is at most 40 M pixels, decoded or scaled, its size read from its own header (or
its PDF dictionary) before it is decoded; JBIG2 is not read (only a separate program decodes it);
an image shown at under 200 pixels an inch is scaled to about 300 first; at most 50 images a page
or slide; each image's recognition at most 20 seconds (Tesseract's own deadline).

Before the words are read the strokes longer than half an inch across or a third of an inch down
(a ruled table's grid) are painted out, and given back as the image's rules; a dark region thicker
than a tenth of an inch is no stroke, nor is a stroke within as much of one. An image mostly dark
is read turned light. Each word comes with its box, its line's baseline and the point size
Tesseract reads from its line (at 300 pixels an inch), for the reader to place it on its page.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import struct
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from extractor_sandbox.ocr_settings import (
    LIBLEPT,
    LIBTESSERACT,
    MAX_IMAGES_VARIABLE,
    OCR_VARIABLE,
    OcrSettings,
    OcrSettingsError,
    load_ocr_settings,
    tessdata_directory,
)

MAX_PIXELS = 40_000_000
MAX_IMAGES_A_PAGE = 50
IMAGE_SECONDS = 20.0
READ_PPI = 300  # the resolution Tesseract is told, and the one a coarse image is scaled to
LOW_PPI = 200  # an image shown coarser than this is scaled up first
FINEST_PPI = 600  # the stroke clean-up's sizes are those of 600 pixels an inch at most

# Leptonica's file formats (imageio.h) that have a name in a message
_FORMAT_NAMES = {
    1: "BMP",
    2: "JPEG",
    3: "PNG",
    4: "TIFF",
    5: "TIFF",
    6: "TIFF",
    7: "TIFF",
    8: "TIFF",
    9: "TIFF",
    10: "TIFF",
    11: "PNM",
    13: "GIF",
    14: "JPEG 2000",
    15: "WebP",
    19: "TIFF",
}
_RIL_TEXTLINE = 2
_RIL_WORD = 3
_PSM_AUTO = 3


class ImageUnread(Exception):
    """An image OCR does not read; the message says why (a reader's failed unit names it)."""


# -- images ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class EncodedImage:
    """An image as a file Leptonica reads (JPEG, PNG, TIFF, PNM, ...), with the size it says."""

    data: bytes
    width: int
    height: int


def pnm_image(samples: bytes, width: int, height: int, kind: str) -> EncodedImage:
    """Raw samples as a PNM: kind "gray" (8 bits), "rgb" (8 bits) or "bits" (1 bit, 1 = black).
    The size is checked before anything is built."""
    check_pixels(width, height)
    channels = {"gray": 1, "rgb": 3, "bits": 0}[kind]
    row = (width + 7) // 8 if kind == "bits" else width * channels
    if len(samples) < row * height:
        raise ImageUnread(
            f"its samples are {len(samples)} bytes, short of the {row * height} its size needs"
        )
    magic = {"gray": b"P5", "rgb": b"P6", "bits": b"P4"}[kind]
    header = magic + b"\n%d %d\n" % (width, height) + (b"" if kind == "bits" else b"255\n")
    return EncodedImage(header + samples[: row * height], width, height)


def check_pixels(width: int, height: int) -> None:
    if width < 1 or height < 1:
        raise ImageUnread(f"its size is {width} by {height} pixels")
    if width * height > MAX_PIXELS:
        raise ImageUnread(
            f"it is {width} by {height} pixels, over the {MAX_PIXELS // 1_000_000} M pixels"
            " OCR reads"
        )


def gif_frames_size(data: bytes) -> tuple[int, int]:
    """The largest of a GIF's screen and its frames, walking its blocks (each frame is decoded at
    its own size, whatever the screen says). Raises ImageUnread when its blocks cannot be walked."""
    if len(data) < 13:
        raise ImageUnread("the GIF is truncated")
    width, height, flags = struct.unpack_from("<HHB", data, 6)
    pos = 13 + (3 << ((flags & 7) + 1) if flags & 0x80 else 0)
    largest = width * height
    frames = 0
    while pos < len(data):
        kind = data[pos]
        if kind == 0x3B:
            break
        if kind == 0x21:  # an extension: its label, then sub-blocks
            pos = _skip_sub_blocks(data, pos + 2)
        elif kind == 0x2C:
            if pos + 10 > len(data):
                raise ImageUnread("the GIF is truncated")
            w, h, fflags = struct.unpack_from("<HHB", data, pos + 5)
            frames += 1
            largest = max(largest, w * h)
            width, height = max(width, w), max(height, h)
            pos += 10 + (3 << ((fflags & 7) + 1) if fflags & 0x80 else 0) + 1
            pos = _skip_sub_blocks(data, pos)
        else:
            raise ImageUnread(f"the GIF has an unknown block (0x{kind:02x})")
    if largest > MAX_PIXELS:
        raise ImageUnread(f"a GIF frame is over the {MAX_PIXELS // 1_000_000} M pixels OCR reads")
    return width, height


def _skip_sub_blocks(data: bytes, pos: int) -> int:
    while pos < len(data):
        length = data[pos]
        pos += 1 + length
        if length == 0:
            return pos
    raise ImageUnread("the GIF is truncated")


# -- the engine ------------------------------------------------------------------------------


@dataclass
class Word:
    """A word Tesseract read: its box and baseline in the image's pixels (as read, top-left
    origin), and the point size its line reads at 300 pixels an inch (0 when unknown)."""

    text: str
    left: int
    top: int
    right: int
    bottom: int
    baseline: float
    size: int
    bold: bool
    line: int  # the text line it is on, counted through the image
    confidence: float


@dataclass
class ImageReading:
    """What OCR read of one image: its words, the rules painted out (x0, y0, x1, y1 in pixels,
    top-left origin), the size it was read at (pixels) and the scale from the decoded image."""

    words: list[Word] = field(default_factory=list)
    rules: list[tuple[int, int, int, int]] = field(default_factory=list)
    width: int = 0
    height: int = 0
    scale: float = 1.0


class _Libraries:
    """The C functions used, with their types."""

    def __init__(self) -> None:
        os.environ["OMP_THREAD_LIMIT"] = "1"  # read by libgomp as it loads: no thread pool
        lept: ctypes.CDLL | None = None
        for name in LIBLEPT:
            try:
                lept = ctypes.CDLL(name)
                break
            except OSError:
                continue
        if lept is None:
            raise ImageUnread("Leptonica's library is not installed")
        try:
            tess = ctypes.CDLL(LIBTESSERACT)
        except OSError:
            raise ImageUnread("Tesseract's library is not installed") from None
        self.lept, self.tess = lept, tess
        vp, ip, i, c = ctypes.c_void_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_char_p
        f = ctypes.c_float
        sz = ctypes.c_size_t
        for lib, name, restype, argtypes in (
            (lept, "pixReadMem", vp, [c, sz]),
            (lept, "pixReadHeaderMem", i, [c, sz, ip, ip, ip, ip, ip, ip]),
            (lept, "pixDestroy", None, [ctypes.POINTER(vp)]),
            (lept, "pixGetWidth", i, [vp]),
            (lept, "pixGetHeight", i, [vp]),
            (lept, "pixGetDepth", i, [vp]),
            (lept, "pixConvertTo8", vp, [vp, i]),
            (lept, "pixScale", vp, [vp, f, f]),
            (lept, "pixInvert", vp, [vp, vp]),
            (lept, "pixAverageInRect", i, [vp, vp, vp, i, i, i, ctypes.POINTER(f)]),
            (lept, "pixConvertTo1", vp, [vp, i]),
            (lept, "pixOpenBrick", vp, [vp, vp, i, i]),
            (lept, "pixDilateBrick", vp, [vp, vp, i, i]),
            (lept, "pixSubtract", vp, [vp, vp, vp]),
            (lept, "pixOr", vp, [vp, vp, vp]),
            (lept, "pixSetMasked", i, [vp, vp, ctypes.c_uint32]),
            (lept, "pixConnComp", vp, [vp, vp, i]),
            (lept, "boxaGetCount", i, [vp]),
            (lept, "boxaGetBoxGeometry", i, [vp, i, ip, ip, ip, ip]),
            (lept, "boxaDestroy", None, [ctypes.POINTER(vp)]),
            (lept, "setMsgSeverity", i, [i]),
            (tess, "TessVersion", c, []),
            (tess, "TessBaseAPICreate", vp, []),
            (tess, "TessBaseAPIInit3", i, [vp, c, c]),
            (tess, "TessBaseAPISetVariable", i, [vp, c, c]),
            (tess, "TessBaseAPISetPageSegMode", None, [vp, i]),
            (tess, "TessBaseAPISetImage2", None, [vp, vp]),
            (tess, "TessBaseAPISetSourceResolution", None, [vp, i]),
            (tess, "TessBaseAPIRecognize", i, [vp, vp]),
            (tess, "TessBaseAPIGetIterator", vp, [vp]),
            (tess, "TessBaseAPIClear", None, [vp]),
            (tess, "TessBaseAPIEnd", None, [vp]),
            (tess, "TessBaseAPIDelete", None, [vp]),
            (tess, "TessResultIteratorDelete", None, [vp]),
            (tess, "TessResultIteratorGetPageIterator", vp, [vp]),
            (tess, "TessResultIteratorGetUTF8Text", ctypes.POINTER(ctypes.c_char), [vp, i]),
            (tess, "TessResultIteratorConfidence", f, [vp, i]),
            (tess, "TessResultIteratorWordFontAttributes", c, [vp, ip, ip, ip, ip, ip, ip, ip, ip]),
            (tess, "TessResultIteratorNext", i, [vp, i]),
            (tess, "TessPageIteratorBoundingBox", i, [vp, i, ip, ip, ip, ip]),
            (tess, "TessPageIteratorBaseline", i, [vp, i, ip, ip, ip, ip]),
            (tess, "TessPageIteratorIsAtBeginningOf", i, [vp, i]),
            (tess, "TessDeleteText", None, [ctypes.POINTER(ctypes.c_char)]),
            (tess, "TessMonitorCreate", vp, []),
            (tess, "TessMonitorDelete", None, [vp]),
            (tess, "TessMonitorSetDeadlineMSecs", None, [vp, i]),
        ):
            function = getattr(lib, name)
            function.restype = restype
            function.argtypes = argtypes
        lept.setMsgSeverity(6)  # L_SEVERITY_NONE: a hostile image fills no stderr


class Engine:
    """One Tesseract engine, initialised once (in the child's warm-up) and used for every image."""

    def __init__(self, languages: str, tessdata: str) -> None:
        self.libs = _Libraries()
        tess = self.libs.tess
        self.version = tess.TessVersion().decode("ascii", "replace")
        self.api = tess.TessBaseAPICreate()
        if not self.api:
            raise ImageUnread("Tesseract's engine cannot be created")
        if tess.TessBaseAPIInit3(self.api, tessdata.encode(), languages.encode()) != 0:
            raise ImageUnread(f"Tesseract cannot load the models {languages} from {tessdata}")
        # Ended before the interpreter exits: Tesseract's caches then warn of no leak on stderr.
        atexit.register(self.close)
        tess.TessBaseAPISetPageSegMode(self.api, _PSM_AUTO)
        # No debug or result file: the engine writes nothing.
        tess.TessBaseAPISetVariable(self.api, b"debug_file", b"/dev/null")

    def close(self) -> None:
        if self.api:
            self.libs.tess.TessBaseAPIEnd(self.api)
            self.libs.tess.TessBaseAPIDelete(self.api)
            self.api = None

    # decoding

    def header_size(self, data: bytes) -> tuple[int, int, str]:
        """(width, height, format) from the image's own header, nothing decoded."""
        if data[:4] == b"\x97JB2" or data[:8] == b"\x97\x4a\x42\x32\x0d\x0a\x1a\x0a":
            raise ImageUnread("JBIG2 is not read: only a separate program decodes it")
        # Leptonica "reads the header" of a GIF or a BMP by decoding the whole image: their sizes
        # are read here first (a GIF's every frame, each decoded at its own size).
        if data[:6] in (b"GIF87a", b"GIF89a"):
            width, height = gif_frames_size(data)
            check_pixels(width, height)
            return width, height, "GIF"
        if data[:2] == b"BM":
            if len(data) < 26:
                raise ImageUnread("the BMP is truncated")
            width, height = struct.unpack_from("<ii", data, 18)
            check_pixels(abs(width), abs(height))
        fmt, w, h, bps, spp, cmap = (ctypes.c_int(0) for _ in range(6))
        refs = [ctypes.byref(v) for v in (fmt, w, h, bps, spp, cmap)]
        if self.libs.lept.pixReadHeaderMem(data, len(data), *refs) != 0:
            raise ImageUnread("its header cannot be read as an image")
        name = _FORMAT_NAMES.get(fmt.value, f"format {fmt.value}")
        width, height = w.value, h.value
        check_pixels(width, height)
        return width, height, name

    def decode(self, image: EncodedImage) -> int:
        """A Leptonica pix of `image` (its size checked from its header first); the caller
        destroys it."""
        width, height, name = self.header_size(image.data)
        pix = self.libs.lept.pixReadMem(image.data, len(image.data))
        if not pix:
            raise ImageUnread(f"the {name} image cannot be decoded")
        got = (self.libs.lept.pixGetWidth(pix), self.libs.lept.pixGetHeight(pix))
        if got[0] * got[1] > MAX_PIXELS:  # a header that understated its size
            self._destroy(pix)
            raise ImageUnread(f"the {name} image decodes to more than its header said")
        return int(pix)

    def _destroy(self, pix: int | None) -> None:
        if pix:
            holder = ctypes.c_void_p(pix)
            self.libs.lept.pixDestroy(ctypes.byref(holder))

    # reading

    def read(
        self, image: EncodedImage, shown_width_in: float, shown_height_in: float
    ) -> ImageReading:
        """Read `image`, shown `shown_width_in` by `shown_height_in` inches: its words and rules.
        Raises ImageUnread naming why it cannot be read."""
        lept = self.libs.lept
        owned: list[int] = []
        try:
            pix = self.decode(image)
            owned.append(pix)
            gray = lept.pixConvertTo8(pix, 0)
            if not gray:
                raise ImageUnread("the image cannot be turned gray")
            owned.append(gray)
            width, height = lept.pixGetWidth(gray), lept.pixGetHeight(gray)
            ppi = _shown_ppi(width, height, shown_width_in, shown_height_in)
            scale = 1.0
            if ppi < LOW_PPI:
                scale = READ_PPI / max(ppi, 1.0)
                # within the pixel bound, scaled or not
                scale = min(scale, (MAX_PIXELS / (width * height)) ** 0.5, 16.0)
                if scale > 1.01:
                    scaled = lept.pixScale(gray, ctypes.c_float(scale), ctypes.c_float(scale))
                    if not scaled:
                        raise ImageUnread("the image cannot be scaled")
                    owned.append(scaled)
                    gray = scaled
                    width, height = lept.pixGetWidth(gray), lept.pixGetHeight(gray)
                    ppi *= scale
                else:
                    scale = 1.0
            mean = ctypes.c_float(255.0)
            if lept.pixAverageInRect(gray, None, None, 0, 255, 1, ctypes.byref(mean)) == 0:
                if mean.value < 128:  # light text on a dark screen: read turned light
                    lept.pixInvert(gray, gray)
            rules = self._paint_out_rules(gray, ppi, owned)
            words = self._recognise(gray)
            return ImageReading(words, rules, width, height, scale)
        finally:
            for pix in reversed(owned):
                self._destroy(pix)

    def _paint_out_rules(
        self, gray: int, ppi: float, owned: list[int]
    ) -> list[tuple[int, int, int, int]]:
        """Paint the long strokes out of `gray` (white), and return them as rules."""
        lept = self.libs.lept
        fine = min(ppi, FINEST_PPI)
        across = max(int(fine / 2), 8)  # half an inch, 300 pixels at most
        down = max(int(fine / 3), 6)  # a third of an inch, 210 pixels at most
        thick = max(int(fine / 10), 3)
        binary = lept.pixConvertTo1(gray, 160)
        if not binary:
            return []
        owned.append(binary)
        horizontal = lept.pixOpenBrick(None, binary, across, 1)
        vertical = lept.pixOpenBrick(None, binary, 1, down)
        solid = lept.pixOpenBrick(None, binary, thick, thick)
        for pix in (horizontal, vertical, solid):
            if not pix:
                return []
            owned.append(pix)
        # a dark region (a heading's background) and what lies within a tenth of an inch of it
        near = lept.pixDilateBrick(None, solid, 2 * thick + 1, 2 * thick + 1)
        if not near:
            return []
        owned.append(near)
        lept.pixSubtract(horizontal, horizontal, near)
        lept.pixSubtract(vertical, vertical, near)
        rules = self._boxes(horizontal, horizontal=True) + self._boxes(vertical, horizontal=False)
        if rules:
            strokes = lept.pixOr(None, horizontal, vertical)
            if strokes:
                owned.append(strokes)
                grown = lept.pixDilateBrick(None, strokes, 3, 3)  # the stroke's soft edges too
                if grown:
                    owned.append(grown)
                    lept.pixSetMasked(gray, grown, 0xFFFFFFFF)
        return rules

    def _boxes(self, mask: int, *, horizontal: bool) -> list[tuple[int, int, int, int]]:
        lept = self.libs.lept
        boxa = lept.pixConnComp(mask, None, 8)
        if not boxa:
            return []
        out = []
        try:
            x, y, w, h = (ctypes.c_int(0) for _ in range(4))
            for k in range(min(lept.boxaGetCount(boxa), 5_000)):
                lept.boxaGetBoxGeometry(
                    boxa, k, ctypes.byref(x), ctypes.byref(y), ctypes.byref(w), ctypes.byref(h)
                )
                if horizontal:
                    mid = y.value + h.value // 2
                    out.append((x.value, mid, x.value + w.value, mid))
                else:
                    mid = x.value + w.value // 2
                    out.append((mid, y.value, mid, y.value + h.value))
        finally:
            holder = ctypes.c_void_p(boxa)
            lept.boxaDestroy(ctypes.byref(holder))
        return out

    def _recognise(self, gray: int) -> list[Word]:
        tess = self.libs.tess
        tess.TessBaseAPISetImage2(self.api, gray)
        tess.TessBaseAPISetSourceResolution(self.api, READ_PPI)
        monitor = tess.TessMonitorCreate()
        try:
            tess.TessMonitorSetDeadlineMSecs(monitor, max(int(IMAGE_SECONDS * 1000), 1))
            started = time.monotonic()
            if tess.TessBaseAPIRecognize(self.api, monitor) != 0:
                if time.monotonic() - started >= IMAGE_SECONDS:
                    raise ImageUnread(f"its recognition passed {IMAGE_SECONDS:g} s")
                raise ImageUnread("Tesseract cannot recognise it")
            return self._words()
        finally:
            tess.TessMonitorDelete(monitor)
            tess.TessBaseAPIClear(self.api)

    def _words(self) -> list[Word]:
        tess = self.libs.tess
        iterator = tess.TessBaseAPIGetIterator(self.api)
        if not iterator:
            return []
        words: list[Word] = []
        line = -1
        try:
            page = tess.TessResultIteratorGetPageIterator(iterator)
            left, top, right, bottom = (ctypes.c_int(0) for _ in range(4))
            flags = [ctypes.c_int(0) for _ in range(6)]
            size, font_id = ctypes.c_int(0), ctypes.c_int(0)
            bx0, by0, bx1, by1 = (ctypes.c_int(0) for _ in range(4))
            while True:
                if tess.TessPageIteratorIsAtBeginningOf(page, _RIL_TEXTLINE):
                    line += 1
                pointer = tess.TessResultIteratorGetUTF8Text(iterator, _RIL_WORD)
                if pointer:
                    text = ctypes.string_at(pointer).decode("utf-8", "replace").strip()
                    tess.TessDeleteText(pointer)
                    boxes = tess.TessPageIteratorBoundingBox(
                        page,
                        _RIL_WORD,
                        ctypes.byref(left),
                        ctypes.byref(top),
                        ctypes.byref(right),
                        ctypes.byref(bottom),
                    )
                    size.value = 0
                    tess.TessResultIteratorWordFontAttributes(
                        iterator,
                        *(ctypes.byref(v) for v in flags),
                        ctypes.byref(size),
                        ctypes.byref(font_id),
                    )
                    baseline = float(bottom.value)
                    if tess.TessPageIteratorBaseline(
                        page,
                        _RIL_TEXTLINE,
                        ctypes.byref(bx0),
                        ctypes.byref(by0),
                        ctypes.byref(bx1),
                        ctypes.byref(by1),
                    ):
                        span = bx1.value - bx0.value
                        at = (left.value - bx0.value) / span if span else 0.0
                        baseline = by0.value + at * (by1.value - by0.value)
                    if text and boxes:
                        words.append(
                            Word(
                                text,
                                left.value,
                                top.value,
                                right.value,
                                bottom.value,
                                baseline,
                                size.value,
                                bool(flags[0].value),
                                line,
                                tess.TessResultIteratorConfidence(iterator, _RIL_WORD),
                            )
                        )
                if not tess.TessResultIteratorNext(iterator, _RIL_WORD):
                    break
        finally:
            tess.TessResultIteratorDelete(iterator)
        return words


def _shown_ppi(width: int, height: int, shown_width_in: float, shown_height_in: float) -> float:
    """The pixels an inch an image is shown at (the finer of its two directions)."""
    across = width / shown_width_in if shown_width_in > 0 else READ_PPI
    down = height / shown_height_in if shown_height_in > 0 else READ_PPI
    return max(across, down)


# -- the child's engine and a file's budget --------------------------------------------------

_engine: Engine | None = None
_engine_error: str | None = None
_pending: tuple[str, str] | None = None  # (languages, models) to start on the first picture


def warm_ocr(environ: Mapping[str, str] | None = None, *, lazy: bool | None = None) -> None:
    """The child's OCR warm-up, before its limits: OpenMP held to one thread (libgomp reads it as
    it loads), and, where the confined child may still read files (Landlock), nothing more: the
    libraries are loaded and the models read on the first picture, so a file with none pays
    nothing. Without Landlock the confined child opens no file, so they are loaded now. Nothing
    when OCR is off; a failure is kept, for the readers to name on the pages that needed OCR."""
    global _engine, _engine_error, _pending
    environ = os.environ if environ is None else environ
    try:
        settings = load_ocr_settings(environ)
    except OcrSettingsError as error:
        _engine_error = str(error)
        return
    if not settings.enabled or _engine is not None:
        return
    os.environ["OMP_THREAD_LIMIT"] = "1"
    directory = tessdata_directory(environ)
    if directory is None:
        _engine_error = "OCR cannot start: Tesseract's models are not installed"
        return
    if lazy is None:
        from extractor_sandbox.sandbox import landlock_abi

        lazy = landlock_abi() > 0
    _pending = (settings.languages, directory)
    if not lazy:
        _start()


def _start() -> Engine | None:
    """The engine, started now if the warm-up left it for the first picture."""
    global _engine, _engine_error, _pending
    if _engine is None and _pending is not None:
        languages, directory = _pending
        _pending = None
        try:
            _engine = Engine(languages, directory)
        except (ImageUnread, OSError, AttributeError) as error:
            _engine_error = f"OCR cannot start: {error}"
    return _engine


class FileOcr:
    """OCR for one file: the settings, the engine, the budget of images, each image read once."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        environ = os.environ if environ is None else environ
        try:
            self.settings = load_ocr_settings(environ)
        except OcrSettingsError:
            self.settings = OcrSettings(enabled=False)
        on = self.settings.enabled and (_engine is not None or _pending is not None)
        self.engine: Engine | None = _engine if on else None
        self._can_start = on
        self.unavailable = (
            None
            if on
            else (
                f"{OCR_VARIABLE} is off"
                if not self.settings.enabled
                else (_engine_error or "OCR is not available in this extractor")
            )
        )
        self.read_images: dict[object, ImageReading | ImageUnread] = {}
        self.version: str | None = None

    @property
    def enabled(self) -> bool:
        return self._can_start

    def read(
        self, key: object, image: EncodedImage, shown_width_in: float, shown_height_in: float
    ) -> ImageReading:
        """The image's reading, from the cache when `key` was read before; raises ImageUnread."""
        known = self.read_images.get(key)
        if isinstance(known, ImageReading):
            return known
        if isinstance(known, ImageUnread):
            raise known
        if self.engine is None and self._can_start:
            self.engine = _start()
            if self.engine is None:
                self._can_start = False
                self.unavailable = _engine_error
        if self.engine is None:
            raise ImageUnread(self.unavailable or "OCR is off")
        if len(self.read_images) >= self.settings.max_images:
            raise ImageUnread(
                f"the file's images past {self.settings.max_images} are not read"
                f" ({MAX_IMAGES_VARIABLE})"
            )
        try:
            reading = self.engine.read(image, shown_width_in, shown_height_in)
        except ImageUnread as error:
            self.read_images[key] = error
            raise
        self.read_images[key] = reading
        self.version = self.engine.version
        return reading

    def admit(self, key: object) -> None:
        """Raise ImageUnread when the file's budget has no room for a new image `key`."""
        if key in self.read_images:
            return
        if self._can_start and len(self.read_images) >= self.settings.max_images:
            raise ImageUnread(
                f"the file's images past {self.settings.max_images} are not read"
                f" ({MAX_IMAGES_VARIABLE})"
            )


def version_suffix(ocr: FileOcr | None) -> str:
    """What parser_version adds when OCR read an image: `+tesseract<version>`."""
    if ocr is None or ocr.version is None:
        return ""
    return "+tesseract" + "".join(c for c in ocr.version if c.isalnum() or c in ".-")
