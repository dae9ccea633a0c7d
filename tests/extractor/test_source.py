"""Format detection and strict decoding (extractor_sandbox.source), each rule with its refusal."""

from __future__ import annotations

import codecs
import io
import zipfile

import pytest

from extractor_sandbox.errors import ExtractError
from extractor_sandbox.source import codec_name, decode, detect_format

OLE2 = bytes.fromhex("D0CF11E0A1B11AE1") + b"\x00" * 504


def zip_with(*names: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in names:
            archive.writestr(name, "<x/>")
    return buffer.getvalue()


DOCX = zip_with("[Content_Types].xml", "word/document.xml")
PPTX = zip_with("[Content_Types].xml", "ppt/presentation.xml")
XLSX = zip_with("[Content_Types].xml", "xl/workbook.xml")
PARQUET = b"PAR1" + b"\x15\x00" * 8 + b"PAR1"


def refusal(call: object, *args: object, **kwargs: object) -> tuple[str, str]:
    assert callable(call)
    with pytest.raises(ExtractError) as caught:
        call(*args, **kwargs)
    return caught.value.code, caught.value.message


# -- detect_format -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "fmt"),
    [
        (b"%PDF-1.7\n...", "pdf"),
        (DOCX, "docx"),
        (PPTX, "pptx"),
        (XLSX, "xlsx"),
        (PARQUET, "parquet"),
        (b"# Title\n", "markdown"),
        (b"hello\n", "text"),
    ],
)
def test_content_of_the_format_asked_for_passes(data: bytes, fmt: str) -> None:
    detect_format(data, "file", fmt)


@pytest.mark.parametrize(
    ("data", "asked", "message"),
    [
        (b"%PDF-1.4\n%...", "markdown", "the file is pdf, not markdown"),
        (DOCX, "text", "the file is docx, not text"),
        (PPTX, "docx", "the file is pptx, not docx"),
        (XLSX, "csv", "the file is xlsx, not csv"),
        (PARQUET, "csv", "the file is parquet, not csv"),
    ],
)
def test_content_of_another_format_is_a_mismatch(data: bytes, asked: str, message: str) -> None:
    assert refusal(detect_format, data, "notes.md", asked) == ("format_mismatch", message)


def test_bytes_decide_not_the_name() -> None:
    # A name claiming PDF does not make Markdown bytes a PDF, nor PDF bytes Markdown.
    detect_format(b"# Title\n", "report.pdf", "markdown")
    assert refusal(detect_format, b"%PDF-1.4", "notes.md", "markdown")[0] == "format_mismatch"


@pytest.mark.parametrize(
    ("data", "asked", "message"),
    [
        (b"# just text\n", "pdf", "the file is not pdf (no %PDF- header)"),
        (b"plain words", "docx", "the file is not docx (no zip holding word/document.xml)"),
        (zip_with("a.txt"), "xlsx", "the file is not xlsx (no zip holding xl/workbook.xml)"),
        (
            b"PAR1 but not at the end",
            "parquet",
            "the file is not parquet (no PAR1 magic at its start and end)",
        ),
    ],
)
def test_a_binary_format_asked_for_text_bytes_is_a_mismatch(
    data: bytes, asked: str, message: str
) -> None:
    assert refusal(detect_format, data, "file", asked) == ("format_mismatch", message)


@pytest.mark.parametrize("asked", ["text", "markdown", "docx", "xlsx"])
def test_a_legacy_binary_office_file_is_unsupported(asked: str) -> None:
    assert refusal(detect_format, OLE2, "old.doc", asked) == (
        "unsupported_format",
        "legacy binary Office files are not supported",
    )


def test_a_damaged_zip_asked_as_office_is_corrupt() -> None:
    code, message = refusal(detect_format, DOCX[:40], "a.docx", "docx")
    assert code == "corrupt"
    assert message.startswith("the zip container cannot be read")


def test_a_damaged_zip_asked_as_text_is_left_to_the_decoder() -> None:
    detect_format(b"PK\x03\x04 not really a zip", "a.txt", "text")


def test_a_zip_that_is_docx_and_xlsx_both_passes_as_either() -> None:
    both = zip_with("word/document.xml", "xl/workbook.xml")
    detect_format(both, "x", "docx")
    detect_format(both, "x", "xlsx")
    assert refusal(detect_format, both, "x", "pptx") == (
        "format_mismatch",
        "the file is docx, not pptx",
    )


def test_a_package_whose_main_part_sits_elsewhere_is_known_by_its_folder() -> None:
    # pandoc's test/docx/alternate_document_path.docx: word/document2.xml, named by _rels/.rels.
    moved = zip_with("_rels/.rels", "word/document2.xml", "word/styles.xml")
    detect_format(moved, "x", "docx")
    assert refusal(detect_format, moved, "x", "xlsx") == (
        "format_mismatch",
        "the file is docx, not xlsx",
    )


def test_a_zip_of_two_kinds_folders_and_no_main_part_is_neither() -> None:
    both = zip_with("_rels/.rels", "word/a.xml", "xl/b.xml")
    assert refusal(detect_format, both, "x", "docx") == (
        "format_mismatch",
        "the file is not docx (no zip holding word/document.xml)",
    )


def test_a_zip_with_no_package_relationships_is_no_package() -> None:
    assert refusal(detect_format, zip_with("word/document2.xml"), "x", "docx")[0] == (
        "format_mismatch"
    )


# -- decode --------------------------------------------------------------------------------------


def test_undeclared_text_is_utf8() -> None:
    assert decode("héllo €".encode(), None) == "héllo €"


def test_an_undecodable_byte_names_its_offset() -> None:
    assert refusal(decode, b"hello world\n\xffrest", None) == (
        "encoding",
        "cannot decode byte 0xff at offset 12 as utf-8",
    )


def test_an_undecodable_byte_in_a_declared_encoding_names_the_codec() -> None:
    assert (
        refusal(decode, b"ab\x81", "cp1252")[1] == "cannot decode byte 0x81 at offset 2 as cp1252"
    )


def test_a_nul_byte_in_undeclared_utf8_is_binary() -> None:
    assert refusal(decode, b"abc\x00def", None, fmt="markdown") == (
        "format_mismatch",
        "the file is binary (NUL byte at offset 3), not markdown",
    )


def test_a_nul_byte_behind_a_utf8_mark_is_binary_and_counted_from_the_file_start() -> None:
    assert refusal(decode, codecs.BOM_UTF8 + b"ab\x00", None)[1] == (
        "the file is binary (NUL byte at offset 5), not text"
    )


def test_a_nul_byte_in_declared_utf8_is_text() -> None:
    assert decode(b"a\x00b", "utf-8") == "a\x00b"


def test_a_utf8_mark_is_dropped_undeclared() -> None:
    assert decode(codecs.BOM_UTF8 + b"hi", None) == "hi"


@pytest.mark.parametrize("declared", ["utf-8", "UTF8", "utf-8-sig"])
def test_a_utf8_mark_is_dropped_declared(declared: str) -> None:
    assert decode(codecs.BOM_UTF8 + b"hi", declared) == "hi"


def test_only_the_first_utf8_mark_is_dropped() -> None:
    assert decode(codecs.BOM_UTF8 * 2 + b"hi", None) == "\ufeffhi"


@pytest.mark.parametrize(
    ("mark", "codec"),
    [
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
        (codecs.BOM_UTF32_LE, "utf-32-le"),
        (codecs.BOM_UTF32_BE, "utf-32-be"),
    ],
)
def test_a_byte_order_mark_picks_the_codec(mark: bytes, codec: str) -> None:
    assert decode(mark + "héllo\n".encode(codec), None) == "héllo\n"


def test_a_utf32_le_mark_is_not_read_as_utf16() -> None:
    # FF FE 00 00 starts with the UTF-16-LE mark: read as UTF-16 it would begin with a U+0000.
    assert decode(codecs.BOM_UTF32_LE + "x".encode("utf-32-le"), None) == "x"


def test_an_odd_utf16_tail_is_an_encoding_failure_at_its_offset() -> None:
    data = codecs.BOM_UTF16_LE + "ab".encode("utf-16-le") + b"c"
    assert refusal(decode, data, None) == (
        "encoding",
        "cannot decode byte 0x63 at offset 6 as utf-16",
    )


@pytest.mark.parametrize("declared", ["utf-16-le", "UTF-16LE", "utf_16_le"])
def test_the_mark_of_a_declared_byte_order_codec_is_dropped(declared: str) -> None:
    assert decode(codecs.BOM_UTF16_LE + "hé".encode("utf-16-le"), declared) == "hé"


def test_a_declared_encoding_is_used_as_given() -> None:
    assert decode("café".encode("latin-1"), "latin-1") == "café"
    # A UTF-8 mark in a Latin-1 file is three Latin-1 characters, not a mark.
    assert decode(codecs.BOM_UTF8 + b"x", "latin-1") == "ï»¿x"


def test_a_declared_encoding_wins_over_a_mark() -> None:
    assert refusal(decode, codecs.BOM_UTF16_LE + b"a\x00", "utf-8")[0] == "encoding"


@pytest.mark.parametrize("declared", ["no-such-codec", "base64", "rot13", "zlib", "undefined"])
def test_an_unknown_or_non_text_codec_is_an_invalid_option(declared: str) -> None:
    code, message = refusal(decode, b"abc", declared)
    assert code == "invalid_option"
    assert message == f"encoding {declared!r} is not a known text codec"


def test_codec_names_are_canonical() -> None:
    assert codec_name("UTF-16LE") == "utf-16-le"
    assert codec_name("latin_1") == "iso8859-1"
    assert codec_name("UTF8") == "utf-8"


def test_a_codec_that_yields_a_lone_surrogate_is_an_encoding_failure() -> None:
    code, message = refusal(decode, b"ok \\ud800", "unicode_escape")
    assert code == "encoding"
    assert message == "the text decoded as unicode-escape holds a lone surrogate at character 3"


@pytest.mark.parametrize(
    ("data", "declared", "offset"),
    [
        (b"ok \xed\xa0\x80", None, 3),
        (b"ok \xed\xa0\x80", "utf-8", 3),
        (b"o\x00\x00\xd8", "utf-16-le", 2),
        (b"\xff\xfeo\x00\x00\xd8", None, 4),
        (b"\x00\xd8\x00\x00", "utf-32-le", 0),
    ],
)
def test_an_encoded_surrogate_is_refused_by_the_codecs_not_searched(
    data: bytes, declared: str | None, offset: int
) -> None:
    # decode() searches for a lone surrogate only after codecs outside the UTF family: these
    # refuse one themselves, as an undecodable byte.
    code, message = refusal(decode, data, declared)
    assert code == "encoding"
    assert message.startswith("cannot decode byte 0x")
    assert f"at offset {offset} as " in message


def test_empty_input_is_empty_text() -> None:
    assert decode(b"", None) == ""
