"""Format detection, strict decoding and the dispatch to a format's parser.

The bytes decide what a file is, not its name: a PDF, an Office Open XML container (by the parts
inside the zip) and a Parquet file are recognised by content, and a file that is another format
than the one asked for is refused (format_mismatch) rather than read as the one asked for. A legacy
binary Office file is refused outright (unsupported_format).

Text is decoded strictly, never with replacement characters, so what is indexed is what the file
says: UTF-8, UTF-16 or UTF-32 by its byte-order mark, else a declared encoding, else UTF-8. A UTF-8
mark is dropped whether the encoding was declared or not, as is the mark of a declared byte-order
codec (utf-16-le); an undecodable byte is an `encoding` failure naming its offset, and a NUL byte in
undeclared UTF-8 text means the file is binary.

Everything here that reads the uploader's bytes runs in the child process (extractor_sandbox.child);
the service itself only uses the declarations and `codec_name` to check a request's parameters.
"""

from __future__ import annotations

import codecs
import importlib
import importlib.util
import io
import re
import zipfile
from collections.abc import Mapping
from typing import Any

from extractor_sandbox.artifact import fit_output_bounds
from extractor_sandbox.errors import ExtractError

# Every format contract v1 names.
CONTRACT_FORMATS = (
    "markdown",
    "html",
    "text",
    "sql",
    "toml",
    "pdf",
    "docx",
    "pptx",
    "xlsx",
    "csv",
    "parquet",
)
BINARY_FORMATS = frozenset({"pdf", "docx", "pptx", "xlsx", "parquet"})

# The formats this service extracts and the options each takes, as /v1/capabilities declares them.
DECLARED_FORMATS: Mapping[str, tuple[str, ...]] = {
    "markdown": ("encoding",),
    "text": ("encoding",),
    "toml": ("encoding",),
    "sql": ("encoding", "sql_dialect"),
    "html": ("encoding",),
    "csv": ("encoding",),
    "docx": (),
    "pptx": (),
    "xlsx": (),
}

# Each declared format's parser, as (module, function): imported on first use, so the service
# process never loads a parser; only the child runs one. A text format's takes (text, options);
# a binary format's (BINARY_FORMATS) takes the bytes as they came: (data, options, name=name).
PARSERS: Mapping[str, tuple[str, str]] = {
    "markdown": ("extractor_sandbox.formats.markdown", "extract_markdown"),
    "text": ("extractor_sandbox.formats.text", "extract_text"),
    "toml": ("extractor_sandbox.formats.toml", "extract_toml"),
    "sql": ("extractor_sandbox.formats.sql", "extract_sql"),
    "html": ("extractor_sandbox.formats.html", "extract_html"),
    "csv": ("extractor_sandbox.formats.csvfile", "extract_csv"),
    "docx": ("extractor_sandbox.formats.docx", "extract_docx"),
    "pptx": ("extractor_sandbox.formats.pptx", "extract_pptx"),
    "xlsx": ("extractor_sandbox.formats.xlsx", "extract_xlsx"),
}


def _optional_formats() -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, str]]]:
    """The formats whose library this build may lack, declared only when it is there."""
    declared: dict[str, tuple[str, ...]] = {}
    parsers: dict[str, tuple[str, str]] = {}
    if importlib.util.find_spec("pyarrow") is not None:  # a build without pyarrow: no Parquet
        declared["parquet"] = ()
        parsers["parquet"] = ("extractor_sandbox.formats.parquet", "extract_parquet")
    if importlib.util.find_spec("pypdf") is not None:  # a build without pypdf: no PDF
        declared["pdf"] = ()
        parsers["pdf"] = ("extractor_sandbox.formats.pdflayout", "extract_pdf")
    return declared, parsers


_OPTIONAL_DECLARED, _OPTIONAL_PARSERS = _optional_formats()
DECLARED_FORMATS = {**DECLARED_FORMATS, **_OPTIONAL_DECLARED}
PARSERS = {**PARSERS, **_OPTIONAL_PARSERS}

# A tabular reader also takes the file's name (a .tsv name is tab-separated, with no quoting).
NAMED_PARSERS = frozenset({"csv"})

# Every option the contract names; a query parameter that is none of these, format or name is
# refused.
CONTRACT_OPTIONS = ("encoding", "sql_dialect")

# The part that makes a zip an Office Open XML document of each kind.
_OOXML_PARTS = (
    ("docx", "word/document.xml"),
    ("pptx", "ppt/presentation.xml"),
    ("xlsx", "xl/workbook.xml"),
)
_OLE2_MAGIC = bytes.fromhex("D0CF11E0A1B11AE1")
_ZIP_MAGIC = b"PK\x03\x04"

# Byte-order marks, UTF-32 before UTF-16: a UTF-32-LE mark begins with the UTF-16-LE one.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# Codecs that read a leading mark as a character (U+FEFF) rather than consuming it; it is dropped.
_MARK_DROPPED = frozenset({"utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"})
_SURROGATE = re.compile("[\ud800-\udfff]")


def detect_format(data: bytes, name: str, asked: str) -> None:
    """Refuse `data` when its content says it is another format than `asked`.

    The name is not evidence: a file called report.pdf that holds Markdown and is asked for as
    markdown is Markdown. Raises ExtractError (unsupported_format, format_mismatch or corrupt).
    """
    if data.startswith(_OLE2_MAGIC):
        raise ExtractError("unsupported_format", "legacy binary Office files are not supported")
    found = _formats_by_content(data, asked)
    if found and asked not in found:
        raise ExtractError("format_mismatch", f"the file is {found[0]}, not {asked}")
    if asked in BINARY_FORMATS and not found:
        raise ExtractError(
            "format_mismatch", f"the file is not {asked} ({_expected_content(asked)})"
        )


def _formats_by_content(data: bytes, asked: str) -> tuple[str, ...]:
    """The binary formats `data` is by its content, none for text or an unknown binary."""
    if data.startswith(b"%PDF-"):
        return ("pdf",)
    if len(data) >= 8 and data.startswith(b"PAR1") and data.endswith(b"PAR1"):
        return ("parquet",)
    if data.startswith(_ZIP_MAGIC):
        return _ooxml_kinds(data, asked)
    return ()


def _ooxml_kinds(data: bytes, asked: str) -> tuple[str, ...]:
    """The Office Open XML kinds a zip is, by the parts its directory names (none is inflated)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as error:
        if asked in BINARY_FORMATS:
            raise ExtractError("corrupt", f"the zip container cannot be read: {error}") from None
        return ()  # not a readable zip: the text decoder decides what it is
    return tuple(kind for kind, part in _OOXML_PARTS if part in names)


def _expected_content(fmt: str) -> str:
    if fmt == "pdf":
        return "no %PDF- header"
    if fmt == "parquet":
        return "no PAR1 magic at its start and end"
    part = dict(_OOXML_PARTS)[fmt]
    return f"no zip holding {part}"


def codec_name(encoding: str) -> str:
    """The codec's canonical name (utf-16-le for UTF-16LE); invalid_option for no text codec."""
    try:
        info = codecs.lookup(encoding)
        # Refuses a bytes-to-bytes codec such as base64 or zlib (an empty input would skip the
        # check) and the `undefined` codec, which refuses everything.
        b"a".decode(info.name, "ignore")
    except (LookupError, UnicodeError):
        raise ExtractError(
            "invalid_option", f"encoding {encoding!r} is not a known text codec"
        ) from None
    return info.name


def decode(data: bytes, encoding: str | None, *, fmt: str = "text") -> str:
    """The text of `data`, decoded strictly; `fmt`, the format asked for, names it in a refusal.

    Raises ExtractError: invalid_option for an unknown codec, encoding for a byte that does not
    decode, format_mismatch for a NUL byte in undeclared UTF-8 text (a binary file).
    """
    if encoding is None:
        codec = _codec_by_mark(data)
        if codec == "utf-8":
            nul = data.find(b"\x00")
            if nul >= 0:
                raise ExtractError(
                    "format_mismatch", f"the file is binary (NUL byte at offset {nul}), not {fmt}"
                )
    else:
        codec = codec_name(encoding)
    try:
        # The whole of `data`, mark included, so an error's offset is one into the original.
        text = data.decode(codec)
    except UnicodeDecodeError as error:
        raise ExtractError(
            "encoding",
            f"cannot decode byte 0x{data[error.start]:02x} at offset {error.start} as {codec}",
        ) from None
    if codec in _MARK_DROPPED and text.startswith("\ufeff"):
        text = text[1:]
    surrogate = _SURROGATE.search(text)
    if surrogate is not None:
        # Some codecs (unicode_escape) can yield one; the artifact must be valid Unicode.
        raise ExtractError(
            "encoding",
            f"the text decoded as {codec} holds a lone surrogate at character {surrogate.start()}",
        )
    return text


def _codec_by_mark(data: bytes) -> str:
    for mark, codec in _BOMS:
        if data.startswith(mark):
            return codec  # the utf-16 and utf-32 codecs read the mark and consume it
    return "utf-8"


def extract(data: bytes, fmt: str, name: str, options: Mapping[str, str]) -> dict[str, Any]:
    """The artifact of `data` read as `fmt`, with the options the parse ran with recorded in it."""
    if fmt not in DECLARED_FORMATS:
        raise ExtractError("format_unavailable", f"this service does not extract {fmt}")
    detect_format(data, name, fmt)
    if fmt in BINARY_FORMATS:
        artifact = _parser(fmt)(data, options, name=name)
    else:
        artifact = _parse_text(fmt, decode(data, options.get("encoding"), fmt=fmt), options, name)
    artifact["options"] = dict(options)
    # Last, with the tables in: however many blocks a parser made, the answer stays bounded.
    return fit_output_bounds(artifact, len(data))


def _parser(fmt: str) -> Any:
    module, function = PARSERS[fmt]
    return getattr(importlib.import_module(module), function)


def _parse_text(fmt: str, text: str, options: Mapping[str, str], name: str) -> dict[str, Any]:
    parse = _parser(fmt)
    artifact: dict[str, Any] = (
        parse(text, options, name=name) if fmt in NAMED_PARSERS else parse(text, options)
    )
    return artifact
