"""HTML decoding: a page's bytes decoded by its byte-order mark, else the encoding a <meta> in its
first 1,024 bytes declares (the HTML standard's prescan, labels read as browsers read them), else
UTF-8 (extractor_sandbox/formats/html/decoding.py through source.decode and source.extract)."""

from __future__ import annotations

import pytest

from extractor_sandbox.errors import ExtractError
from extractor_sandbox.source import decode, extract

# "Café “quoted” – naïve" in windows-1252: é 0xe9, curly quotes 0x93 0x94, en dash 0x96, ï 0xef.
CP1252_BODY = b"<p>Caf\xe9 \x93quoted\x94 \x96 na\xefve</p>"
TEXT = "Café “quoted” – naïve"


def html_text(data: bytes) -> str:
    artifact = extract(data, "html", "page.html", {})
    return " ".join(block["text"] for block in artifact["blocks"])


def test_a_page_declaring_windows_1252_in_meta_charset_is_decoded() -> None:
    page = b'<html><head><meta charset="windows-1252"><title>t</title></head><body>' + CP1252_BODY

    assert html_text(page) == TEXT


def test_a_meta_http_equiv_content_type_declaring_iso_8859_1_is_read_as_windows_1252() -> None:
    # Browsers read iso-8859-1 as windows-1252, so 0x93 is a curly quote, not a C1 control.
    page = (
        b'<HTML><HEAD><META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=ISO-8859-1">'
        b"</HEAD><BODY>" + CP1252_BODY
    )

    assert html_text(page) == TEXT


@pytest.mark.parametrize("label", [b"latin1", b"us-ascii", b"'iso-8859-1'"])
def test_latin_1_and_ascii_labels_are_windows_1252(label: bytes) -> None:
    page = b"<meta charset=" + label + b">" + CP1252_BODY

    assert html_text(page) == TEXT


def test_a_content_charset_without_http_equiv_declares_nothing() -> None:
    # The standard reads content's charset only in a Content-Type pragma: the page is UTF-8.
    page = b'<meta content="text/html; charset=windows-1252"><p>Caf\xc3\xa9</p>'

    assert html_text(page) == "Café"


def test_a_byte_order_mark_outranks_the_meta_declaration() -> None:
    page = b'\xef\xbb\xbf<meta charset="windows-1252"><p>Caf\xc3\xa9</p>'

    assert html_text(page) == "Café"


def test_the_callers_declared_encoding_outranks_the_meta_declaration() -> None:
    page = b'<meta charset="utf-8">' + CP1252_BODY

    assert decode(page, "cp1252", fmt="html").endswith(TEXT + "</p>")


def test_a_meta_inside_a_comment_or_past_the_first_1024_bytes_declares_nothing() -> None:
    commented = b'<!-- <meta charset="windows-1252"> -->' + CP1252_BODY
    late = b"<p>" + b"x" * 1_024 + b'</p><meta charset="windows-1252">' + CP1252_BODY

    for page in (commented, late):
        with pytest.raises(ExtractError) as refused:
            decode(page, None, fmt="html")
        assert refused.value.code == "encoding"
        assert "as utf-8" in str(refused.value)


def test_the_first_meta_that_names_a_known_encoding_counts() -> None:
    page = b'<meta charset="no-such-encoding"><meta charset="windows-1252">' + CP1252_BODY

    assert html_text(page) == TEXT


def test_a_meta_naming_a_codec_transform_is_no_declaration() -> None:
    # Python's codecs hold transforms no browser reads; a page cannot ask for one.
    page = b'<meta charset="unicode_escape"><p>\\u0041</p>'

    assert html_text(page) == "\\u0041"


def test_a_declared_encoding_that_does_not_decode_is_refused_naming_the_declaration() -> None:
    # 0x81 is undefined in windows-1252: strictly decoded, it is refused, not replaced.
    page = b'<meta charset="windows-1252"><p>a\x81b</p>'

    with pytest.raises(ExtractError) as refused:
        extract(page, "html", "page.html", {})

    assert refused.value.code == "encoding"
    message = str(refused.value)
    assert "byte 0x81 at offset 33 as cp1252" in message
    assert "declared 'windows-1252' in a <meta> at byte 0" in message


def test_a_meta_declaration_is_read_for_html_only() -> None:
    with pytest.raises(ExtractError) as refused:
        decode(b'<meta charset="windows-1252">' + CP1252_BODY, None, fmt="markdown")

    assert refused.value.code == "encoding"


def test_a_page_saved_as_utf_8_under_its_old_legacy_meta_is_read_as_utf_8() -> None:
    # Its bytes are valid UTF-8, which a legacy encoding's non-ASCII text practically never is.
    for label in (b"iso-8859-1", b"gb2312"):
        page = b'<meta http-equiv="Content-Type" content="text/html; charset=' + label + b'">'
        page += "<p>Café 新电脑</p>".encode()

        assert html_text(page) == "Café 新电脑"


def test_a_seven_bit_encoding_is_read_as_declared_though_its_bytes_are_ascii() -> None:
    page = b'<meta charset="iso-2022-jp"><p>' + "日本".encode("iso2022_jp") + b"</p>"

    assert html_text(page) == "日本"
