"""Hostile DOCX and PPTX files, each read by a real confined child (extractor_sandbox.child, as
extractor_sandbox.runner starts it): each ends in a clear outcome (a refusal, or an artifact whose
coverage names what was not read), within the child's memory limit, and nothing hangs."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest

from extractor_sandbox.errors import ExtractError
from extractor_sandbox.runner import Limits
from tests.extractor import zips
from tests.extractor.office_packages import docx, paragraph, pptx, slide_xml, style, text_shape
from tests.extractor.server_check import validated

ROOT = Path(__file__).resolve().parents[2]
MIB = 1024 * 1024
GIB = 1024 * MIB
LIMITS = Limits(timeout_s=120, max_output_bytes=256 * MIB, cpu_s=120, memory_mb=2048)

LAUGHS = """<?xml version="1.0" encoding="{encoding}"?>
<!DOCTYPE lolz [<!ENTITY lol "lol">
<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
<!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
<!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
<!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
<!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
<!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
<!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">]>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">
<w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>"""


def laughs(encoding: str) -> bytes:
    text = LAUGHS.format(encoding=encoding.upper())
    return text.encode("utf-16") if encoding == "utf-16" else text.encode("utf-8")


# Each extraction runs from a fresh interpreter, so the largest resident size of its children
# is this extraction's child alone: a test worker's own RUSAGE_CHILDREN also counts every process
# an earlier test of the worker started (a `loom` command, another service), whatever its size.
MEASURED = """
import json, resource, sys
from extractor_sandbox.errors import ExtractError
from extractor_sandbox.runner import Limits, run_extraction
fmt, name, limits = sys.argv[1], sys.argv[2], Limits(**json.loads(sys.argv[3]))
try:
    made = run_extraction(sys.stdin.buffer.read(), fmt, name, {}, limits)
    answer = {"artifact": made.decode("utf-8") if isinstance(made, bytes) else made}
except ExtractError as error:
    answer = {"code": error.code, "message": error.message}
answer["peak_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps(answer))
"""
PEAKS_MB: list[float] = []  # each measured extraction's child, in order


def measured(data: bytes, fmt: str) -> dict[str, Any]:
    """What a confined child answers for `data`, and its peak resident size (in PEAKS_MB)."""
    limits = json.dumps(LIMITS._asdict())
    done = subprocess.run(
        [sys.executable, "-c", MEASURED, fmt, f"hostile.{fmt}", limits],
        input=data,
        capture_output=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    answer: dict[str, Any] = json.loads(done.stdout)
    PEAKS_MB.append(answer["peak_mb"])
    return answer


def run(data: bytes, fmt: str) -> dict[str, Any]:
    """The artifact a confined child makes of `data`, once the server's check accepts it."""
    answer = measured(data, fmt)
    assert "artifact" in answer, answer
    return validated(json.loads(answer["artifact"]), data)


def refusal(data: bytes, fmt: str) -> ExtractError:
    answer = measured(data, fmt)
    assert "code" in answer, "no refusal"
    return ExtractError(answer["code"], answer["message"])


def peak_child_mb() -> float:
    """The largest resident size the last measured extraction's child reached."""
    return PEAKS_MB[-1]


def assert_bounded(started: float, seconds: float) -> None:
    assert time.monotonic() - started < seconds
    assert peak_child_mb() < LIMITS.memory_mb


DOCUMENT = "word/document.xml"
BODY = docx(paragraph("Body text"), styles=style("Heading1", "heading 1"))


def parts_of(data: bytes, leaving_out: str = "") -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist() if name != leaving_out}


def docx_parts() -> dict[str, bytes]:
    return parts_of(BODY)


def test_a_document_part_declaring_1kb_that_inflates_to_1gb_stops_there() -> None:
    data = zips.bomb(parts_of(BODY, leaving_out=DOCUMENT), DOCUMENT, inflated=GIB, declared=1024)
    started = time.monotonic()
    error = refusal(data, "docx")
    assert error.code == "corrupt" and DOCUMENT in error.message
    assert_bounded(started, 30)


def test_a_slide_that_inflates_past_its_declared_size_fails_its_slide_only() -> None:
    deck = pptx([slide_xml(text_shape("kept")), slide_xml(text_shape("bomb"))])
    slide = "ppt/slides/slide2.xml"
    data = zips.bomb(parts_of(deck, leaving_out=slide), slide, inflated=GIB, declared=1024)
    started = time.monotonic()
    artifact = run(data, "pptx")
    assert [b["text"] for b in artifact["blocks"]] == ["kept"]
    assert [f["unit"] for f in artifact["coverage"]["failed"]] == ["slide 2"]
    assert_bounded(started, 30)


def test_a_document_part_declaring_300_mib_is_refused_unread() -> None:
    data = zips.with_declared_size(BODY, DOCUMENT, 300 * MIB)
    error = refusal(data, "docx")
    assert error.code == "corrupt" and "over 256 MiB" in error.message


def test_a_styles_part_declaring_300_mib_fails_the_styles_unit_only() -> None:
    data = zips.with_declared_size(BODY, "word/styles.xml", 300 * MIB)
    artifact = run(data, "docx")
    assert [b["text"] for b in artifact["blocks"]] == ["Body text"]
    [failed] = artifact["coverage"]["failed"]
    assert failed["unit"] == "styles" and "over 256 MiB" in failed["reason"]


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
def test_a_billion_laughs_document_part_is_refused_before_any_entity(encoding: str) -> None:
    data = zips.package({**docx_parts(), DOCUMENT: laughs(encoding)})
    started = time.monotonic()
    error = refusal(data, "docx")
    assert error.code == "corrupt" and "DOCTYPE" in error.message
    assert_bounded(started, 10)


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
def test_a_billion_laughs_slide_fails_its_slide(encoding: str) -> None:
    data = pptx(
        [slide_xml(text_shape("fine")), slide_xml("")],
        extra={"ppt/slides/slide2.xml": laughs(encoding)},
    )
    artifact = run(data, "pptx")
    [failed] = artifact["coverage"]["failed"]
    assert failed["unit"] == "slide 2" and "DOCTYPE" in failed["reason"]


def test_a_docx_whose_document_part_is_not_xml_is_corrupt() -> None:
    data = zips.package({**docx_parts(), DOCUMENT: b"PK\x03\x04 this is no XML \xff\xfe"})
    error = refusal(data, "docx")
    assert error.code == "corrupt" and DOCUMENT in error.message


UNKNOWN_ENCODING = b'<?xml version="1.0" encoding="UTi-8"?>'


def test_a_docx_whose_document_part_declares_an_unknown_encoding_is_corrupt_in_one_line() -> None:
    body = UNKNOWN_ENCODING + b"<w:document/>"
    error = refusal(zips.package({**docx_parts(), DOCUMENT: body}), "docx")
    assert (error.code, error.message) == (
        "corrupt",
        f"the document part {DOCUMENT}: declares an encoding it cannot be read in:"
        " unknown encoding: UTi-8",
    )


def test_a_slide_declaring_an_unknown_encoding_fails_that_slide_only() -> None:
    slide = UNKNOWN_ENCODING + b"<p:sld/>"
    data = pptx(
        [slide_xml(text_shape("fine")), slide_xml("")], extra={"ppt/slides/slide2.xml": slide}
    )
    artifact = run(data, "pptx")
    [failed] = artifact["coverage"]["failed"]
    assert failed["unit"] == "slide 2" and "unknown encoding: UTi-8" in failed["reason"]
    assert any("fine" in block["text"] for block in artifact["blocks"])


def test_a_pptx_whose_slide_list_names_a_missing_part_fails_that_slide() -> None:
    data = pptx([slide_xml(text_shape("here")), slide_xml(text_shape("gone"))], missing=[1])
    artifact = run(data, "pptx")
    assert artifact["coverage"]["failed"] == [
        {"unit": "slide 2", "reason": "its relationship names no slide part"}
    ]
    assert (artifact["coverage"]["total"], artifact["coverage"]["extracted"]) == (2, 1)


def test_a_hundred_thousand_empty_paragraphs_read_quickly_to_nothing() -> None:
    data = docx("<w:p/>" * 50_000 + "<w:p><w:pPr/></w:p>" * 50_000)
    started = time.monotonic()
    artifact = run(data, "docx")
    assert artifact["blocks"] == [] and artifact["coverage"]["complete"] is True
    assert_bounded(started, 30)


@pytest.mark.slow
def test_a_table_of_ten_thousand_rows_by_a_hundred_cells_is_one_block() -> None:
    def row(r: int) -> str:
        cells = "".join(
            f"<w:tc><w:p><w:r><w:t>r{r}c{c}</w:t></w:r></w:p></w:tc>" for c in range(100)
        )
        return f"<w:tr>{cells}</w:tr>"

    data = docx("<w:tbl>" + "".join(row(r) for r in range(10_000)) + "</w:tbl>")
    started = time.monotonic()
    artifact = run(data, "docx")
    [block] = artifact["blocks"]
    assert block["attrs"]["table"] == {"rows": 10_000, "columns": 100}
    assert block["text"].splitlines()[-1].endswith("r9999c98 | r9999c99")
    assert_bounded(started, LIMITS.timeout_s)
    print(f"peak child resident size: {peak_child_mb():.0f} MB")
