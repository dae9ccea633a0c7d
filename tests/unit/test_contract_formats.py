"""format_of: declared format, else extension, else media type, else text; never the bytes."""

from __future__ import annotations

import pytest

from loom_dagster.contract.formats import (
    EXTENSIONS,
    FORMATS,
    LEGACY_OFFICE_EXTENSIONS,
    MEDIA_TYPES,
    format_for_media_type,
    format_of,
)
from loom_dagster.errors import ExtractionFailed

OOXML = "application/vnd.openxmlformats-officedocument"


def test_format_names_are_the_contracts():
    assert FORMATS == (
        "markdown", "html", "text", "sql", "toml", "pdf", "docx", "pptx", "xlsx", "csv", "parquet"
    )  # fmt: skip


def test_every_extension_and_media_type_names_a_format():
    assert set(EXTENSIONS.values()) <= set(FORMATS)
    assert set(MEDIA_TYPES.values()) <= set(FORMATS)
    assert not LEGACY_OFFICE_EXTENSIONS & set(EXTENSIONS)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("a.md", "markdown"),
        ("a.markdown", "markdown"),
        ("a.mdx", "markdown"),
        ("a.html", "html"),
        ("a.htm", "html"),
        ("a.txt", "text"),
        ("a.text", "text"),
        ("a.log", "text"),
        ("a.sql", "sql"),
        ("a.toml", "toml"),
        ("a.pdf", "pdf"),
        ("a.docx", "docx"),
        ("a.pptx", "pptx"),
        ("a.xlsx", "xlsx"),
        ("a.csv", "csv"),
        ("a.tsv", "csv"),
        ("a.parquet", "parquet"),
    ],
)
def test_extension_names_the_format(name, expected):
    assert format_of(name) == expected


@pytest.mark.parametrize(
    ("media_type", "expected"),
    [
        ("text/markdown", "markdown"),
        ("text/html", "html"),
        ("text/plain", "text"),
        ("application/sql", "sql"),
        ("application/toml", "toml"),
        ("application/pdf", "pdf"),
        (f"{OOXML}.wordprocessingml.document", "docx"),
        (f"{OOXML}.presentationml.presentation", "pptx"),
        (f"{OOXML}.spreadsheetml.sheet", "xlsx"),
        ("text/csv", "csv"),
        ("text/tab-separated-values", "csv"),
        ("application/vnd.apache.parquet", "parquet"),
        ("application/x-parquet", "parquet"),
    ],
)
def test_media_type_names_the_format(media_type, expected):
    assert format_for_media_type(media_type) == expected
    assert format_of("upload", media_type=media_type) == expected


def test_declared_format_wins_over_extension_and_media_type():
    assert format_of("a.pdf", declared_format="markdown", media_type="text/html") == "markdown"


def test_extension_wins_over_media_type():
    assert format_of("a.sql", media_type="text/html") == "sql"


def test_media_type_applies_when_the_extension_names_no_format():
    assert format_of("notes", media_type="text/markdown") == "markdown"
    assert format_of("scan.bin", media_type="application/pdf") == "pdf"


def test_text_when_nothing_names_a_format():
    assert format_of("README") == "text"
    assert format_of("picture.png") == "text"
    assert format_of("data.bin", media_type="application/octet-stream") == "text"
    assert format_of("") == "text"


def test_an_empty_declared_format_counts_as_none():
    assert format_of("a.sql", declared_format="") == "sql"


def test_case_is_ignored():
    assert format_of("REPORT.PDF") == "pdf"
    assert format_of("Notes.Md") == "markdown"
    assert format_of("a", declared_format="PDF") == "pdf"
    assert format_of("a", media_type="Text/Markdown") == "markdown"


def test_media_type_parameters_are_ignored():
    assert format_for_media_type("text/markdown; charset=utf-8") == "markdown"
    assert format_for_media_type("TEXT/CSV ; header=present") == "csv"
    assert format_of("upload", media_type="text/markdown; charset=utf-8") == "markdown"


def test_unknown_media_type_names_no_format():
    assert format_for_media_type("image/png") is None
    assert format_for_media_type("") is None


def test_extension_is_read_from_the_last_path_component():
    assert format_of("docs/guide/intro.md") == "markdown"
    assert format_of("C:\\docs\\plan.docx") == "docx"
    assert format_of("site.md/page") == "text"
    assert format_of("archive.tar.sql") == "sql"


@pytest.mark.parametrize("name", ["old.doc", "budget.xls", "deck.ppt", "OLD.DOC", "a/b/c.Xls"])
def test_legacy_office_names_are_refused(name):
    with pytest.raises(ExtractionFailed) as refused:
        format_of(name)
    assert refused.value.code == "unsupported_format"
    # Refused before any call, whatever the media type says.
    with pytest.raises(ExtractionFailed) as refused:
        format_of(name, media_type="application/pdf")
    assert refused.value.code == "unsupported_format"


def test_legacy_office_name_with_a_declared_format_is_that_format():
    assert format_of("old.doc", declared_format="docx") == "docx"
    assert format_of("budget.xls", declared_format="csv") == "csv"


@pytest.mark.parametrize("declared", ["rtf", "doc", "markdownx", " "])
def test_unknown_declared_format_is_refused(declared):
    with pytest.raises(ExtractionFailed) as refused:
        format_of("a.md", declared_format=declared)
    assert refused.value.code == "unsupported_format"
    assert "\n" not in refused.value.message
