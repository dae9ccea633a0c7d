"""The real-world office bench's gold is pandoc's own AST in another notation, never edited."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

HERE = Path(__file__).resolve().parents[2] / "bench" / "realworld" / "office"


def converter() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pandoc_gold", HERE / "pandoc_gold.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


NATIVE = """Pandoc
  Meta { unMeta = fromList [ ( "title" , MetaInlines [ Str "The" , Space , Str "deck" ] ) ] }
[Header 1 ("a",[],[]) [Str "One",Space,Emph [Str "part"]]
,Para [Str "Text",Note [Para [Str "a",Space,Str "note"]],Space,Quoted DoubleQuote [Str "q\\8217s"]]
,BulletList [[Plain [Str "item"]],[Plain [Code ("",[],[]) "x = 1"]]]
,Table ("",[],[]) (Caption Nothing []) [(AlignDefault,ColWidthDefault)]
  (TableHead ("",[],[]) [Row ("",[],[]) [Cell ("",[],[]) AlignDefault (RowSpan 1) (ColSpan 1) [Plain [Str "h"]]]])
  [TableBody ("",[],[]) (RowHeadColumns 0) [] [Row ("",[],[]) [Cell ("",[],[]) AlignDefault (RowSpan 1) (ColSpan 1) [Plain [Str "v"]]]]]
  (TableFoot ("",[],[]) [])
,Header 2 ("b",[],[]) [Str "Two"]]
"""


def test_a_native_document_becomes_docparse_gold() -> None:
    gold = converter().convert(NATIVE, "pptx")
    assert gold["blocks"] == [
        {"type": "heading", "text": "The deck", "level": 0},
        {"type": "heading", "text": "One part", "level": 1},
        {"type": "paragraph", "text": 'Text "q\u2019s"'},
        {"type": "list_item", "text": "item"},
        {"type": "list_item", "text": "x = 1"},
        {"type": "heading", "text": "Two", "level": 2},
        {"type": "paragraph", "text": "a note"},
    ]
    assert gold["tables"] == [{"rows": [["h"], ["v"]], "header_rows": 1, "after_block": 5}]


@pytest.mark.parametrize(
    "gold_path", sorted((HERE / "data").glob("*/*.gold.json")), ids=lambda p: p.name
)
def test_the_gold_on_disk_is_the_converted_native(gold_path: Path) -> None:
    native = gold_path.with_name(gold_path.name.removesuffix(".gold.json") + ".native")
    gold = json.loads(gold_path.read_text(encoding="utf-8"))
    fmt = gold_path.parent.name
    converted = converter().convert(native.read_text(encoding="utf-8"), fmt)
    converted["source"] = gold["source"]
    assert converted == gold
