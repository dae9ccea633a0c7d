"""PDFs and decks that show the OCR fixtures (tests/extractor/fixtures/ocr, made by
make_ocr_fixtures.py there) as pictures, for the OCR tests."""

from __future__ import annotations

from pathlib import Path

from tests.extractor.pdf_build import FONT, pdf, stream

FIXTURES = Path(__file__).parent / "fixtures" / "ocr"
SCAN_SIZE = (1950, 1500)  # pixels, 6.5 by 5 inches at 300 pixels an inch
SLIDE_SIZE = (1200, 450)


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def image_object(
    data: bytes,
    width: int,
    height: int,
    *,
    filters: bytes,
    colour: bytes = b"/DeviceGray",
    bits: int = 8,
    extra: bytes = b"",
) -> bytes:
    return stream(
        data,
        b"/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace %s"
        b" /BitsPerComponent %d /Filter %s %s" % (width, height, colour, bits, filters, extra),
    )


def jpeg_scan() -> bytes:
    return image_object(fixture("scan.jpg"), *SCAN_SIZE, filters=b"/DCTDecode")


def flate_scan() -> bytes:
    return image_object(fixture("scan.gray.z"), *SCAN_SIZE, filters=b"/FlateDecode")


def image_pages(
    images: list[bytes],
    draws: list[list[tuple[int, tuple[float, float, float, float]]]],
    texts: list[bytes] | None = None,
) -> bytes:
    """A PDF of len(draws) pages; page k draws, for each (image index, (x, y, w, h)), that image
    at that place (points), after its text content texts[k] (BT..ET, font /F1) if given."""
    count = len(draws)
    first_page = 3
    first_content = first_page + count
    font = first_content + count
    first_image = font + 1
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>"
        % (b" ".join(b"%d 0 R" % (first_page + k) for k in range(count)), count),
    ]
    xobjects = b" ".join(b"/Im%d %d 0 R" % (k, first_image + k) for k in range(len(images)))
    for k in range(count):
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R"
            b" /Resources << /Font << /F1 %d 0 R >> /XObject << %s >> >> >>"
            % (first_content + k, font, xobjects)
        )
    for k, page in enumerate(draws):
        ops = [texts[k]] if texts and texts[k] else []
        for index, (x, y, w, h) in page:
            ops.append(b"q %g 0 0 %g %g %g cm /Im%d Do Q" % (w, h, x, y, index))
        objects.append(stream(b"\n".join(ops)))
    objects.append(FONT)
    objects.extend(images)
    return pdf(objects)


SCAN_PLACE = (72.0, 300.0, 468.0, 360.0)  # 6.5 by 5 inches: 300 pixels an inch


def scanned_pdf(image: bytes | None = None, pages: int = 1) -> bytes:
    """A PDF whose pages show only the scan (one image object, drawn on every page)."""
    return image_pages([image or jpeg_scan()], [[(0, SCAN_PLACE)]] * pages)
