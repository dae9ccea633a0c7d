"""Every format the extractor reads, one FormatSpec each: the only table a format is named in.

Detection (what a file's bytes say it is), declaration (/v1/capabilities), dispatch (which reader
runs) and the child's warm-up (what is loaded before it confines itself) are all derived from
FORMATS. Every reader has the one call signature `Reader`: the decoded text for a text format, the
bytes as they came for a binary one, the options the request gave, and the file's name.

This module imports no reader and no reader's library (the service imports it; only the child
runs a reader): a spec names its reader's module, imported on first use.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import platform
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

from extractor_sandbox.contract import Artifact


class Reader(Protocol):
    """A format's reader: `content` is str for a text format, bytes for a binary one."""

    def __call__(
        self, content: Any, options: Mapping[str, str], *, name: str
    ) -> Artifact: ...  # pragma: no cover


@dataclass(frozen=True)
class FormatSpec:
    """One format: where its reader is, how its bytes are told apart, and what it needs first.

    name: the contract's name for it. module, function: its reader. binary: the reader takes the
    bytes as they came (and detection must find the format in them), else the strictly decoded
    text. options: the contract options it takes, as declared. library: a module this build may
    lack; without it the format is not declared. magic, trailer, zip_part: how its content is
    recognised (a prefix; a suffix too; a zip that holds that part); expected: the refusal's words
    when a file asked for as this format is none of that. prepare: what must run before the child
    is confined (a library that starts threads or programs). late_imports: what the reader's
    library imports only once it parses, imported in advance when the confined child can open no
    file (a kernel without Landlock).
    """

    name: str
    module: str
    function: str
    binary: bool = False
    options: tuple[str, ...] = ()
    library: str | None = None
    magic: bytes | None = None
    trailer: bytes | None = None
    zip_part: str | None = None
    expected: str = ""
    prepare: Callable[[], None] | None = None
    late_imports: Callable[[ModuleType, Mapping[str, str]], None] | None = None
    # The reader's own version, bumped when what it makes of a file changes, so the server sees
    # the revisions it read before as stale (the seed: a parser change bumps PARSER_VERSION).
    version: str = "1"
    # What its parser_version names besides the reader's own version: the libraries whose
    # release changes what it reads, and the Python it runs on (whose codecs and parsers it uses).
    versioned_by: tuple[str, ...] = ()
    python_in_version: bool = True
    # Imported once by the template process (template.py), which its forks share; False for a
    # reader whose import starts a thread (the template forks single-threaded) or maps so much
    # that every extraction's address-space limit would carry it: its child imports it.
    template: bool = True

    @property
    def parser(self) -> str:
        """The reader's name, as every artifact of this format and /v1/capabilities give it."""
        return f"loom-{self.name}"

    def parser_version(self) -> str:
        """`<version>+<library><version>...+python<version>`: what the reader writes in each
        artifact and the service declares per format, so a server sees a parser upgrade per
        format. Read from the installed distributions, without importing the library."""
        parts = [
            self.version,
            *(f"{lib}{importlib.metadata.version(lib)}" for lib in self.versioned_by),
        ]
        if self.python_in_version:
            parts.append(f"python{platform.python_version()}")
        return "+".join(parts)

    def available(self) -> bool:
        """Whether this build has what the reader needs (it is declared only then)."""
        return self.library is None or importlib.util.find_spec(self.library) is not None

    def reader(self) -> Reader:
        reader: Reader = getattr(importlib.import_module(self.module), self.function)
        return reader


# -- what some formats need before the child is confined -------------------------------------------

# pypdf's decoding budgets, set explicitly rather than left to its defaults, and no external
# jbig2dec program: a child starts no process.
PYPDF_CONFIGURATION: Mapping[str, Any] = {
    "jbig2dec_binary": None,
    "disable_legacy_handling": True,
    "maximum_declared_stream_length": 75_000_000,
    "array_based_stream_maximum_output_length": 75_000_000,
    "jbig2_maximum_output_length": 75_000_000,
    "lzw_maximum_output_length": 75_000_000,
    "run_length_maximum_output_length": 75_000_000,
    "zlib_maximum_output_length": 75_000_000,
    "zlib_maximum_recovery_input_length": 5_000_000,
    "brotli_maximum_output_length": 75_000_000,
    "image_maximum_buffer_size": 75_000_000,
    "stream_decoding_work_maximum_length": 300_000_000,
    "stream_parsing_work_maximum_count": 2_000_000,
    "xfa_decoding_work_maximum_length": 300_000_000,
}


def prepare_pyarrow() -> None:
    """One CPU thread and one IO thread, started now on a trusted input: no thread can start later
    (RLIMIT_NPROC 0 counts threads), and a pool that tries hangs or fails."""
    import pyarrow
    import pyarrow.parquet

    pyarrow.set_cpu_count(1)
    pyarrow.set_io_thread_count(1)
    sink = pyarrow.BufferOutputStream()
    pyarrow.parquet.write_table(pyarrow.table({"warm": [1, 2, 3]}), sink)
    pyarrow.parquet.read_table(pyarrow.BufferReader(sink.getvalue())).to_pylist()


def prepare_pypdf() -> None:
    import pypdf

    pypdf.overwrite_configuration(**PYPDF_CONFIGURATION)


def prepare_ocr() -> None:
    """OCR's warm-up (formats/ocr.py): OpenMP held to one thread, Tesseract loaded and its models
    read, before the limits; nothing when LOOM_EXTRACTOR_OCR is off."""
    from extractor_sandbox.formats.ocr import warm_ocr

    warm_ocr()


def prepare_pdf() -> None:
    prepare_pypdf()
    prepare_ocr()


def import_all(package: str) -> None:
    """Every module of `package`, but those whose optional library is missing."""
    import pkgutil

    root = importlib.import_module(package)
    for found in pkgutil.walk_packages(root.__path__, f"{package}."):
        try:
            importlib.import_module(found.name)
        except ImportError:
            pass  # an optional dependency this build lacks; its feature says so when used


def _late_sqlglot(module: ModuleType, options: Mapping[str, str]) -> None:
    """What sqlglot imports only once it parses: the dialects and the optimizer's modules."""
    from sqlglot.dialects.dialect import Dialect

    from extractor_sandbox.formats.sql.detect import DETECTION_ORDER

    declared = options.get("sql_dialect") or ""
    for dialect in (*DETECTION_ORDER, *([declared] if declared else [])):
        Dialect.get_or_raise(dialect)
    import_all("sqlglot.optimizer")


def _late_pypdf(module: ModuleType, options: Mapping[str, str]) -> None:
    import_all("pypdf")


# -- the formats -----------------------------------------------------------------------------------

_READERS = "extractor_sandbox.formats"
_ENCODING = ("encoding",)

FORMATS: tuple[FormatSpec, ...] = (
    # 3: a table cell written with a leading zero (`007`) is text, as a CSV field's is.
    FormatSpec(
        "markdown", f"{_READERS}.markdown", "extract_markdown", options=_ENCODING, version="3"
    ),
    # 2: a <meta> charset is read, page furniture is out of the blocks (attrs.furniture).
    # 3: link lists under their heading, cookie notices, newsletter calls, ad labels, print-edition
    # notes and page controls are furniture too; no class hint is read inside code.
    # 4: most read boxes by their class, most read and related headings in five more languages,
    # news tickers are furniture too.
    # 5: a heading's "¶" link (class headerlink) is furniture, out of the heading's text.
    FormatSpec("html", f"{_READERS}.html", "extract_html", options=_ENCODING, version="5"),
    FormatSpec("text", f"{_READERS}.text", "extract_text", options=_ENCODING),
    FormatSpec(
        "sql",
        f"{_READERS}.sql",
        "extract_sql",
        options=("encoding", "sql_dialect"),
        late_imports=_late_sqlglot,
        versioned_by=("sqlglot",),
        python_in_version=False,
    ),
    FormatSpec("toml", f"{_READERS}.toml", "extract_toml", options=_ENCODING),
    FormatSpec(
        "pdf",
        f"{_READERS}.pdf.reader",
        "extract_pdf",
        binary=True,
        library="pypdf",
        magic=b"%PDF-",
        expected="no %PDF- header",
        prepare=prepare_pdf,
        late_imports=_late_pypdf,
        versioned_by=("pypdf",),
        # 3: bold marks no heading in a body set bold itself (a form's labels stay with values).
        # 4: a ruled table's group labels name the columns they span (a header of two rows), a
        # title centred in its frame is its caption, no column's name; a page's margin line
        # numbers (a transcript's) beside its text make no table.
        # 5: a borderless table's header lines set apart over a first row of figures are its
        # header rows, naming its columns (a centred group label names those it is over); a
        # ruled frame of words just over a frame of figures in the same columns is its header.
        version="5",
    ),
    FormatSpec(
        "docx",
        f"{_READERS}.docx",
        "extract_docx",
        binary=True,
        zip_part="word/document.xml",
        expected="no zip holding word/document.xml",
        version="2",
    ),
    FormatSpec(
        "pptx",
        f"{_READERS}.pptx",
        "extract_pptx",
        binary=True,
        zip_part="ppt/presentation.xml",
        expected="no zip holding ppt/presentation.xml",
        version="2",
        prepare=prepare_ocr,
    ),
    FormatSpec(
        "xlsx",
        f"{_READERS}.xlsx",
        "extract_xlsx",
        binary=True,
        zip_part="xl/workbook.xml",
        expected="no zip holding xl/workbook.xml",
        # 3: a header found under note rows over it (they are a paragraph), or joined to a row over it.
        # 4: a header band over a blank row joined to the rows under it, and row names across a
        # blank column to their values; a unit row a paragraph.
        version="4",
    ),
    # 2: a field written with a leading zero (`06427`, a code) is text, its zeros kept.
    FormatSpec("csv", f"{_READERS}.csvfile", "extract_csv", options=_ENCODING, version="2"),
    FormatSpec(
        "parquet",
        f"{_READERS}.parquet",
        "extract_parquet",
        binary=True,
        library="pyarrow",
        magic=b"PAR1",
        trailer=b"PAR1",
        expected="no PAR1 magic at its start and end",
        prepare=prepare_pyarrow,
        versioned_by=("pyarrow",),
        python_in_version=False,
        template=False,  # pyarrow's import starts a thread and maps ~200 MB
    ),
)

SPECS: Mapping[str, FormatSpec] = {spec.name: spec for spec in FORMATS}

# The formats this build extracts (a library it lacks leaves its format out).
AVAILABLE: Mapping[str, FormatSpec] = {spec.name: spec for spec in FORMATS if spec.available()}
