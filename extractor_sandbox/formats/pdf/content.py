"""Walking a page's content stream: the runs of text it shows, the rules it draws, its pictures.

Positions are in the page as it is shown (its /Rotate applied), in points, y up. A run is one
string a text operator shows (a TJ array's strings are runs of their own, placed by its numbers),
cut where its font changes; its width comes from its font's widths through pypdf's Font (/Widths, a
CID font's /W, the standard fonts' metrics). The seed measures a run without the text state's
character spacing, word spacing and horizontal scaling; here a run spans what it advances with
them (less the spacing after its last character), since otherwise a letter-spaced line's runs are
parted by the spacing they accumulate ("ins ert"): measured on the corpus, this keeps the text
layer's words whole. Nothing is rasterised.

Bounds: a form nested inside four others is not walked (the page says so), and a page past
MAX_RUNS runs or MAX_RULES rules stops collecting them (the reader then reads its text layer).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from pypdf.generic import ContentStream, DictionaryObject, StreamObject
from pypdf.generic._font import Font

MAX_FORM_DEPTH = 4  # a form nested inside four others is deeper than the reader walks
MAX_RUNS = 100_000
MAX_RULES = 20_000
RULE_THICKNESS = 3.0  # a filled box thinner than this is a rule
MONO_NAMES = ("courier", "mono", "consol", "menlo", "code", "typewriter", "fixed")
BOLD_NAMES = ("bold", "black", "heavy", "semibold", "demi")
# TeX's bold extended faces (cmbx10, SFBX1000, lmroman10-bx): named by their series, not "Bold"
TEX_BOLD = re.compile(r"(?:^|\+)(?:cm|sf|ec|tc|lm)[a-z]*?bx|-bx\b")
# Bold faces named by their foundry's own series letters: URW's base fonts, which LaTeX sets Times
# and Helvetica in (NimbusRomNo9L-Medi), Libertine and Biolinum's T-encoded faces (acmart's
# LinLibertineTB), CM-Super's and Computer Modern's bold non-extended (SFRB1000, cmb10)
FACE_BOLD = re.compile(
    r"-medi(?:ital)?$|lin(?:libertine|biolinum)[a-z]*tbi?$|(?:^|\+)(?:sf|ec|tc)rb\d|(?:^|\+)cmb\d"
)
FIXED_PITCH_FLAG = 1
FORCE_BOLD_FLAG = 1 << 18

Matrix = tuple[float, float, float, float, float, float]
IDENTITY: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)


def mult(m: Matrix, n: Matrix) -> Matrix:
    """m then n (PDF row-vector convention: a point is transformed by m, then by n)."""
    a, b, c, d, e, f = m
    p, q, r, s, t, u = n
    return (
        a * p + b * r,
        a * q + b * s,
        c * p + d * r,
        c * q + d * s,
        e * p + f * r + t,
        e * q + f * s + u,
    )


def apply(m: Matrix, x: float, y: float) -> tuple[float, float]:
    return (m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5])


@dataclass(slots=True)
class Run:
    """One string shown: where it starts and ends on the page, its size, style and direction."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    size: float
    font: str
    bold: bool
    mono: bool
    angle: int  # the direction it reads in, degrees counter-clockwise, a multiple of 90
    order: int  # its place in the content stream
    # For text in a right-to-left script: each glyph's characters reversed, so that reversing the
    # line as drawn puts a glyph of two characters (a lam-alef) back in their order.
    visual: str | None = None
    op: int = -1  # the text operator that drew it: pieces of one TJ are one word's kerning


@dataclass(slots=True)
class Rule:
    """A horizontal or vertical line the page draws (a stroke or a thin filled box)."""

    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def horizontal(self) -> bool:
        return abs(self.y1 - self.y0) <= abs(self.x1 - self.x0)


@dataclass(slots=True)
class Picture:
    x0: float
    y0: float
    x1: float
    y1: float
    inline: bool
    # For OCR (scanned.py): the image object, what names it in the file (read once however often
    # it is drawn), and the matrix that maps its unit square on the page.
    image: Any = None
    key: Any = None
    matrix: Matrix | None = None

    @property
    def area(self) -> float:
        return (self.x1 - self.x0) * (self.y1 - self.y0)


@dataclass
class Drawing:
    """What a page's content shows."""

    width: float
    height: float
    runs: list[Run] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    boxes: list[Rule] = field(default_factory=list)  # filled rectangles, corner to corner
    pictures: list[Picture] = field(default_factory=list)
    unmapped: int = 0  # characters a font maps to no Unicode character
    problems: list[str] = field(default_factory=list)  # what stopped part of the walk
    runs_cut: bool = False


def page_base(page: Any) -> tuple[Matrix, float, float]:
    """The matrix from the page's user space to the page as shown, and the shown size."""
    box = page.mediabox
    left, bottom = float(box.left), float(box.bottom)
    width, height = float(box.width), float(box.height)
    shift: Matrix = (1.0, 0.0, 0.0, 1.0, -left, -bottom)
    rotate = int(page.get("/Rotate", 0) or 0) % 360
    if rotate == 90:
        return mult(shift, (0.0, -1.0, 1.0, 0.0, 0.0, width)), height, width
    if rotate == 180:
        return mult(shift, (-1.0, 0.0, 0.0, -1.0, width, height)), width, height
    if rotate == 270:
        return mult(shift, (0.0, 1.0, -1.0, 0.0, height, 0.0)), height, width
    return shift, width, height


class FontCache:
    """The fonts a document's pages name, each read once (per document, by its object)."""

    def __init__(self) -> None:
        self.fonts: dict[tuple[Any, ...], tuple[Font, bool, bool]] = {}
        self.held: list[Any] = []  # a direct font dictionary, kept so its id is not reused

    def get(self, resources: Any, name: Any) -> tuple[Font, bool, bool] | None:
        try:
            fonts = resources.get("/Font")
            fonts = fonts.get_object() if fonts is not None else None
            if not isinstance(fonts, DictionaryObject) or name not in fonts:
                return None
            ref = fonts.raw_get(name)
            if hasattr(ref, "idnum"):
                key: tuple[Any, ...] = ("ref", ref.idnum, getattr(ref, "generation", 0))
            else:
                key = ("direct", id(ref))
            if key in self.fonts:
                return self.fonts[key]
            font_dict = fonts[name].get_object()
            if not isinstance(font_dict, DictionaryObject):
                return None
            font = Font.from_font_resource(font_dict)
        except Exception:
            return None
        lowered = font.name.lower()
        flags = font.font_descriptor.flags or 0
        mono = bool(flags & FIXED_PITCH_FLAG) or any(n in lowered for n in MONO_NAMES)
        bold = (
            bool(flags & FORCE_BOLD_FLAG)
            or any(n in lowered for n in BOLD_NAMES)
            or TEX_BOLD.search(lowered) is not None
            or FACE_BOLD.search(lowered) is not None
        )
        if key[0] == "direct":
            self.held.append(ref)
        self.fonts[key] = (font, bold, mono)
        return self.fonts[key]


def decode(font: Font, value: bytes) -> tuple[str, str]:
    """(raw characters, their Unicode text) of a string shown in `font`, as pypdf decodes it."""
    if isinstance(font.encoding, str):
        try:
            raw = value.decode(font.encoding, "surrogatepass")
        except (UnicodeDecodeError, LookupError):
            raw = value.decode("utf-16-be", "replace") if len(value) % 2 == 0 else ""
            if not raw:
                raw = value.decode("latin-1")
        text = "".join(printed(str(font.character_map.get(ch, ch))) for ch in raw)
        return raw, text
    table = _simple_table(font)
    return value.decode("latin-1"), "".join([table[byte] for byte in value])


_TABLES: dict[int, tuple[Font, list[str]]] = {}


def _simple_table(font: Font) -> list[str]:
    """A simple font's 256 codes read once, not per character shown."""
    cached = _TABLES.get(id(font))
    if cached is None or cached[0] is not font:
        if len(_TABLES) > 4096:
            _TABLES.clear()
        cached = (font, [simple_glyph(font, byte) for byte in range(256)])
        _TABLES[id(font)] = cached
    return cached[1]


def simple_glyph(font: Font, byte: int) -> str:
    """What one code of a simple font stands for: its ToUnicode entry first (keyed by the code),
    else its encoding's character; a glyph name nothing resolves (/g115) is no character, U+FFFD
    surrogate-marked so the page warns."""
    code = chr(byte)
    mapped = font.character_map.get(code)
    if mapped is not None:
        return printed(str(mapped))
    encoding = font.encoding if isinstance(font.encoding, dict) else {}
    named = str(encoding.get(byte, code))
    if len(named) > 1 and named.startswith("/"):
        return "\udfff"  # read as U+FFFD, with the page named in a warning
    return "".join(str(font.character_map.get(ch, ch)) for ch in named)


def printed(mapped: str) -> str:
    """What one glyph's Unicode entry prints: a glyph that draws a mark draws no space beside it,
    so an entry of spaces and a visible character (a bold face's period mapped to " .", which
    read "11,062.6" as "11,062 .6") is the character alone. A space's own entry, and an entry of
    several visible characters (a ligature), stand as they are."""
    if len(mapped) > 1 and mapped != mapped.strip() and mapped.strip():
        return mapped.strip()
    return mapped


RTL = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")


def glyphs(font: Font, value: bytes) -> list[str]:
    """The characters each glyph of a string stands for, glyph by glyph."""
    if isinstance(font.encoding, str):
        try:
            raw = value.decode(font.encoding, "surrogatepass")
        except (UnicodeDecodeError, LookupError):
            return [decode(font, value)[1]]
        return [printed(str(font.character_map.get(ch, ch))) for ch in raw]
    return [simple_glyph(font, byte) for byte in value]


class _Walker:
    def __init__(self, drawing: Drawing, pdf: Any, fonts: FontCache | None = None) -> None:
        self.d = drawing
        self.pdf = pdf
        self.fonts = fonts if fonts is not None else FontCache()
        self.order = 0
        self.op = 0

    def walk(self, content: Any, resources: Any, ctm: Matrix, depth: int, seen: tuple) -> None:
        operations = ContentStream(content, self.pdf, "bytes").operations
        stack: list[tuple[Matrix, dict[str, Any]]] = []
        ts: dict[str, Any] = {
            "font": None,
            "size": 0.0,
            "Tc": 0.0,
            "Tw": 0.0,
            "Tz": 100.0,
            "TL": 0.0,
            "Ts": 0.0,
        }
        tm: Matrix = IDENTITY
        tlm: Matrix = IDENTITY
        path: list[tuple[str, list[tuple[float, float]]]] = []
        point: tuple[float, float] | None = None
        for operands, op in operations:
            if op == b"q":
                stack.append((ctm, dict(ts)))
            elif op == b"Q":
                if stack:
                    ctm, ts = stack.pop()
            elif op == b"cm" and len(operands) == 6:
                ctm = mult(_matrix(operands), ctm)
            elif op == b"BT":
                tm = tlm = IDENTITY
            elif op == b"Tf" and len(operands) == 2:
                ts["font"] = self.fonts.get(resources, operands[0])
                ts["size"] = _num(operands[1])
            elif op in (b"Tc", b"Tw", b"Tz", b"TL", b"Ts") and operands:
                ts[op.decode()] = _num(operands[0])
            elif op in (b"Td", b"TD") and len(operands) == 2:
                tx, ty = _num(operands[0]), _num(operands[1])
                if op == b"TD":
                    ts["TL"] = -ty
                tlm = tm = mult((1.0, 0.0, 0.0, 1.0, tx, ty), tlm)
            elif op == b"Tm" and len(operands) == 6:
                tlm = tm = _matrix(operands)
            elif op == b"T*":
                tlm = tm = mult((1.0, 0.0, 0.0, 1.0, 0.0, -ts["TL"]), tlm)
            elif op in (b"Tj", b"'", b'"', b"TJ"):
                self.op += 1
                if op in (b"'", b'"'):
                    if op == b'"' and len(operands) == 3:
                        ts["Tw"], ts["Tc"] = _num(operands[0]), _num(operands[1])
                    tlm = tm = mult((1.0, 0.0, 0.0, 1.0, 0.0, -ts["TL"]), tlm)
                items = operands[-1] if operands else b""
                if op != b"TJ":
                    items = [items]
                elif not isinstance(items, list):
                    continue
                for item in items:
                    if isinstance(item, (bytes, str)):
                        tm = self.show(item, ts, tm, ctm)
                    else:
                        shift = -_num(item) / 1000.0 * ts["size"] * ts["Tz"] / 100.0
                        tm = mult((1.0, 0.0, 0.0, 1.0, shift, 0.0), tm)
            elif op == b"m" and len(operands) == 2:
                point = apply(ctm, _num(operands[0]), _num(operands[1]))
                path.append(("l", [point]))
            elif op == b"l" and len(operands) == 2 and path:
                point = apply(ctm, _num(operands[0]), _num(operands[1]))
                path[-1][1].append(point)
            elif op == b"h":
                _close(path)
            elif op == b"re" and len(operands) == 4:
                x, y, w, h = (_num(v) for v in operands)
                corners = [(x, y), (x + w, y), (x + w, y + h), (x, y + h), (x, y)]
                path.append(("re", [apply(ctm, px, py) for px, py in corners]))
            elif op in (b"S", b"s"):
                if op == b"s":
                    _close(path)
                self.stroke(path)
                path = []
            elif op in (b"f", b"F", b"f*"):
                self.fill(path)
                path = []
            elif op in (b"B", b"B*", b"b", b"b*"):
                self.stroke(path)
                path = []
            elif op == b"n":
                path = []
            elif op == b"Do" and operands:
                self.draw_object(operands[0], resources, ctm, depth, seen)
            elif op == b"INLINE IMAGE":
                self.picture(ctm, inline=True)

    def show(self, value: Any, ts: dict[str, Any], tm: Matrix, ctm: Matrix) -> Matrix:
        entry = ts["font"]
        if entry is None:
            return tm
        font, bold, mono = entry
        data = value if isinstance(value, bytes) else str(value).encode("latin-1", "replace")
        raw, text = decode(font, data)
        glyph_sum = sum(
            font.character_widths.get(ch, font.character_widths["default"]) for ch in raw
        )
        size = ts["size"]
        width = glyph_sum / 1000.0 * size
        spaces = raw.count(" ") if not isinstance(font.encoding, str) else 0
        advance = (width + ts["Tc"] * len(raw) + ts["Tw"] * spaces) * ts["Tz"] / 100.0
        if len(raw) > 1 and max(ts["Tc"], ts["Tw"] if spaces else 0.0) > 0.5 * abs(size):
            # spacing wide enough to set its characters apart (cells spread by character
            # spacing): each character is a run of its own, where it is drawn
            self.spread(font, data, raw, ts, tm, ctm, bold, mono)
            return mult((1.0, 0.0, 0.0, 1.0, advance, 0.0), tm)
        if text and font.interpretable and len(self.d.runs) < MAX_RUNS:
            # The run spans what it advances, its character and word spacing and scaling included
            # (but not the spacing after its last character), so the gap to the next run is only
            # what the page moves between them: a letter-spaced line is not read as "ins ert".
            extent = advance - ts["Tc"] * ts["Tz"] / 100.0 if raw else 0.0
            self.add_run(text, extent if extent > 0 else width, ts, tm, ctm, font.name, bold, mono)
            if RTL.search(text):
                self.d.runs[-1].visual = "".join(g[::-1] for g in glyphs(font, data))
        elif len(self.d.runs) >= MAX_RUNS:
            self.d.runs_cut = True
        return mult((1.0, 0.0, 0.0, 1.0, advance, 0.0), tm)

    def spread(
        self,
        font: Font,
        data: bytes,
        raw: str,
        ts: dict[str, Any],
        tm: Matrix,
        ctm: Matrix,
        bold: bool,
        mono: bool,
    ) -> None:
        parts = glyphs(font, data)
        if len(parts) != len(raw):
            parts = list(raw)
        size, scale = ts["size"], ts["Tz"] / 100.0
        for ch, part in zip(raw, parts, strict=True):
            glyph = font.character_widths.get(ch, font.character_widths["default"]) / 1000.0 * size
            if part.strip() and font.interpretable and len(self.d.runs) < MAX_RUNS:
                self.add_run(part, glyph * scale, ts, tm, ctm, font.name, bold, mono)
            step = glyph + ts["Tc"] + (ts["Tw"] if ch == " " else 0.0)
            tm = mult((1.0, 0.0, 0.0, 1.0, step * scale, 0.0), tm)

    def add_run(
        self,
        text: str,
        width: float,
        ts: dict[str, Any],
        tm: Matrix,
        ctm: Matrix,
        font: str,
        bold: bool,
        mono: bool,
    ) -> None:
        if any("\ud800" <= ch <= "\udfff" for ch in text):
            self.d.unmapped += sum(1 for ch in text if "\ud800" <= ch <= "\udfff")
            text = "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)
        m = mult(tm, ctm)
        x0, y0 = apply(m, 0.0, ts["Ts"])
        x1, y1 = apply(m, width if width > 0 else 0.0, ts["Ts"])
        scale = math.hypot(m[2], m[3])
        size = abs(ts["size"]) * scale
        if size <= 0:
            return
        angle = math.degrees(math.atan2(m[1], m[0]))
        quarter = int(round(angle / 90.0)) % 4 * 90
        self.order += 1
        self.d.runs.append(
            Run(text, x0, y0, x1, y1, size, font, bold, mono, quarter, self.order, None, self.op)
        )

    def stroke(self, path: list[tuple[str, list[tuple[float, float]]]]) -> None:
        for _, points in path:
            for (ax, ay), (bx, by) in zip(points, points[1:], strict=False):
                self.rule(ax, ay, bx, by)

    def fill(self, path: list[tuple[str, list[tuple[float, float]]]]) -> None:
        for kind, points in path:
            if len(points) < 4 or (kind != "re" and not _box_outline(points)):
                continue
            xs = [p[0] for p in points]
            ys = [p[1] for p in points]
            w, h = max(xs) - min(xs), max(ys) - min(ys)
            if h <= RULE_THICKNESS and w > h:
                mid = (max(ys) + min(ys)) / 2
                self.rule(min(xs), mid, max(xs), mid)
            elif w <= RULE_THICKNESS and h > w:
                mid = (max(xs) + min(xs)) / 2
                self.rule(mid, min(ys), mid, max(ys))
            elif len(self.d.boxes) < MAX_RULES:
                self.d.boxes.append(Rule(min(xs), min(ys), max(xs), max(ys)))

    def rule(self, ax: float, ay: float, bx: float, by: float) -> None:
        if len(self.d.rules) >= MAX_RULES:
            return
        if abs(ay - by) < 1.0 and abs(ax - bx) >= 1.0:
            self.d.rules.append(Rule(min(ax, bx), ay, max(ax, bx), ay))
        elif abs(ax - bx) < 1.0 and abs(ay - by) >= 1.0:
            self.d.rules.append(Rule(ax, min(ay, by), ax, max(ay, by)))

    def picture(self, ctm: Matrix, *, inline: bool, image: Any = None, key: Any = None) -> None:
        corners = [apply(ctm, x, y) for x, y in ((0, 0), (1, 0), (0, 1), (1, 1))]
        xs = [p[0] for p in corners]
        ys = [p[1] for p in corners]
        self.d.pictures.append(Picture(min(xs), min(ys), max(xs), max(ys), inline, image, key, ctm))

    def draw_object(self, name: Any, resources: Any, ctm: Matrix, depth: int, seen: tuple) -> None:
        xobjects = resources.get("/XObject") if resources is not None else None
        xobjects = xobjects.get_object() if xobjects is not None else None
        if not isinstance(xobjects, DictionaryObject) or name not in xobjects:
            self.d.problems.append(f"names an object the file does not hold ({name})")
            return
        ref = xobjects.raw_get(name)
        obj = xobjects[name].get_object()
        if not isinstance(obj, StreamObject):
            return
        subtype = obj.get("/Subtype")
        if subtype == "/Image":
            self.picture(ctm, inline=False, image=obj, key=getattr(ref, "idnum", None))
            return
        if subtype != "/Form":
            return
        key = getattr(ref, "idnum", id(obj))
        if key in seen:
            self.d.problems.append("draws a form that draws itself")
            return
        if depth >= MAX_FORM_DEPTH:
            self.d.problems.append("draws a form nested inside four others")
            return
        matrix = _matrix(obj.get("/Matrix", [1, 0, 0, 1, 0, 0]))
        inner = obj.get("/Resources")
        inner = inner.get_object() if inner is not None else resources
        self.walk(obj, inner, mult(matrix, ctm), depth + 1, (*seen, key))


def _close(path: list[tuple[str, list[tuple[float, float]]]]) -> None:
    """Close the path's last subpath drawn with lines (h, and s before stroking): its last side
    is drawn too."""
    if path and path[-1][0] == "l" and len(path[-1][1]) > 2:
        path[-1][1].append(path[-1][1][0])


def _box_outline(points: list[tuple[float, float]]) -> bool:
    """Whether a path drawn with lines (m l l l, closed or not) outlines an upright rectangle,
    as `re` does: a rule or a box filled from four corners."""
    corners = points[:-1] if len(points) == 5 and _near(points[0], points[-1]) else points
    if len(corners) != 4:
        return False
    edges = zip(corners, corners[1:] + corners[:1], strict=True)
    return all(abs(a[0] - b[0]) < 0.01 or abs(a[1] - b[1]) < 0.01 for a, b in edges)


def _near(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return abs(a[0] - b[0]) < 0.01 and abs(a[1] - b[1]) < 0.01


def _num(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    return number if math.isfinite(number) else 0.0


def _matrix(values: Any) -> Matrix:
    try:
        items = [_num(v) for v in values]
    except TypeError:
        return IDENTITY
    if len(items) != 6:
        return IDENTITY
    return (items[0], items[1], items[2], items[3], items[4], items[5])


def read_drawing(page: Any, pdf: Any, fonts: FontCache | None = None) -> Drawing:
    """What the page draws; raises whatever pypdf raises on a page it cannot read."""
    base, width, height = page_base(page)
    drawing = Drawing(width, height)
    contents = page.get("/Contents")
    if contents is None:
        return drawing
    contents = contents.get_object()
    resources = page.get("/Resources")
    resources = resources.get_object() if resources is not None else DictionaryObject()
    if not isinstance(resources, DictionaryObject):
        resources = DictionaryObject()
    _Walker(drawing, pdf, fonts).walk(contents, resources, base, 0, ())
    return drawing
