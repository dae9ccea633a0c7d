"""The OOXML package reader: parts within their bounds, XML streamed, no DOCTYPE ever read."""

from __future__ import annotations

import zipfile

import pytest

from extractor_sandbox.formats.package import (
    DEFAULT_BOUNDS,
    END,
    START,
    TEXT,
    Package,
    PartError,
    XmlBounds,
    resolve_target,
)
from tests.extractor import zips

BILLION_LAUGHS = (
    '<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol">'
    + "".join(
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">'
        for i in range(1, 10)
    )
    + "]>\n<lolz>&lol9;</lolz>"
)


def events(xml: str | bytes, bounds: XmlBounds = DEFAULT_BOUNDS) -> list[tuple[str, str, object]]:
    return list(Package(zips.package({"p.xml": xml})).events("p.xml", bounds))


def reason(xml: str | bytes, bounds: XmlBounds = DEFAULT_BOUNDS) -> str:
    with pytest.raises(PartError) as raised:
        events(xml, bounds)
    return raised.value.reason


def test_events_name_elements_with_their_namespace_and_keep_text() -> None:
    xml = '<w:p xmlns:w="urn:w" xmlns:r="urn:r" r:id="x" plain="y"><w:t>Hi &amp; bye</w:t></w:p>'
    assert events(xml) == [
        (START, "{urn:w}p", {"{urn:r}id": "x", "plain": "y"}),
        (START, "{urn:w}t", {}),
        (TEXT, "Hi & bye", None),
        (END, "{urn:w}t", None),
        (END, "{urn:w}p", None),
    ]


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-16-le", "utf-16-be"])
def test_a_doctype_is_refused_in_any_encoding(encoding: str) -> None:
    body = BILLION_LAUGHS.replace(
        'version="1.0"', f'version="1.0" encoding="{encoding.split("-l")[0].split("-b")[0]}"'
    )
    data = body.encode(encoding)
    if encoding in ("utf-16-le", "utf-16-be"):
        data = ("\ufeff" + body).encode(encoding)
    assert reason(data) == "declares a DOCTYPE, which is refused"


def test_a_part_that_is_not_xml_is_a_part_error() -> None:
    assert reason(b"PK\x03\x04 not xml").startswith("is not well-formed XML")


def test_nesting_past_the_bound_is_refused() -> None:
    xml = "<a>" * 65 + "</a>" * 65
    assert reason(xml) == "nests deeper than 64 elements"
    assert len(events("<a>" * 64 + "</a>" * 64)) == 128


def test_elements_past_the_bound_are_refused() -> None:
    assert reason("<r>" + "<c/>" * 10 + "</r>", XmlBounds(max_elements=10)) == (
        "holds more than 10 elements"
    )


def test_distinct_names_past_the_bound_are_refused() -> None:
    xml = "<r>" + "".join(f"<n{i}/>" for i in range(4_096)) + "</r>"
    assert reason(xml) == "uses more than 4,096 distinct names"


def test_a_tag_of_sixteen_mebibytes_is_refused() -> None:
    xml = '<r a="' + "x" * (17 * 1024 * 1024) + '"/>'
    assert reason(xml) == "holds a tag or text of 16 MiB or more"


def test_long_text_streams_in_pieces() -> None:
    found = events("<r>" + "x" * (20 * 1024 * 1024) + "</r>")
    assert sum(len(value) for kind, value, _ in found if kind == TEXT) == 20 * 1024 * 1024


def test_a_bomb_stops_at_its_declared_size() -> None:
    data = zips.bomb({"a.xml": "<a/>"}, "big.xml", 50_000_000, 1_000)
    with pytest.raises(PartError) as raised:
        Package(data).read("big.xml")
    assert raised.value.reason.startswith("cannot be read: Bad CRC-32")


def test_a_part_declaring_over_256_mib_is_not_opened() -> None:
    data = zips.with_declared_size(zips.package({"a.xml": "<a/>"}), "a.xml", 300 * 1024 * 1024)
    with pytest.raises(PartError) as raised:
        Package(data).open("a.xml")
    assert raised.value.reason == "declares 314,572,800 bytes, over 256 MiB"


def test_parts_read_past_512_mib_in_all_are_refused() -> None:
    parts = {f"p{i}.xml": "<a/>" for i in range(3)}
    data = zips.package(parts)
    for name in parts:
        data = zips.with_declared_size(data, name, 200 * 1024 * 1024)
    package = Package(data)
    package.open("p0.xml")
    package.open("p1.xml")
    with pytest.raises(PartError) as raised:
        package.open("p2.xml")
    assert raised.value.reason == "the parts read would pass 512 MiB in all"


def test_a_method_other_than_stored_or_deflated_is_refused() -> None:
    data = zips.package({"a.xml": "<a/>"}, method=zipfile.ZIP_BZIP2)
    with pytest.raises(PartError) as raised:
        Package(data).open("a.xml")
    assert raised.value.reason == "compression method 12 is neither stored nor deflated"


def test_a_missing_part_and_a_broken_zip() -> None:
    with pytest.raises(PartError, match="the package has no such part"):
        Package(zips.package({"a.xml": "<a/>"})).open("b.xml")
    with pytest.raises(PartError, match="cannot be read"):
        Package(b"PK\x03\x04 truncated")


def test_relationships_resolve_against_their_source() -> None:
    rels = (
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rId1" Type="http://x/officeDocument/2006/relationships/slide" Target="slides/slide1.xml"/>'
        '<Relationship Id="rId2" Type="http://x/relationships/image" Target="../media/a.png"/>'
        '<Relationship Id="rId3" Type="http://x/relationships/hyperlink" Target="http://e" TargetMode="External"/>'
        "</Relationships>"
    )
    package = Package(
        zips.package({"ppt/presentation.xml": "<p/>", "ppt/_rels/presentation.xml.rels": rels})
    )
    found = package.relationships("ppt/presentation.xml")
    assert [(r.id, r.type, r.target, r.external) for r in found] == [
        ("rId1", "slide", "ppt/slides/slide1.xml", False),
        ("rId2", "image", "media/a.png", False),
        ("rId3", "hyperlink", "", True),
    ]
    assert package.relationships("ppt/slides/slide1.xml") == []
    assert resolve_target("word/document.xml", "/word/styles.xml") == "word/styles.xml"
