"""Hostile PDFs: each has one clear outcome, in process and, for the bomb and the huge page, in a
real confined child under the service's limits."""

from __future__ import annotations

import json
import logging
import random
import re
import zlib

import pytest

from extractor_sandbox.errors import ExtractError
from extractor_sandbox.formats.pdf.reader import extract_pdf
from extractor_sandbox.runner import Limits, run_extraction
from tests.extractor.pdf_build import FONT, flate, one_page, pdf, stream, text_content
from tests.extractor.server_check import validated

LIMITS = Limits(timeout_s=60, max_output_bytes=64 * 1024 * 1024, cpu_s=60, memory_mb=1024)


@pytest.fixture(autouse=True)
def _quiet_pypdf():
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


def extract(data: bytes) -> dict:
    return validated(extract_pdf(data, {}, name="hostile.pdf"), data)


def deflate_bomb() -> bytes:
    """A content stream of 200 MiB of spaces, deflated to about 200 KB."""
    packer = zlib.compressobj(9)
    chunk = b" " * (1 << 20)
    packed = b"".join(packer.compress(chunk) for _ in range(200)) + packer.flush()
    return pdf(one_page(packed, filters=b"/Filter /FlateDecode"))


def million_runs() -> bytes:
    return pdf(one_page(b"BT /F1 1 Tf\n" + b"(a) Tj\n" * 1_000_000 + b"ET"))


def test_a_deflate_bomb_in_a_content_stream_fails_its_page_not_the_file() -> None:
    artifact = extract(deflate_bomb())
    assert artifact["coverage"]["failed"][0]["unit"] == "page 1"
    assert "LimitReachedError" in artifact["coverage"]["failed"][0]["reason"]
    assert artifact["coverage"]["extracted"] == 0


def test_a_deflate_bomb_in_a_confined_child_is_a_failed_page() -> None:
    answer = json.loads(run_extraction(deflate_bomb(), "pdf", "bomb.pdf", {}, LIMITS))
    assert answer["coverage"]["failed"][0]["unit"] == "page 1"
    assert answer["coverage"]["complete"] is False


def test_a_filter_chain_of_two_deflates_is_read() -> None:
    content = flate(flate(text_content(["Hello through two filters"])))
    artifact = extract(pdf(one_page(content, filters=b"/Filter [/FlateDecode /FlateDecode]")))
    assert [b["text"] for b in artifact["blocks"]] == ["Hello through two filters"]
    assert artifact["coverage"]["complete"] is True


def nested_forms(depth: int) -> list[bytes]:
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> /XObject << /X0 6 0 R >> >> >>",
        stream(text_content(["Top text on the page"]) + b"\n/X0 Do"),
        FONT,
    ]
    for k in range(depth):
        inner = b"/X%d Do" % (k + 1) if k < depth - 1 else text_content(["Deep text"], 9, top=500)
        objects.append(
            stream(
                inner,
                b"/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font "
                b"<< /F1 5 0 R >> /XObject << /X%d %d 0 R >> >>" % (k + 1, 7 + k),
            )
        )
    return objects


def test_deeply_nested_forms_stop_at_the_fifth_and_the_page_says_so() -> None:
    artifact = extract(pdf(nested_forms(8)))
    assert [b["text"] for b in artifact["blocks"]] == ["Top text on the page"]
    [failed] = artifact["coverage"]["failed"]
    assert failed["unit"] == "page 1"
    assert "nested inside four others" in failed["reason"]


def test_forms_within_the_depth_are_read() -> None:
    artifact = extract(pdf(nested_forms(3)))
    assert "Deep text" in [b["text"] for b in artifact["blocks"]]
    assert artifact["coverage"]["complete"] is True


def test_a_form_that_draws_itself_is_walked_once() -> None:
    objects = nested_forms(1)
    objects[5] = stream(
        b"/X0 Do",
        b"/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /XObject "
        b"<< /X0 6 0 R >> >>",
    )
    artifact = extract(pdf(objects))
    assert "draws itself" in artifact["coverage"]["failed"][0]["reason"]


def test_a_page_tree_with_a_cycle_is_corrupt() -> None:
    objects = one_page(text_content(["Cycle page"]))
    objects[1] = b"<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 2 >>"
    with pytest.raises(ExtractError) as raised:
        extract_pdf(pdf(objects), {}, name="cycle.pdf")
    assert raised.value.code == "corrupt"


def test_a_million_tiny_runs_on_one_page_fail_that_page_in_a_confined_child() -> None:
    answer = json.loads(run_extraction(million_runs(), "pdf", "runs.pdf", {}, LIMITS))
    [failed] = answer["coverage"]["failed"]
    assert failed["unit"] == "page 1"
    assert "maximum number of tokens" in failed["reason"]


def test_an_xref_pointing_everywhere_is_recovered_by_reading_the_objects() -> None:
    good = pdf(one_page(text_content(["Hello xref"])))
    scrambled = random.Random(1)
    bad = re.sub(
        rb"\d{10} 00000 n",
        lambda _: b"%010d 00000 n" % scrambled.randrange(0, 10**9),
        good,
    )
    assert bad != good
    artifact = extract(bad)
    assert [b["text"] for b in artifact["blocks"]] == ["Hello xref"]


def test_a_truncated_file_is_corrupt() -> None:
    good = pdf(one_page(text_content(["Hello"])))
    with pytest.raises(ExtractError) as raised:
        extract_pdf(good[: len(good) // 2], {}, name="cut.pdf")
    assert raised.value.code == "corrupt"


def test_a_password_protected_pdf_is_unsupported() -> None:
    import io

    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(200, 200)
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="RC4-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    with pytest.raises(ExtractError) as raised:
        extract_pdf(buffer.getvalue(), {}, name="locked.pdf")
    assert raised.value.code == "unsupported_format"


def test_a_page_of_more_runs_than_the_reader_collects_is_read_as_its_text_layer() -> None:
    ops = [b"BT /F1 2 Tf"]
    for line in range(100):
        ops.append(b"1 0 0 1 10 %d Tm [" % (780 - line * 7) + b"(a) -2000 " * 1100 + b"] TJ")
    ops.append(b"ET")
    artifact = extract(pdf(one_page(b"\n".join(ops))))
    assert artifact["warnings"] == [
        "page 1 is read as its text layer: it shows more text runs than the reader collects"
    ]
    assert artifact["coverage"]["complete"] is True
    # the text past the runs collected is read from pypdf's whole text layer, none dropped
    assert sum(block["text"].count("a") for block in artifact["blocks"]) == 110_000
