"""Format detection, strict decoding and the dispatch to a format's parser.

The bytes decide what a file is, not its name: a PDF, an Office Open XML container (by the parts
inside the zip) and a Parquet file are recognised by content, and a file that is another format
than the one asked for is refused (format_mismatch) rather than read as the one asked for. A legacy
binary Office file is refused outright (unsupported_format).

Text is decoded strictly, never with replacement characters, so what is indexed is what the file
says: UTF-8, UTF-16 or UTF-32 by its byte-order mark, else a declared encoding (the caller's, or
for HTML the one a <meta> in the page's first 1,024 bytes declares, its label read as browsers
read it, unless the bytes are valid UTF-8: formats/html/decoding.py), else UTF-8. A UTF-8 mark is
dropped whether the encoding was declared or not, as is the mark of a declared byte-order codec
(utf-16-le); an undecodable byte is an `encoding` failure naming its offset (and the <meta> that
declared the encoding), and a NUL byte in undeclared UTF-8 text means the file is binary.

Everything here that reads the uploader's bytes runs in the child process (extractor_sandbox.child);
the service itself only uses the declarations and `codec_name` to check a request's parameters.
"""

from __future__ import annotations

import codecs
import io
import json
import re
import zipfile
from collections.abc import Mapping
from typing import TYPE_CHECKING

from extractor_sandbox.artifact import fit_output_bounds
from extractor_sandbox.contract import Artifact
from extractor_sandbox.errors import ExtractError
from extractor_sandbox.output_size import (
    DEFAULT_MAX_OUTPUT_BYTES,
    DEFAULT_PER_INPUT_BYTE,
    TextBudget,
    artifact_byte_bound,
    fit_artifact_bytes,
    reading_within,
)
from extractor_sandbox.registry import AVAILABLE, FORMATS, SPECS

if TYPE_CHECKING:
    from extractor_sandbox.formats.html.decoding import Declaration

# Derived from the format specs (registry.py), the one place a format is written.
BINARY_FORMATS = frozenset(spec.name for spec in FORMATS if spec.binary)
# The formats this service extracts and the options each takes, as /v1/capabilities declares them.
DECLARED_FORMATS: Mapping[str, tuple[str, ...]] = {
    name: spec.options for name, spec in AVAILABLE.items()
}
_ZIP_PARTS = tuple((spec.name, spec.zip_part) for spec in FORMATS if spec.zip_part)
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
# Codecs whose strict decoder refuses an encoded surrogate itself, so their text needs no search
# for one (a search that costs as much as the plainest reader's whole parse).
_NO_SURROGATES = frozenset(
    {"cp1252", "utf-8", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"}
)


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
        raise ExtractError("format_mismatch", f"the file is not {asked} ({SPECS[asked].expected})")


def _formats_by_content(data: bytes, asked: str) -> tuple[str, ...]:
    """The binary formats `data` is by its content, none for text or an unknown binary."""
    for spec in FORMATS:
        if spec.magic is not None and data.startswith(spec.magic):
            if spec.trailer is None or (
                len(data) >= len(spec.magic) + len(spec.trailer) and data.endswith(spec.trailer)
            ):
                return (spec.name,)
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
    kinds = tuple(kind for kind, part in _ZIP_PARTS if part in names)
    if kinds or "_rels/.rels" not in names:
        return kinds
    # The main part may sit elsewhere than usual (pandoc's test word/document2.xml): the package's
    # relationship names it, so a package with XML parts in one kind's folder alone is that kind.
    folders = tuple(
        kind
        for kind, part in _ZIP_PARTS
        if any(n.startswith(part.split("/")[0] + "/") and n.endswith(".xml") for n in names)
    )
    return folders if len(folders) == 1 else ()


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
    declared_by = ""
    if encoding is None:
        codec = _codec_by_mark(data)
        if fmt == "html" and codec == "utf-8" and not data.startswith(codecs.BOM_UTF8):
            declaration = _html_declaration(data)
            if declaration is not None:
                codec, declared_by = declaration.codec, f" ({declaration.describe()})"
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
            f"cannot decode byte 0x{data[error.start]:02x} at offset {error.start} as {codec}"
            f"{declared_by}",
        ) from None
    if codec in _MARK_DROPPED and text.startswith("\ufeff"):
        text = text[1:]
    surrogate = None if codec in _NO_SURROGATES else _SURROGATE.search(text)
    if surrogate is not None:
        # Some codecs (unicode_escape) can yield one; the artifact must be valid Unicode.
        raise ExtractError(
            "encoding",
            f"the text decoded as {codec} holds a lone surrogate at character {surrogate.start()}",
        )
    return text


def _html_declaration(data: bytes) -> Declaration | None:
    # Imported here, as registry.py imports readers: the service imports this module and reads no
    # page. The child has it already: the HTML reader's package imports it, before confinement.
    from extractor_sandbox.formats.html.decoding import page_encoding

    return page_encoding(data)


def _codec_by_mark(data: bytes) -> str:
    for mark, codec in _BOMS:
        if data.startswith(mark):
            return codec  # the utf-16 and utf-32 codecs read the mark and consume it
    return "utf-8"


def extract(data: bytes, fmt: str, name: str, options: Mapping[str, str]) -> Artifact:
    """The artifact of `data` read as `fmt`, with the options the parse ran with recorded in it."""
    spec = AVAILABLE.get(fmt)
    if spec is None:
        raise ExtractError("format_unavailable", f"this service does not extract {fmt}")
    detect_format(data, name, fmt)
    content = data if spec.binary else decode(data, options.get("encoding"), fmt=fmt)
    artifact = spec.reader()(content, options, name=name)
    artifact["options"] = dict(options)
    # Last, with the tables in: however many blocks a parser made, the answer stays bounded.
    return fit_output_bounds(artifact, len(data))


def artifact_json(
    data: bytes,
    fmt: str,
    name: str,
    options: Mapping[str, str],
    *,
    max_artifact_bytes: int | None = None,
) -> bytes:
    """The artifact of `data` as the JSON the service answers, at most about
    `max_artifact_bytes` of it (the service's bound for this original; by default the default
    settings' bound for its size): a longer one is cut and says so (output_size.py), and a
    reader that gathers text stops gathering it past that bound."""
    if max_artifact_bytes is None:
        max_artifact_bytes = artifact_byte_bound(
            len(data), DEFAULT_PER_INPUT_BYTE, DEFAULT_MAX_OUTPUT_BYTES
        )
    with reading_within(TextBudget(max_artifact_bytes)) as budget:
        artifact = extract(data, fmt, name, options)
    body = serialized(artifact)
    unread = budget.unread()
    # Measured as it is sent, so an artifact within its bound costs nothing more; a cut adds
    # failed units, fitted to their bound again.
    if len(body) > max_artifact_bytes or unread:
        del body
        fit_artifact_bytes(artifact, max_artifact_bytes, len(data), unread=unread)
        body = serialized(fit_output_bounds(artifact, len(data)))
    return body


def serialized(artifact: Artifact) -> bytes:
    """The artifact's JSON as the service sends it: compact, UTF-8."""
    # allow_nan=False: NaN is not JSON; a string with a lone surrogate fails to encode as UTF-8.
    text = json.dumps(artifact, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.encode("utf-8")
