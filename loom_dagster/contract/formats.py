"""Format names and how the server names a file's format without reading its bytes.

Routing order (document extraction, "Routing."): a declared format, else the file extension,
else the media type, else text. A legacy Office name (.doc, .xls, .ppt) is refused before any
call, since no extractor reads those binary formats and guessing one would only fail later.
"""

from __future__ import annotations

import posixpath

from loom_dagster.errors import ExtractionFailed

FORMATS: tuple[str, ...] = (
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

EXTENSIONS: dict[str, str] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".html": "html",
    ".htm": "html",
    ".txt": "text",
    ".text": "text",
    ".log": "text",
    ".sql": "sql",
    ".toml": "toml",
    ".pdf": "pdf",
    ".docx": "docx",
    ".pptx": "pptx",
    ".xlsx": "xlsx",
    ".csv": "csv",
    ".tsv": "csv",
    ".parquet": "parquet",
}

MEDIA_TYPES: dict[str, str] = {
    "text/markdown": "markdown",
    "text/html": "html",
    "text/plain": "text",
    "application/sql": "sql",
    "application/toml": "toml",
    "application/pdf": "pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "text/csv": "csv",
    "text/tab-separated-values": "csv",
    "application/vnd.apache.parquet": "parquet",
    "application/x-parquet": "parquet",
}

LEGACY_OFFICE_EXTENSIONS = frozenset({".doc", ".xls", ".ppt"})


def extension_of(name: str) -> str:
    """The lowercased extension of a file name or path ('' when it has none)."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    return posixpath.splitext(base)[1].lower()


def media_type_essence(media_type: str) -> str:
    """A media type without parameters, lowercased: 'Text/HTML; charset=utf-8' -> 'text/html'."""
    return media_type.split(";", 1)[0].strip().lower()


def format_for_media_type(media_type: str) -> str | None:
    """The format a media type names, its parameters and case ignored; None when it names none."""
    return MEDIA_TYPES.get(media_type_essence(media_type))


def format_of(
    name: str, *, declared_format: str | None = None, media_type: str | None = None
) -> str:
    """Name a file's format: declared, else by extension, else by media type, else text.

    Raises ExtractionFailed("unsupported_format") for an unknown declared format, and for a
    .doc/.xls/.ppt name when no format is declared. An empty declared format counts as none.
    """
    if declared_format:
        declared = declared_format.strip().lower()
        if declared not in FORMATS:
            raise ExtractionFailed(
                "unsupported_format",
                f"declared format {declared_format!r} is not one of {', '.join(FORMATS)}",
            )
        return declared

    extension = extension_of(name)
    if extension in LEGACY_OFFICE_EXTENSIONS:
        raise ExtractionFailed(
            "unsupported_format",
            f"{name!r}: legacy Office format {extension} is not supported; "
            f"convert it to {extension}x or declare a format",
        )
    if extension in EXTENSIONS:
        return EXTENSIONS[extension]

    if media_type:
        by_media_type = format_for_media_type(media_type)
        if by_media_type is not None:
            return by_media_type

    return "text"
