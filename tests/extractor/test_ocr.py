"""OCR (seed 000's "OCR." paragraph and the PDF and PPTX rules that name it), one test a rule.

The engine is the real one (Tesseract 5 and Leptonica through ctypes, formats/ocr.py), warmed as
the child warms it; the pictures are the fixtures in tests/extractor/fixtures/ocr (rendered text,
see make_ocr_fixtures.py there), shown in PDFs written object by object (ocr_build.py). The
service-level tests (the settings' refusal at start, the confined child reading a scanned page,
the hostile images within the child's limits) run the real service.
"""

from __future__ import annotations

import io
import json
import struct
import subprocess
import urllib.error
import urllib.parse
import urllib.request
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pypdf
import pytest

from extractor_sandbox import ocr_settings
from extractor_sandbox.formats import ocr
from extractor_sandbox.formats.ocr import EncodedImage, Engine, FileOcr, ImageUnread
from extractor_sandbox.formats.pdf import blocks as pdf_blocks
from extractor_sandbox.formats.pdf.content import read_drawing
from extractor_sandbox.formats.pdf.reader import extract_pdf
from extractor_sandbox.formats.pdf.scanned import placed_runs, read_picture
from extractor_sandbox.formats.pptx import extract_pptx
from extractor_sandbox.ocr_settings import (
    OcrSettings,
    OcrSettingsError,
    check_ocr,
    load_ocr_settings,
)
from tests.extractor import zips
from tests.extractor.ocr_build import (
    SCAN_PLACE,
    SCAN_SIZE,
    SLIDE_SIZE,
    fixture,
    flate_scan,
    image_object,
    image_pages,
    jpeg_scan,
    scanned_pdf,
)
from tests.extractor.office_packages import picture, pptx, rels, slide_xml, text_shape

pytestmark = pytest.mark.skipif(
    not ocr_settings.libraries_installed() or ocr_settings.tessdata_directory({}) is None,
    reason="Tesseract is not installed (scripts/setup installs tesseract-ocr as root)",
)

_ENGINE: list[Engine] = []


@pytest.fixture
def ocr_on(monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    """The child's warmed engine, for this test only (other tests read with OCR off in-process,
    as the qualification gates do)."""
    for name in ocr_settings.VARIABLES:
        monkeypatch.delenv(name, raising=False)
    if not _ENGINE:
        ocr.warm_ocr({}, lazy=False)
        assert ocr._engine is not None, ocr._engine_error
        _ENGINE.append(ocr._engine)
        ocr._engine = None  # kept here: the module's engine is this test's alone
    monkeypatch.setattr(ocr, "_engine", _ENGINE[0])
    monkeypatch.setattr(ocr, "_pending", None)
    yield _ENGINE[0]
    monkeypatch.setattr(ocr, "_engine", None)


def texts(artifact: dict[str, Any]) -> list[tuple[str, str]]:
    return [(block["type"], block["text"]) for block in artifact["blocks"]]


def failed(artifact: dict[str, Any]) -> dict[str, str]:
    return {entry["unit"]: entry["reason"] for entry in artifact["coverage"]["failed"]}


SCAN_PARAGRAPHS = [
    "The northern orchards gave more apples than in any year before, and the pears held steady"
    " through the dry summer.",
    "Storage in the old barn is nearly full, so the co-op will rent two cold rooms in town until"
    " the spring sales begin.",
]


# -- settings ----------------------------------------------------------------------------------


def test_settings_default_to_ocr_on_in_english_and_thirty_images() -> None:
    assert load_ocr_settings({}) == OcrSettings(True, "eng", 30)
    assert load_ocr_settings(
        {
            "LOOM_EXTRACTOR_OCR": "off",
            "LOOM_EXTRACTOR_OCR_LANGUAGES": "eng+deu",
            "LOOM_EXTRACTOR_OCR_MAX_IMAGES": "5",
        }
    ) == OcrSettings(False, "eng+deu", 5)


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("LOOM_EXTRACTOR_OCR", "maybe", "LOOM_EXTRACTOR_OCR must be on or off, not 'maybe'"),
        (
            "LOOM_EXTRACTOR_OCR_MAX_IMAGES",
            "0",
            "LOOM_EXTRACTOR_OCR_MAX_IMAGES must be a positive integer, not '0'",
        ),
        (
            "LOOM_EXTRACTOR_OCR_LANGUAGES",
            "eng;rm -rf",
            "LOOM_EXTRACTOR_OCR_LANGUAGES must be model names joined by +, not 'eng;rm -rf'",
        ),
    ],
)
def test_a_bad_setting_is_refused_naming_it(variable: str, value: str, message: str) -> None:
    with pytest.raises(OcrSettingsError) as caught:
        load_ocr_settings({variable: value})
    assert str(caught.value) == message


def test_a_named_model_that_is_missing_is_refused_and_off_checks_nothing() -> None:
    directory = ocr_settings.tessdata_directory({})
    with pytest.raises(OcrSettingsError) as caught:
        check_ocr({"LOOM_EXTRACTOR_OCR_LANGUAGES": "eng+xyz"})
    assert str(caught.value) == (
        f"LOOM_EXTRACTOR_OCR_LANGUAGES names xyz, but no such model is installed in {directory}"
    )
    assert check_ocr({"LOOM_EXTRACTOR_OCR_LANGUAGES": "eng"}) is None
    assert check_ocr({"LOOM_EXTRACTOR_OCR": "off", "LOOM_EXTRACTOR_OCR_LANGUAGES": "xyz"}) is None


def test_ocr_on_without_tesseracts_libraries_is_said_once_at_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ocr_settings, "libraries_installed", lambda: False)
    assert check_ocr({}) == (
        "OCR is on but Tesseract's libraries are not installed: pictures are not read"
        " (install tesseract-ocr, or set LOOM_EXTRACTOR_OCR=off)"
    )


def test_a_scanned_page_that_names_a_missing_object_is_a_failed_unit(ocr_on: Engine) -> None:
    data = image_pages([jpeg_scan()], [[(0, SCAN_PLACE)]], texts=[b"/Missing Do"])
    artifact = extract_pdf(data, {}, name="scan.pdf")
    assert failed(artifact) == {
        "page 1": "the page names an object the file does not hold (/Missing), and has no text"
        " of its own"
    }


def test_the_child_is_given_the_ocr_settings_and_nothing_else_of_the_service() -> None:
    given = ocr_settings.ocr_environment(
        {"LOOM_EXTRACTOR_OCR": "off", "LOOM_EXTRACTOR_TOKEN": "x" * 20, "HOME": "/root"}
    )
    assert given == {"LOOM_EXTRACTOR_OCR": "off"}


# -- a scanned PDF page ------------------------------------------------------------------------


def test_a_scanned_page_is_read_into_a_heading_paragraphs_and_a_ruled_table(ocr_on: Engine) -> None:
    artifact = extract_pdf(scanned_pdf(), {}, name="scan.pdf")
    assert texts(artifact) == [
        ("heading", "Quarterly Harvest Report"),
        ("paragraph", SCAN_PARAGRAPHS[0]),
        ("paragraph", SCAN_PARAGRAPHS[1]),
        (
            "paragraph",
            "Fruit: Apples | Tonnes: 412 | Price: 1.25\nFruit: Pears | Tonnes: 187 | Price: 1.60",
        ),
    ]
    assert all(block["attrs"]["ocr"] is True for block in artifact["blocks"])
    assert all(block["locator"]["page_start"] == 1 for block in artifact["blocks"])
    [table] = artifact["tables"]
    assert table["attrs"]["ruled"] is True
    assert [c["name"] for c in table["columns"]] == ["Fruit", "Tonnes", "Price"]
    assert table["rows"] == [["Apples", 412, 1.25], ["Pears", 187, "1.60"]]
    assert artifact["attrs"]["ocr_pages"] == [1]
    assert artifact["coverage"]["complete"] is True
    assert artifact["parser_version"].endswith(f"+tesseract{ocr_on.version}")


def test_raw_flate_samples_read_as_the_jpeg_does(ocr_on: Engine) -> None:
    jpeg = extract_pdf(scanned_pdf(), {}, name="scan.pdf")
    flate = extract_pdf(scanned_pdf(flate_scan()), {}, name="scan.pdf")
    assert texts(flate) == texts(jpeg)


def test_a_jpeg_2000_scan_reads_as_the_jpeg_does(ocr_on: Engine) -> None:
    jpx = image_object(fixture("scan.jp2"), *SCAN_SIZE, filters=b"/JPXDecode")
    artifact = extract_pdf(scanned_pdf(jpx), {}, name="jpx.pdf")
    assert texts(artifact)[:3] == [
        ("heading", "Quarterly Harvest Report"),
        ("paragraph", SCAN_PARAGRAPHS[0]),
        ("paragraph", SCAN_PARAGRAPHS[1]),
    ]


def test_a_ccitt_group_4_scan_reads_as_the_jpeg_does(ocr_on: Engine) -> None:
    fax = image_object(
        fixture("scan.g4"),
        *SCAN_SIZE,
        filters=b"/CCITTFaxDecode",
        bits=1,
        extra=b"/DecodeParms << /K -1 /Columns 1950 /Rows 1500 >>",
    )
    artifact = extract_pdf(scanned_pdf(fax), {}, name="fax.pdf")
    assert texts(artifact)[:3] == [
        ("heading", "Quarterly Harvest Report"),
        ("paragraph", SCAN_PARAGRAPHS[0]),
        ("paragraph", SCAN_PARAGRAPHS[1]),
    ]


def test_ocr_off_leaves_the_scanned_page_a_failed_unit(
    ocr_on: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOM_EXTRACTOR_OCR", "off")
    artifact = extract_pdf(scanned_pdf(), {}, name="scan.pdf")
    assert failed(artifact) == {
        "page 1": "the page has no text and draws an image: its text needs OCR"
    }
    assert "ocr_pages" not in artifact["attrs"]
    assert "tesseract" not in artifact["parser_version"]


def test_a_page_whose_image_holds_no_words_is_a_failed_unit_not_read_as_empty(
    ocr_on: Engine,
) -> None:
    blank = image_object(zlib.compress(bytes([230]) * 200 * 150), 200, 150, filters=b"/FlateDecode")
    artifact = extract_pdf(scanned_pdf(blank), {}, name="blank.pdf")
    assert failed(artifact) == {
        "page 1": "the page has no text and OCR read no words in its image: its text needs OCR"
    }
    assert artifact["blocks"] == [] and "ocr_pages" not in artifact["attrs"]


def test_jbig2_is_not_read_and_says_so(ocr_on: Engine) -> None:
    jbig2 = image_object(b"\x00" * 64, 100, 100, filters=b"/JBIG2Decode", bits=1)
    artifact = extract_pdf(scanned_pdf(jbig2), {}, name="fax.pdf")
    assert failed(artifact) == {
        "page 1": "the page has no text and its image is not read with OCR: it is JBIG2, which"
        " only a separate program decodes: not read"
    }


def test_an_image_past_40_m_pixels_by_its_dictionary_is_not_decoded(ocr_on: Engine) -> None:
    giant = image_object(b"x" * 10, 8000, 6000, filters=b"/FlateDecode")
    artifact = extract_pdf(scanned_pdf(giant), {}, name="giant.pdf")
    assert failed(artifact) == {
        "page 1": "the page has no text and its image is not read with OCR: it is 8000 by 6000"
        " pixels, over the 40 M pixels OCR reads"
    }


def test_an_image_shown_on_every_page_is_read_once(
    ocr_on: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[int] = []
    real = Engine.read

    def counted(self: Engine, *args: Any) -> Any:
        reads.append(1)
        return real(self, *args)

    monkeypatch.setattr(Engine, "read", counted)
    artifact = extract_pdf(scanned_pdf(pages=3), {}, name="scan.pdf")
    assert len(reads) == 1
    assert artifact["attrs"]["ocr_pages"] == [1, 2, 3]
    assert artifact["coverage"]["complete"] is True


def test_a_file_reads_at_most_max_images(ocr_on: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOOM_EXTRACTOR_OCR_MAX_IMAGES", "1")
    data = image_pages([jpeg_scan(), flate_scan()], [[(0, SCAN_PLACE)], [(1, SCAN_PLACE)]])
    artifact = extract_pdf(data, {}, name="two.pdf")
    assert artifact["attrs"]["ocr_pages"] == [1]
    assert failed(artifact) == {
        "page 2": "the page has no text and its image is not read with OCR: the file's images"
        " past 1 are not read (LOOM_EXTRACTOR_OCR_MAX_IMAGES)"
    }


def test_a_page_reads_at_most_fifty_images(ocr_on: Engine) -> None:
    tiny = image_object(zlib.compress(bytes(16)), 4, 4, filters=b"/FlateDecode")
    places = [(k, (10.0 + k, 10.0, 4.0, 4.0)) for k in range(51)]
    artifact = extract_pdf(image_pages([tiny] * 51, [places]), {}, name="many.pdf")
    assert failed(artifact) == {"page 1": "the page draws more than 50 images to read with OCR"}


def test_an_image_past_its_recognition_time_is_not_read(
    ocr_on: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ocr, "IMAGE_SECONDS", 0.001)  # Tesseract's own deadline, one millisecond
    artifact = extract_pdf(scanned_pdf(), {}, name="scan.pdf")
    assert failed(artifact) == {
        "page 1": "the page has no text and its image is not read with OCR: its recognition"
        " passed 0.001 s"
    }


def test_a_picture_covering_a_fifth_of_a_page_of_text_is_read_after_its_text(
    ocr_on: Engine,
) -> None:
    text = b"BT /F1 11 Tf 1 0 0 1 72 740 Tm (The slide below was photographed.) Tj ET"
    slide = image_object(
        fixture("slide.rgb.z"), *SLIDE_SIZE, filters=b"/FlateDecode", colour=b"/DeviceRGB"
    )
    data = image_pages([slide], [[(0, (36.0, 400.0, 540.0, 202.5))]], texts=[text])
    artifact = extract_pdf(data, {}, name="page.pdf")
    assert texts(artifact) == [
        ("paragraph", "The slide below was photographed."),
        ("paragraph", "Whiteboard notes"),
        ("paragraph", "Ship the parser on Friday"),
    ]
    assert [b.get("attrs", {}).get("ocr") for b in artifact["blocks"]] == [None, True, True]
    assert artifact["attrs"]["ocr_pages"] == [1]
    assert artifact["coverage"]["complete"] is True


def test_a_picture_the_pages_own_text_fills_is_not_read_again(ocr_on: Engine) -> None:
    # a scan's text layer drawn over its image: invisible text filling the picture
    rows = [
        b"1 0 0 1 80 %d Tm (Quarterly harvest report text layer line) Tj" % y
        for y in range(640, 320, -14)
    ]
    text = b"BT 3 Tr /F1 11 Tf " + b" ".join(rows) + b" ET"
    data = image_pages([jpeg_scan()], [[(0, SCAN_PLACE)]], texts=[text])
    artifact = extract_pdf(data, {}, name="layered.pdf")
    assert "ocr_pages" not in artifact["attrs"]
    assert "tesseract" not in artifact["parser_version"]


# -- the layout rules for OCR sizes ------------------------------------------------------------


def test_ocr_headings_step_at_eight_percent_and_fine_sizes_at_a_tenth() -> None:
    m = pdf_blocks.Measures(body=11.0, spacing={})
    block = pdf_blocks.Block("paragraph", 1, [], text="Results", size=12.0)
    assert pdf_blocks.is_heading(block, m, pdf_blocks.OCR_HEADING_RATIO)  # 9% larger
    assert not pdf_blocks.is_heading(block, m)  # under 12%: not a heading on a page of text
    assert pdf_blocks.size_key(4.3, ocr=True) == 4.3
    assert pdf_blocks.size_key(4.3) == 4.5
    assert pdf_blocks.size_key(9.3, ocr=True) == 9.5


# -- the engine: decoding within bounds, scaling, light on dark, rules -------------------------


def test_an_image_shown_coarser_than_200_ppi_is_scaled_to_about_300(ocr_on: Engine) -> None:
    scan = EncodedImage(fixture("scan.png"), *SCAN_SIZE)
    # 1950 pixels shown 13 inches wide: 150 pixels an inch, read scaled by two
    reading = ocr_on.read(scan, 13.0, 10.0)
    assert reading.scale == pytest.approx(2.0)
    assert (reading.width, reading.height) == (3900, 3000)
    assert "Harvest" in [word.text for word in reading.words]
    assert ocr_on.read(scan, 6.5, 5.0).scale == 1.0


def test_a_mostly_dark_image_is_read_turned_light(ocr_on: Engine) -> None:
    samples = zlib.decompress(fixture("scan.gray.z"))
    dark = ocr.pnm_image(samples.translate(bytes(255 - k for k in range(256))), *SCAN_SIZE, "gray")
    words = [word.text for word in ocr_on.read(dark, 6.5, 5.0).words]
    assert words[:3] == ["Quarterly", "Harvest", "Report"]


def test_a_ruled_grid_is_painted_out_and_kept_as_rules(ocr_on: Engine) -> None:
    reading = ocr_on.read(EncodedImage(fixture("scan.png"), *SCAN_SIZE), 6.5, 5.0)
    horizontal = [r for r in reading.rules if r[1] == r[3]]
    vertical = [r for r in reading.rules if r[0] == r[2]]
    assert len(horizontal) == 4 and len(vertical) == 4
    assert all(x1 - x0 > 1400 for x0, _, x1, _ in horizontal)
    # no word of the table is a rule read as a letter
    assert not any(set(word.text) <= set("|[]_-") for word in reading.words)


def test_a_words_size_is_turned_to_the_size_the_image_is_shown_at(ocr_on: Engine) -> None:
    # the scan shown at half its size: its 11 point text is 5.5 points on the page
    half = (72.0, 500.0, 234.0, 180.0)
    data = image_pages([jpeg_scan()], [[(0, half)]])
    page = pypdf.PdfReader(io.BytesIO(data)).pages[0]
    [picture] = read_drawing(page, None).pictures
    assert picture.matrix is not None
    runs, rules = placed_runs(read_picture(FileOcr(), picture), picture.matrix, 1)
    body = [run.size for run in runs if run.text == "orchards"]
    assert body == [pytest.approx(5.5, abs=0.3)]
    heading = [run for run in runs if run.text == "Harvest"][0]
    assert 72.0 < heading.x0 < 234.0 and 500.0 < heading.y0 < 680.0
    assert len(rules) == 8


# -- hostile images: each a typed outcome, nothing decoded past the bound ----------------------


def _png(width: int, height: int, idat: bytes = zlib.compress(b"\x00" * 64)) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
    )


def _jpeg_claiming(width: int, height: int) -> bytes:
    data = bytearray(fixture("scan.jpg"))
    for marker in (b"\xff\xc0", b"\xff\xc2"):
        at = data.find(marker)
        if at > 0:
            data[at + 5 : at + 9] = struct.pack(">HH", height, width)
            return bytes(data)
    raise AssertionError("no SOF marker in the fixture")


def _tiff(width: int, height: int) -> bytes:
    entries = [
        (256, 4, 1, width),  # ImageWidth
        (257, 4, 1, height),  # ImageLength
        (258, 3, 1, 8),  # BitsPerSample
        (259, 3, 1, 1),  # no compression
        (262, 3, 1, 1),  # black is zero
        (273, 4, 1, 8 + 2 + len_entries(9) + 4),  # StripOffsets: just past the directory
        (277, 3, 1, 1),
        (278, 4, 1, height),
        (279, 4, 1, 16),  # StripByteCounts: 16 bytes for all those rows
    ]
    out = b"II*\x00" + struct.pack("<I", 8) + struct.pack("<H", len(entries))
    for tag, kind, count, value in entries:
        out += struct.pack("<HHII", tag, kind, count, value)
    return out + struct.pack("<I", 0) + b"\x00" * 16


def len_entries(count: int) -> int:
    return 12 * count


HOSTILE = {
    "a PNG bomb (100000 by 100000 declared)": (
        lambda: _png(100_000, 100_000),
        "it is 100000 by 100000 pixels, over the 40 M pixels OCR reads",
    ),
    "a JPEG bomb (65000 by 65000 declared)": (
        lambda: _jpeg_claiming(65_000, 65_000),
        "it is 65000 by 65000 pixels, over the 40 M pixels OCR reads",
    ),
    "a TIFF bomb (100000 by 100000 declared)": (
        lambda: _tiff(100_000, 100_000),
        "it is 100000 by 100000 pixels, over the 40 M pixels OCR reads",
    ),
    "a 1-pixel-wide giant": (
        lambda: _png(1, 50_000_000),
        "it is 1 by 50000000 pixels, over the 40 M pixels OCR reads",
    ),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_image_is_refused_from_its_header(ocr_on: Engine, kind: str) -> None:
    build, message = HOSTILE[kind]
    with pytest.raises(ImageUnread) as caught:
        ocr_on.read(EncodedImage(build(), 0, 0), 6.5, 5.0)
    assert str(caught.value) == message


def test_a_truncated_jpeg_is_read_as_far_as_it_goes_or_refused(ocr_on: Engine) -> None:
    whole = fixture("scan.jpg")
    try:
        reading = ocr_on.read(EncodedImage(whole[: len(whole) // 3], 0, 0), 6.5, 5.0)
    except ImageUnread as error:
        assert str(error) == "the JPEG image cannot be decoded"
    else:  # libjpeg fills what is missing: the top of the page is still read
        assert "Harvest" in [word.text for word in reading.words]


def test_a_ccitt_stream_that_lies_about_its_size_is_a_typed_outcome(ocr_on: Engine) -> None:
    # 2000 by 10000 pixels declared (under the bound), 60 bytes of fax data to fill them
    lying = image_object(
        b"\x00\x01\xff" * 20,
        2000,
        10000,
        filters=b"/CCITTFaxDecode",
        bits=1,
        extra=b"/DecodeParms << /K -1 /Columns 2000 /Rows 10000 >>",
    )
    artifact = extract_pdf(scanned_pdf(lying), {}, name="fax.pdf")
    assert failed(artifact) == {
        "page 1": "the page has no text and its image is not read with OCR: the TIFF image"
        " cannot be decoded"
    }


def test_a_one_pixel_wide_giant_under_the_bound_is_a_typed_outcome(ocr_on: Engine) -> None:
    column = _png(1, 999_999, zlib.compress(bytes(2 * 999_999)))  # libpng's own bound is a million
    with pytest.raises(ImageUnread) as caught:
        ocr_on.read(EncodedImage(column, 0, 0), 0.01, 5.0)
    assert str(caught.value) == "Tesseract cannot recognise it"


def test_gif_and_bmp_bombs_are_measured_before_leptonica_decodes_them(ocr_on: Engine) -> None:
    # Leptonica decodes a GIF or a BMP whole to read its size: a frame of 9000 by 9000 behind a
    # 10 by 10 screen, and a BMP declaring 100000 by 100000, are refused before it runs.
    screen = b"GIF89a" + struct.pack("<HHBBB", 10, 10, 0, 0, 0)
    frame = b"\x2c" + struct.pack("<HHHHB", 0, 0, 9000, 9000, 0) + b"\x02\x02\x4c\x01\x00"
    bmp = b"BM" + bytes(16) + struct.pack("<iiHH", 100_000, 100_000, 1, 24) + bytes(24)
    for data, message in (
        (screen + frame + b"\x3b", "a GIF frame is over the 40 M pixels OCR reads"),
        (bmp, "it is 100000 by 100000 pixels, over the 40 M pixels OCR reads"),
    ):
        with pytest.raises(ImageUnread) as caught:
            ocr_on.read(EncodedImage(data, 0, 0), 6.5, 5.0)
        assert str(caught.value) == message


def test_a_gif_is_measured_by_its_largest_frame() -> None:
    screen = b"GIF89a" + struct.pack("<HHBBB", 10, 10, 0, 0, 0)
    frame = b"\x2c" + struct.pack("<HHHHB", 0, 0, 9000, 9000, 0) + b"\x02\x02\x4c\x01\x00"
    with pytest.raises(ImageUnread) as caught:
        ocr.gif_frames_size(screen + frame + b"\x3b")
    assert str(caught.value) == "a GIF frame is over the 40 M pixels OCR reads"
    assert ocr.gif_frames_size(screen + b"\x3b") == (10, 10)


def test_ocr_unavailable_is_named_on_the_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ocr, "_engine", None)
    monkeypatch.setattr(ocr, "_pending", None)
    monkeypatch.setattr(ocr, "_engine_error", None)
    assert FileOcr({}).enabled is False
    # without an engine the reader reports the page as it does with OCR off
    artifact = extract_pdf(scanned_pdf(), {}, name="scan.pdf")
    assert failed(artifact) == {
        "page 1": "the page has no text and draws an image: its text needs OCR"
    }


# -- the confined child and the real service ---------------------------------------------------

OCR_PROBE = r'''
"""Confine as the child does, with the PDF reader's warm-up (OCR's among it), then read an image
with OCR and try what the child must not do."""
import json, os, socket, sys, threading

image = open(sys.argv[1], "rb").read()  # read before confinement, as the child reads its stdin
if sys.argv[2] == "no-landlock":
    from extractor_sandbox import sandbox
    sandbox.landlock_abi = lambda: 0  # as on a kernel without Landlock: the child opens nothing
from extractor_sandbox.registry import SPECS
from extractor_sandbox.sandbox import confine_child

task_directory = os.open("/proc/self/task", os.O_RDONLY | os.O_DIRECTORY)  # readable once confined
confine_child(cpu_s=60, memory_mb=2048, prepare=SPECS["pdf"].prepare)
tasks = set(os.listdir(task_directory))
from extractor_sandbox.formats import ocr
from extractor_sandbox.formats.ocr import EncodedImage

def attempt(action):
    try:
        action()
    except OSError as error:
        import errno
        return errno.errorcode.get(error.errno, str(error.errno))
    except Exception as error:
        return type(error).__name__
    return "ok"

def fork():
    if os.fork() == 0:
        os._exit(0)
    os.wait()

reading = ocr.FileOcr().read("scan", EncodedImage(image, 0, 0), 6.5, 5.0)
print(json.dumps({
    "words": [word.text for word in reading.words[:3]],
    "threads started after confinement": sorted(set(os.listdir(task_directory)) - tasks),
    "threads": len(os.listdir(task_directory)),
    "socket": attempt(lambda: socket.socket().close()),
    "fork": attempt(fork),
    "thread": attempt(lambda: threading.Thread(target=int).start()),
    "execve": attempt(lambda: os.execv(sys.executable, [sys.executable, "-c", "0"])),
    "OMP_THREAD_LIMIT": os.environ.get("OMP_THREAD_LIMIT"),
}))
'''


@pytest.mark.parametrize("kernel", ["landlock", "no-landlock"])
def test_the_confined_child_reads_with_ocr_and_still_opens_no_socket_nor_starts_a_process(
    kernel: str,
) -> None:
    # With Landlock the engine starts on the first picture, after confinement (its libraries and
    # models readable); without, the warm-up starts it, since the confined child opens nothing.
    from extractor_sandbox.runner import child_environment
    from tests.extractor.conftest import (
        as_service_user,
        copy_package,
        service_python,
        world_readable_tree,
    )

    root = copy_package(world_readable_tree("loom-ocr-probe-"), extra={"probe.py": OCR_PROBE})
    image = root / "scan.png"
    image.write_bytes(fixture("scan.png"))
    image.chmod(0o644)
    finished = subprocess.run(
        [service_python(), "-P", "-s", str(root / "probe.py"), str(image), kernel],
        env={**child_environment(), "PYTHONPATH": str(root)},
        cwd="/",
        capture_output=True,
        text=True,
        timeout=120,
        **as_service_user(),
    )
    assert finished.returncode == 0, finished.stderr
    assert json.loads(finished.stdout) == {
        "words": ["Quarterly", "Harvest", "Report"],
        "threads started after confinement": [],
        "threads": 1,  # OpenMP held to one thread: Tesseract runs on the child's own
        "socket": "EPERM",
        "fork": "EAGAIN",
        "thread": "RuntimeError",
        "execve": "EPERM",
        "OMP_THREAD_LIMIT": "1",
    }


class _Answer:
    def __init__(self, status_code: int, body: bytes) -> None:
        self.status_code, self.text = status_code, body.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.text)


def _post(service: Any, data: bytes, fmt: str = "pdf", name: str = "scan.pdf") -> _Answer:
    """A call to the service with the standard library's client (the reader tests' interpreter
    has no httpx)."""
    query = urllib.parse.urlencode({"format": fmt, "name": name})
    request = urllib.request.Request(
        f"{service.url}/v1/extract?{query}",
        data=data,
        method="POST",
        headers={"Authorization": f"Bearer {service.token}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            return _Answer(answer.status, answer.read())
    except urllib.error.HTTPError as error:
        return _Answer(error.code, error.read())


def test_the_service_reads_a_scanned_page_in_its_confined_child(start_extractor: Any) -> None:
    service = start_extractor()
    answer = _post(service, scanned_pdf())
    assert answer.status_code == 200, answer.text
    artifact = answer.json()
    assert texts(artifact)[0] == ("heading", "Quarterly Harvest Report")
    assert artifact["attrs"]["ocr_pages"] == [1]
    assert "+tesseract5." in artifact["parser_version"]
    off = start_extractor({"LOOM_EXTRACTOR_OCR": "off"})
    artifact = _post(off, scanned_pdf()).json()
    assert failed(artifact) == {
        "page 1": "the page has no text and draws an image: its text needs OCR"
    }


def test_the_service_refuses_to_start_when_a_named_model_is_missing(tmp_path: Path) -> None:
    from tests.extractor.conftest import serve_command, service_environment

    finished = subprocess.run(
        serve_command(),
        env=service_environment("t" * 24, {"LOOM_EXTRACTOR_OCR_LANGUAGES": "eng+xyz"}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert finished.returncode == 2 and finished.stdout == ""
    [line] = finished.stderr.splitlines()
    assert line.startswith(
        "loom-extractor: LOOM_EXTRACTOR_OCR_LANGUAGES names xyz, but no such model is installed"
    )


def test_hostile_pdf_images_end_typed_within_the_childs_limits(start_extractor: Any) -> None:
    whole = fixture("scan.jpg")
    images = [
        image_object(_jpeg_claiming(65_000, 65_000), 100, 100, filters=b"/DCTDecode"),
        image_object(whole[: len(whole) // 3], *SCAN_SIZE, filters=b"/DCTDecode"),
        image_object(
            b"\x00\x01\xff" * 20,
            2000,
            10000,
            filters=b"/CCITTFaxDecode",
            bits=1,
            extra=b"/DecodeParms << /K -1 /Columns 2000 /Rows 10000 >>",
        ),
        # a Flate bomb: 6000 by 6000 declared, a stream inflating past pypdf's 75 MB bound
        image_object(zlib.compress(bytes(80_000_000)), 6000, 6000, filters=b"/FlateDecode"),
    ]
    data = image_pages(images, [[(k, SCAN_PLACE)] for k in range(len(images))])
    service = start_extractor(
        {"LOOM_EXTRACTOR_MEMORY_MB": "1024", "LOOM_EXTRACTOR_TIMEOUT_S": "60"}
    )
    answer = _post(service, data, name="hostile.pdf")
    assert answer.status_code == 200, answer.text
    reasons = failed(answer.json())
    prefix = "the page has no text and its image is not read with OCR: "
    # the JPEG's own header is read before it is decoded, whatever its dictionary says
    assert (
        reasons["page 1"] == prefix + "it is 65000 by 65000 pixels, over the 40 M pixels OCR reads"
    )
    assert reasons["page 2"] == prefix + "the JPEG image cannot be decoded"
    assert reasons["page 3"] == prefix + "the TIFF image cannot be decoded"
    assert reasons["page 4"].startswith(prefix + "its stream cannot be decoded")


# -- PPTX: a picture covering a fifth of its slide ---------------------------------------------

SLIDE_W, SLIDE_H = 9_144_000, 6_858_000
CHART = (
    '<p:graphicFrame><p:nvGraphicFramePr/><a:graphic><a:graphicData uri="http://schemas.'
    'openxmlformats.org/drawingml/2006/chart"/></a:graphic></p:graphicFrame>'
)
# the slide fixture (8 by 3 inches) shown 8 by 3 inches: a third of a 10 by 7.5 inch slide
LARGE = picture(8 * 914_400, 3 * 914_400)


def deck(slides: list[str], media: bytes | None = None) -> bytes:
    return pptx(slides, extra={"ppt/media/image1.png": media or fixture("slide.png")})


def test_a_large_picture_is_read_into_a_paragraph_after_the_slides_shapes(
    ocr_on: Engine,
) -> None:
    artifact = extract_pptx(deck([slide_xml(text_shape("Caption") + LARGE)]), {}, name="d.pptx")
    assert texts(artifact) == [
        ("paragraph", "Caption"),
        ("paragraph", "Whiteboard notes\nShip the parser on Friday"),
    ]
    assert [b.get("attrs", {}).get("ocr") for b in artifact["blocks"]] == [None, True]
    assert artifact["attrs"]["ocr_slides"] == [1]
    assert artifact["coverage"]["complete"] is True
    assert artifact["parser_version"].endswith(f"+tesseract{ocr_on.version}")


def test_a_picture_several_slides_show_is_read_once(
    ocr_on: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[int] = []
    real = Engine.read

    def counted(self: Engine, *args: Any) -> Any:
        reads.append(1)
        return real(self, *args)

    monkeypatch.setattr(Engine, "read", counted)
    artifact = extract_pptx(deck([slide_xml(LARGE)] * 3), {}, name="d.pptx")
    assert len(reads) == 1
    assert artifact["attrs"]["ocr_slides"] == [1, 2, 3]
    assert artifact["coverage"]["complete"] is True


def test_a_picture_under_a_fifth_of_the_slide_is_left_alone(ocr_on: Engine) -> None:
    small = picture(SLIDE_W // 3, SLIDE_H // 3)  # a ninth
    artifact = extract_pptx(deck([slide_xml(text_shape("Caption") + small)]), {}, name="d.pptx")
    assert texts(artifact) == [("paragraph", "Caption")]
    assert artifact["blocks"][0]["attrs"]["images_unread"] == 1
    assert "ocr_slides" not in artifact["attrs"]


def test_without_ocr_or_for_a_linked_picture_the_slide_is_a_failed_unit(
    ocr_on: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    linked = picture(8 * 914_400, 3 * 914_400, link=True)
    artifact = extract_pptx(deck([slide_xml(text_shape("A") + linked)]), {}, name="d.pptx")
    assert failed(artifact) == {
        "slide 1": "a picture covering a fifth of the slide or more is linked rather than held"
        " in the file; it needs OCR"
    }
    monkeypatch.setenv("LOOM_EXTRACTOR_OCR", "off")
    artifact = extract_pptx(deck([slide_xml(text_shape("A") + LARGE)]), {}, name="d.pptx")
    assert failed(artifact) == {
        "slide 1": "a picture covers a fifth of the slide or more; it needs OCR (not run)"
    }


def test_a_slide_whose_only_text_ocr_read_and_that_holds_a_chart_is_a_failed_unit(
    ocr_on: Engine,
) -> None:
    artifact = extract_pptx(deck([slide_xml(LARGE + CHART), slide_xml(LARGE)]), {}, name="d.pptx")
    assert failed(artifact) == {
        "slide 1": "its only text is what OCR read, and it holds what drawings show (1 chart)"
    }
    assert artifact["attrs"]["ocr_slides"] == [1, 2]
    assert texts(artifact)[-1] == ("paragraph", "Whiteboard notes\nShip the parser on Friday")


@pytest.mark.parametrize(
    ("media", "why"),
    [
        (
            lambda: _png(100_000, 100_000),
            "it is 100000 by 100000 pixels, over the 40 M pixels OCR reads",
        ),
        (
            lambda: _tiff(100_000, 100_000),
            "it is 100000 by 100000 pixels, over the 40 M pixels OCR reads",
        ),
        (
            lambda: b"<svg xmlns='http://www.w3.org/2000/svg'/>",
            "its header cannot be read as an image",
        ),
    ],
    ids=["PNG bomb", "TIFF bomb", "not an image Leptonica reads"],
)
def test_a_hostile_slide_picture_fails_its_slide_naming_why(
    ocr_on: Engine, media: Any, why: str
) -> None:
    artifact = extract_pptx(deck([slide_xml(text_shape("A") + LARGE)], media()), {}, name="d.pptx")
    assert failed(artifact) == {
        "slide 1": f"a picture covering a fifth of the slide or more is not read with OCR: {why}"
    }
    assert texts(artifact) == [("paragraph", "A")]


def test_the_service_reads_a_slide_picture_and_ends_picture_bombs_typed(
    start_extractor: Any,
) -> None:
    service = start_extractor({"LOOM_EXTRACTOR_MEMORY_MB": "1024"})
    answer = _post(service, deck([slide_xml(LARGE)]), fmt="pptx", name="d.pptx")
    assert answer.status_code == 200, answer.text
    assert texts(answer.json()) == [("paragraph", "Whiteboard notes\nShip the parser on Friday")]
    for bomb in (_png(100_000, 100_000), _tiff(100_000, 100_000), _jpeg_claiming(65_000, 65_000)):
        answer = _post(service, deck([slide_xml(LARGE)], bomb), fmt="pptx", name="d.pptx")
        assert answer.status_code == 200, answer.text
        [(unit, reason)] = failed(answer.json()).items()
        assert reason.endswith("over the 40 M pixels OCR reads"), reason


def _samples_as(kind: str) -> tuple[bytes, bytes, int]:
    """The scan's gray samples as another PDF colour space: (samples, /ColorSpace, bits)."""
    gray = zlib.decompress(fixture("scan.gray.z"))
    if kind == "rgb":
        out = bytearray(len(gray) * 3)
        for channel in range(3):
            out[channel::3] = gray
        return bytes(out), b"/DeviceRGB", 8
    if kind == "cmyk":
        out = bytearray(len(gray) * 4)
        out[3::4] = gray.translate(bytes(255 - k for k in range(256)))  # all of it in black
        return bytes(out), b"/DeviceCMYK", 8
    if kind == "indexed":
        palette = bytes(range(256)).hex().encode()
        return gray, b"[/Indexed /DeviceGray 255 <" + palette + b">]", 8
    # one bit a sample, 0 black, each row padded to a byte
    width, height = SCAN_SIZE
    rows = bytearray()
    for y in range(height):
        row = gray[y * width : (y + 1) * width]
        bits = bytearray((width + 7) // 8)
        for x, value in enumerate(row):
            if value >= 128:
                bits[x >> 3] |= 0x80 >> (x & 7)
        rows += bits
    return bytes(rows), b"/DeviceGray", 1


@pytest.mark.parametrize("kind", ["rgb", "cmyk", "indexed", "one bit"])
def test_raw_samples_of_each_colour_space_are_read(ocr_on: Engine, kind: str) -> None:
    samples, colour, bits = _samples_as(kind)
    image = image_object(
        zlib.compress(samples), *SCAN_SIZE, filters=b"/FlateDecode", colour=colour, bits=bits
    )
    artifact = extract_pdf(scanned_pdf(image), {}, name="scan.pdf")
    assert texts(artifact)[:2] == [
        ("heading", "Quarterly Harvest Report"),
        ("paragraph", SCAN_PARAGRAPHS[0]),
    ]


def test_a_slide_picture_inflates_within_a_bound_of_its_own(ocr_on: Engine) -> None:
    slides = [slide_xml(text_shape("A") + LARGE)]
    over = zips.with_declared_size(deck(slides), "ppt/media/image1.png", 100_000_000)
    artifact = extract_pptx(over, {}, name="d.pptx")
    assert failed(artifact) == {
        "slide 1": "a picture covering a fifth of the slide or more is not read with OCR:"
        " ppt/media/image1.png: declares 100,000,000 bytes, over 67,108,864"
    }
    # a zip bomb: 50 MB of zeros declared as a kilobyte is inflated only as far as it declares
    parts = {
        "[Content_Types].xml": "<Types/>",
        "_rels/.rels": rels(("rId1", "officeDocument", "ppt/presentation.xml")),
    }
    with zipfile.ZipFile(io.BytesIO(deck(slides))) as archive:
        parts.update({name: archive.read(name) for name in archive.namelist()})
    del parts["ppt/media/image1.png"]
    bomb = zips.bomb(parts, "ppt/media/image1.png", inflated=50_000_000, declared=1_000)
    artifact = extract_pptx(bomb, {}, name="d.pptx")
    assert failed(artifact) == {
        "slide 1": "a picture covering a fifth of the slide or more is not read with OCR:"
        " ppt/media/image1.png: cannot be read: Bad CRC-32 for file 'ppt/media/image1.png'"
    }
