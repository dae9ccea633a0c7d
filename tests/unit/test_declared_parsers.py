"""A capabilities answer's per-format parsers (an extension of contract v1's answer), and what
makes a revision stale (loom_dagster/pipeline/parsers.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loom_dagster.extractor.routing import NotCapabilities, parse_capabilities
from loom_dagster.pipeline import Extraction, parsers


def answer(**fields: object) -> bytes:
    entry = {"format": "markdown", "options": ["encoding"], **fields}
    return json.dumps(
        {
            "contract_version": 1,
            "extractor": {"name": "loom-reference", "version": "1"},
            "max_bytes": 10,
            "formats": [entry, {"format": "text", "options": []}],
        }
    ).encode()


def test_a_format_names_its_own_parser_and_the_others_take_the_extractors() -> None:
    said = parse_capabilities(answer(parser="loom-markdown", parser_version="1+python3.11.2"))
    assert said.parser_of("markdown") == "loom-markdown 1+python3.11.2"
    assert said.parser_of("text") == "loom-reference 1"
    assert said.parser_of("pdf") is None  # not declared


@pytest.mark.parametrize(
    "fields",
    [{"parser": "x"}, {"parser": 3, "parser_version": "1"}, {"parser": "x", "parser_version": ""}],
)
def test_a_half_or_mistyped_parser_is_not_the_contracts_shape(fields: dict[str, object]) -> None:
    with pytest.raises(NotCapabilities) as refused:
        parse_capabilities(answer(**fields))
    assert str(refused.value) == (
        "formats[0]: parser and parser_version must both be strings of 1 to 200 characters"
    )


def extraction(fmt: str = "markdown", **fields: object) -> Extraction:
    return Extraction("k", "extracted", format=fmt, parser="p", parser_version="1", **fields)  # type: ignore[arg-type]


def test_a_revision_is_stale_only_when_its_formats_parser_changed() -> None:
    declared = {"markdown": "p 2", "text": "t 1"}
    stale = parsers.staleness(extraction(), declared)
    assert stale is not None and (stale.made_by, stale.now) == ("p 1", "p 2")
    assert parsers.staleness(extraction(declared="p 2"), declared) is None
    assert parsers.staleness(extraction("pdf"), declared) is None  # nobody declares pdf now
    assert parsers.staleness(Extraction("k", "refused", code="corrupt"), declared) is None


def test_the_declared_parsers_are_recorded_once_each(tmp_path: Path) -> None:
    assert parsers.record_declared(tmp_path, {"markdown": "p 1"})
    assert not parsers.record_declared(tmp_path, {"markdown": "p 1"})
    assert parsers.read_declared(tmp_path) == {"markdown": "p 1"}
