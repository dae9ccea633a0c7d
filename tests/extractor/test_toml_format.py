"""TOML extraction: one test per rule of the reference extractor's TOML parser."""

from __future__ import annotations

import json
import platform
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from extractor_sandbox.artifact import split_lines
from extractor_sandbox.formats import toml as toml_format
from extractor_sandbox.formats.toml import PARSER_VERSION, extract_toml
from extractor_sandbox.source import decode
from tests.extractor import gates
from tests.extractor.server_check import validated

GOLD = Path(__file__).resolve().parent / "gold" / "toml"
CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "inputs"
FIFTY_MB = 50 * 1024 * 1024


def extract(text: str) -> dict[str, Any]:
    return extract_toml(text, {})


def blocks_of(text: str) -> list[dict[str, Any]]:
    return extract(text)["blocks"]


def by_path(text: str) -> dict[str, dict[str, Any]]:
    return {
        block["locator"]["key_path"]: block
        for block in blocks_of(text)
        if "key_path" in block["locator"]
    }


def lines_of(block: dict[str, Any]) -> tuple[int, int]:
    return block["locator"]["line_start"], block["locator"]["line_end"]


# The envelope


def test_artifact_envelope_is_contract_v1():
    artifact = extract("a = 1\n")

    assert artifact["schema_version"] == 1
    assert artifact["format"] == "toml"
    assert artifact["parser"] == "loom-toml"
    assert artifact["parser_version"] == f"1+python{platform.python_version()}"
    assert PARSER_VERSION == artifact["parser_version"]
    assert (artifact["options"], artifact["attrs"], artifact["warnings"]) == ({}, {}, [])


def test_the_contracts_example_artifact():
    artifact = extract("[server]\nport = 7777\n")

    assert artifact["coverage"] == {
        "unit": "keys",
        "total": 1,
        "extracted": 1,
        "failed": [],
        "lost": [],
        "complete": True,
    }
    assert artifact["blocks"] == [
        {
            "id": "b0",
            "type": "toml_table",
            "text": "[server]",
            "section_path": ["server"],
            "locator": {"line_start": 1, "line_end": 1, "key_path": "server"},
            "keys": ["server"],
        },
        {
            "id": "b1",
            "type": "toml_key",
            "text": "server.port = 7777",
            "parent": "b0",
            "section_path": ["server"],
            "locator": {"line_start": 2, "line_end": 2, "key_path": "server.port"},
            "keys": ["server.port"],
            "attrs": {"value": 7777, "value_type": "integer"},
        },
    ]


# Table headers


def test_a_table_block_per_header_with_its_path():
    blocks = blocks_of("[a.b]\nx = 1\n[c]\n")

    tables = [block for block in blocks if block["type"] == "toml_table"]
    assert [(b["text"], b["section_path"], b["keys"], lines_of(b)) for b in tables] == [
        ("[a.b]", ["a", "b"], ["a.b"], (1, 1)),
        ("[c]", ["c"], ["c"], (3, 3)),
    ]
    assert [b["locator"]["key_path"] for b in tables] == ["a.b", "c"]
    assert all("attrs" not in b for b in tables)


def test_header_text_is_as_written_from_its_bracket_with_its_comment():
    [table] = blocks_of("  [ a . b ]   # the b table   \n")

    assert table["text"] == "[ a . b ]   # the b table"
    assert table["keys"] == ["a.b"]


def test_array_of_tables_elements_carry_their_index_and_an_index_free_key():
    text = '[[servers]]\nname = "a"\n\n[[servers]]\nname = "b"\n'
    blocks = blocks_of(text)

    assert [(b["type"], b["text"], b["keys"], b["section_path"]) for b in blocks] == [
        ("toml_table", "[[servers]]", ["servers[0]", "servers"], ["servers[0]"]),
        ("toml_key", 'servers[0].name = "a"', ["servers[0].name", "servers.name"], ["servers[0]"]),
        ("toml_table", "[[servers]]", ["servers[1]", "servers"], ["servers[1]"]),
        ("toml_key", 'servers[1].name = "b"', ["servers[1].name", "servers.name"], ["servers[1]"]),
    ]
    assert [b["locator"]["key_path"] for b in blocks] == [
        "servers[0]",
        "servers[0].name",
        "servers[1]",
        "servers[1].name",
    ]


def test_a_header_under_an_array_of_tables_is_in_its_last_element():
    text = (
        "[[fruits]]\n"
        "[[fruits.varieties]]\n"
        "[[fruits.varieties]]\n"
        "[[fruits]]\n"
        "[fruits.physical]\n"
        "[[fruits.varieties]]\n"
    )
    tables = blocks_of(text)

    assert [b["locator"]["key_path"] for b in tables] == [
        "fruits[0]",
        "fruits[0].varieties[0]",
        "fruits[0].varieties[1]",
        "fruits[1]",
        "fruits[1].physical",
        "fruits[1].varieties[0]",
    ]
    assert tables[4]["keys"] == ["fruits[1].physical", "fruits.physical"]
    assert tables[4]["section_path"] == ["fruits[1]", "physical"]


def test_a_tables_parent_is_the_nearest_enclosing_header():
    blocks = blocks_of("[a]\n[a.b.c]\n[x.y]\n[[f]]\n[f.g]\n")

    parents = {b["locator"]["key_path"]: b.get("parent") for b in blocks}
    assert parents == {"a": None, "a.b.c": "b0", "x.y": None, "f[0]": None, "f[0].g": "b3"}


# Keys


def test_key_text_is_full_path_equals_value_text():
    blocks = by_path('[owner]\n  name   =   "Tom"   \n')

    assert blocks["owner.name"]["text"] == 'owner.name = "Tom"'


def test_a_dotted_key_is_one_block_with_its_full_path():
    text = '[t]\nphysical.color = "orange"\nname . last = "W"\n'
    blocks = blocks_of(text)

    keys = [b for b in blocks if b["type"] == "toml_key"]
    assert [(b["text"], b["keys"], b["section_path"]) for b in keys] == [
        ('t.physical.color = "orange"', ["t.physical.color"], ["t"]),
        ('t.name.last = "W"', ["t.name.last"], ["t"]),
    ]


def test_inline_table_contents_stay_in_their_keys_block():
    blocks = blocks_of("point = { x = 1, y = { z = 2 } }\n")

    assert len(blocks) == 1
    [block] = blocks
    assert block["text"] == "point = { x = 1, y = { z = 2 } }"
    assert block["keys"] == ["point"]
    assert block["attrs"] == {"value_type": "table", "value": {"x": 1, "y": {"z": 2}}}


def test_quoted_parts_are_written_as_basic_strings_and_also_unquoted():
    blocks = by_path(
        'site."google.com" = true\n\'literal key\' = 1\n"a\\tb" = 2\n\'q"\' = 3\n"" = 4\n'
    )

    assert list(blocks) == ['site."google.com"', '"literal key"', '"a\\tb"', '"q\\""', '""']
    assert blocks['site."google.com"']["keys"] == ['site."google.com"', "site.google.com"]
    assert blocks['site."google.com"']["text"] == 'site."google.com" = true'
    assert blocks['"literal key"']["keys"] == ['"literal key"', "literal key"]
    assert blocks['"a\\tb"']["keys"] == ['"a\\tb"', "a\tb"]
    assert blocks['"q\\""']["keys"] == ['"q\\""', 'q"']
    assert blocks['""']["keys"] == ['""']  # the unquoted form is empty: no key


def test_unquoted_forms_keep_the_index_free_form_too():
    blocks = by_path('[["a b"]]\nc = 1\n')

    assert blocks['"a b"[0].c']["keys"] == ['"a b"[0].c', '"a b".c', "a b[0].c", "a b.c"]


def test_a_keys_parent_and_section_path_are_its_tables():
    blocks = blocks_of("root = 1\n[a.b]\nk = 2\n[[c]]\nk = 3\n")

    keys = {b["locator"]["key_path"]: b for b in blocks if b["type"] == "toml_key"}
    assert (keys["root"].get("parent"), keys["root"]["section_path"]) == (None, [])
    assert (keys["a.b.k"]["parent"], keys["a.b.k"]["section_path"]) == ("b1", ["a", "b"])
    assert (keys["c[0].k"]["parent"], keys["c[0].k"]["section_path"]) == ("b3", ["c[0]"])


# Values and their types


def test_each_value_type_and_its_json_value():
    text = (
        's = "x"\ni = -17\nh = 0xff\nf = 1.5\nb = true\n'
        "odt = 1979-05-27T07:32:00Z\noff = 1979-05-27 07:32:00-08:00\n"
        "ldt = 1979-05-27T07:32:00.5\nld = 1979-05-27\nlt = 07:32:00\n"
        'arr = [1, "two", [3.0]]\ntbl = { a = 1 }\nempty = []\n'
    )
    attrs = {path: block["attrs"] for path, block in by_path(text).items()}

    assert attrs == {
        "s": {"value_type": "string", "value": "x"},
        "i": {"value_type": "integer", "value": -17},
        "h": {"value_type": "integer", "value": 255},
        "f": {"value_type": "float", "value": 1.5},
        "b": {"value_type": "boolean", "value": True},
        "odt": {"value_type": "datetime", "value": "1979-05-27T07:32:00+00:00"},
        "off": {"value_type": "datetime", "value": "1979-05-27T07:32:00-08:00"},
        "ldt": {"value_type": "datetime", "value": "1979-05-27T07:32:00.500000"},
        "ld": {"value_type": "date", "value": "1979-05-27"},
        "lt": {"value_type": "time", "value": "07:32:00"},
        "arr": {"value_type": "array", "value": [1, "two", [3.0]]},
        "tbl": {"value_type": "table", "value": {"a": 1}},
        "empty": {"value_type": "array", "value": []},
    }


def test_inf_and_nan_are_text_at_any_depth():
    text = "a = inf\nb = -inf\nc = nan\nd = -nan\ne = +inf\nf = [inf, { g = nan }]\n"
    attrs = {path: block["attrs"] for path, block in by_path(text).items()}

    assert attrs == {
        "a": {"value_type": "float", "value": "inf"},
        "b": {"value_type": "float", "value": "-inf"},
        "c": {"value_type": "float", "value": "nan"},
        "d": {"value_type": "float", "value": "nan"},
        "e": {"value_type": "float", "value": "inf"},
        "f": {"value_type": "array", "value": ["inf", {"g": "nan"}]},
    }
    validated(extract(text), text.encode())


def test_a_value_nested_deeper_than_eight_keeps_its_text_not_its_value():
    eight = "[" * 8 + "1" + "]" * 8
    nine = "[" * 9 + "1" + "]" * 9
    blocks = by_path(
        f"eight = {eight}\nnine = {nine}\ntable = {{a={{b={{c={{d={{e={{f={{g={{h={{i=1}}}}}}}}}}}}}}}}}}\n"
    )

    assert blocks["eight"]["attrs"] == {"value_type": "array", "value": json.loads(eight)}
    assert blocks["nine"]["attrs"] == {"value_type": "array"}
    assert blocks["nine"]["text"] == f"nine = {nine}"
    assert blocks["table"]["attrs"] == {"value_type": "table"}


def test_signed_64_bit_bounds_are_valid_integers():
    blocks = by_path("max = 9223372036854775807\nmin = -9223372036854775808\n")

    assert blocks["max"]["attrs"]["value"] == 2**63 - 1
    assert blocks["min"]["attrs"]["value"] == -(2**63)


# Values that span lines


def test_a_multi_line_string_spans_its_lines():
    text = 'a = """\nRoses are red\nViolets are blue"""\nb = 1\n'
    blocks = by_path(text)

    assert blocks["a"]["text"] == 'a = """\nRoses are red\nViolets are blue"""'
    assert lines_of(blocks["a"]) == (1, 3)
    assert blocks["a"]["attrs"]["value"] == "Roses are red\nViolets are blue"
    assert lines_of(blocks["b"]) == (4, 4)


def test_multi_line_strings_end_at_their_real_closing_quotes():
    text = (
        "lit = '''\n'one' ]\n''''\n"
        'esc = """a\\"""\n"""\n'
        'five = """x"""""\n'
        'lbs = """\\\n  joined"""\n'
        "next = 2\n"
    )
    blocks = by_path(text)

    assert lines_of(blocks["lit"]) == (1, 3)
    assert blocks["lit"]["attrs"]["value"] == "'one' ]\n'"
    assert lines_of(blocks["esc"]) == (4, 5)
    assert blocks["five"]["text"] == 'five = """x"""""'
    assert blocks["five"]["attrs"]["value"] == 'x""'
    assert lines_of(blocks["lbs"]) == (7, 8)
    assert lines_of(blocks["next"]) == (9, 9)


MULTI_LINE_STRINGS = (
    '[server]\nbanner = """\nWelcome "home",\nsay \\"hi\\"\n"""\n'
    "motd = '''\nit's 'quoted'\n'''\n"
    'hosts = [ """a\nb""", \'\'\'c\nd\'\'\', "e\\"f" ] # three\n'
    '"odd \\" key" = 7\n'
    "port = 8080\n"
)
MULTI_LINE_BLOCKS = [
    ("toml_table", "server", None),
    ("toml_key", "server.banner", {"value_type": "string", "value": 'Welcome "home",\nsay "hi"\n'}),
    ("toml_key", "server.motd", {"value_type": "string", "value": "it's 'quoted'\n"}),
    ("toml_key", "server.hosts", {"value_type": "array", "value": ["a\nb", "c\nd", 'e"f']}),
    ("toml_key", 'server."odd \\" key"', {"value_type": "integer", "value": 7}),
    ("toml_key", "server.port", {"value_type": "integer", "value": 8080}),
]


def _typed_blocks(artifact: dict[str, Any]) -> list[tuple[str, str, Any]]:
    return [
        (block["type"], block["locator"].get("key_path"), block.get("attrs"))
        for block in artifact["blocks"]
    ]


def test_multi_line_basic_and_literal_strings_keep_keys_values_and_types():
    artifact = extract(MULTI_LINE_STRINGS)

    assert _typed_blocks(artifact) == MULTI_LINE_BLOCKS
    assert artifact["coverage"]["complete"] is True


SYSTEM_PYTHON = Path("/usr/bin/python3")


@pytest.mark.skipif(not SYSTEM_PYTHON.exists(), reason="no /usr/bin/python3 on this machine")
def test_multi_line_strings_keep_their_keys_on_the_extractors_system_python():
    # The extractor's environment is built on /usr/bin/python3 (scripts/setup), which may be an
    # older patch release than the one running this test: 3.11.2 matched the reader's former
    # possessive patterns wrongly, so every file with a multi-line string lost its keys there.
    root = Path(__file__).resolve().parents[2]
    program = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(root)!r})\n"
        "from extractor_sandbox.formats.toml import extract_toml\n"
        "print(json.dumps(extract_toml(sys.stdin.read(), {})))\n"
    )
    # -I: neither this checkout's .venv nor PYTHON* variables reach the system interpreter.
    run = subprocess.run(
        [str(SYSTEM_PYTHON), "-I", "-c", program],
        input=MULTI_LINE_STRINGS,
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
    )
    artifact = json.loads(run.stdout)

    assert _typed_blocks(artifact) == MULTI_LINE_BLOCKS
    assert artifact["coverage"]["complete"] is True
    assert artifact["coverage"]["lost"] == []


def test_a_multi_line_array_keeps_its_comment_lines_in_the_keys_text():
    text = 'hosts = [\n  "alpha", # first\n  # a comment line\n  "omega",\n] # done\nnext = 1\n'
    blocks = by_path(text)

    assert blocks["hosts"]["text"] == (
        'hosts = [\n  "alpha", # first\n  # a comment line\n  "omega",\n] # done'
    )
    assert lines_of(blocks["hosts"]) == (1, 5)
    assert blocks["hosts"]["attrs"]["value"] == ["alpha", "omega"]
    assert lines_of(blocks["next"]) == (6, 6)


def test_brackets_and_hashes_inside_strings_do_not_end_a_value():
    text = 'a = [ "]", \']#\', """\n]""" ]\nt = { k = "}" }\nb = 1\n'
    blocks = by_path(text)

    assert lines_of(blocks["a"]) == (1, 2)
    assert blocks["a"]["attrs"]["value"] == ["]", "]#", "]"]
    assert blocks["t"]["text"] == 't = { k = "}" }'
    assert lines_of(blocks["b"]) == (4, 4)


def test_an_inline_table_holding_a_multi_line_array_spans_its_lines():
    text = "point = { x = 1, y = [\n  2,\n] }\nafter = true\n"
    blocks = by_path(text)

    assert blocks["point"]["text"] == "point = { x = 1, y = [\n  2,\n] }"
    assert lines_of(blocks["point"]) == (1, 3)
    assert lines_of(blocks["after"]) == (4, 4)


def test_a_space_separated_datetime_and_a_comment_after_it():
    blocks = by_path("d = 1979-05-27 07:32:00 # when\n")

    assert blocks["d"]["text"] == "d = 1979-05-27 07:32:00 # when"
    assert blocks["d"]["attrs"]["value"] == "1979-05-27T07:32:00"


def test_crlf_lines_keep_their_endings_in_a_texts_lines():
    text = "# about\r\nlist = [\r\n  1,\r\n]\r\n\r\n[t]\r\nk = 2\r\n"
    blocks = blocks_of(text)

    assert [(b["text"], lines_of(b)) for b in blocks] == [
        ("# about\r\nlist = [\r\n  1,\r\n]", (1, 4)),
        ("[t]", (6, 6)),
        ("t.k = 2", (7, 7)),
    ]


# Comments


def test_comment_lines_directly_above_a_key_go_into_its_text_and_span():
    text = "a = 1\n\n  # two lines\n# above b\nb = 2 # after\n"
    blocks = by_path(text)

    assert blocks["b"]["text"] == "# two lines\n# above b\nb = 2 # after"
    assert lines_of(blocks["b"]) == (3, 5)


def test_comment_lines_directly_above_a_table_go_into_its_text_and_span():
    blocks = by_path("x = 1\n# the servers\n[servers] # all of them\n")

    assert blocks["servers"]["text"] == "# the servers\n[servers] # all of them"
    assert lines_of(blocks["servers"]) == (2, 3)


def test_a_comment_run_no_key_follows_is_a_paragraph_of_its_own():
    text = "# licence\n# header\n\n[t]\nk = 1\n\n# trailing notes\n\nm = 2\n# at the end\n"
    blocks = blocks_of(text)

    paragraphs = [b for b in blocks if b["type"] == "paragraph"]
    assert [
        (b["text"], b["locator"], b["section_path"], b.get("parent"), b["keys"]) for b in paragraphs
    ] == [
        ("# licence\n# header", {"line_start": 1, "line_end": 2}, [], None, []),
        ("# trailing notes", {"line_start": 7, "line_end": 7}, ["t"], "b1", []),
        ("# at the end", {"line_start": 10, "line_end": 10}, ["t"], "b1", []),
    ]


def test_a_file_of_only_comments_is_paragraphs_and_complete():
    artifact = extract("# one\n# two\n\n# three")

    assert [(b["type"], b["text"]) for b in artifact["blocks"]] == [
        ("paragraph", "# one\n# two"),
        ("paragraph", "# three"),
    ]
    assert artifact["coverage"]["complete"] is True


def test_an_empty_file_has_no_blocks_and_is_complete():
    for text in ("", "\n\n", "  \t\n"):
        artifact = extract(text)
        assert artifact["blocks"] == []
        assert artifact["coverage"] == {
            "unit": "keys",
            "total": 0,
            "extracted": 0,
            "failed": [],
            "lost": [],
            "complete": True,
        }


# Locators and coverage


def test_a_valid_files_locators_hold_lines_and_key_paths_not_chars():
    blocks = blocks_of("# note\n\n[t]\nk = 1\n")

    assert [b["locator"] for b in blocks] == [
        {"line_start": 1, "line_end": 1},
        {"line_start": 3, "line_end": 3, "key_path": "t"},
        {"line_start": 4, "line_end": 4, "key_path": "t.k"},
    ]


@pytest.mark.parametrize("source", sorted(GOLD.glob("*.toml")), ids=lambda path: path.stem)
def test_every_non_blank_line_of_a_fixture_is_in_one_blocks_span(source: Path):
    text = decode(source.read_bytes(), None, fmt="toml")
    blocks = blocks_of(text)

    spans = [range(b["locator"]["line_start"], b["locator"]["line_end"] + 1) for b in blocks]
    for line in split_lines(text):
        holders = sum(line.number in span for span in spans)
        assert holders == (0 if line.is_blank else 1), line


def test_coverage_counts_key_blocks():
    artifact = extract("[a]\nx = 1\ny = { z = 2 }\n[[b]]\nw = [1, 2]\n")

    assert artifact["coverage"] == {
        "unit": "keys",
        "total": 3,
        "extracted": 3,
        "failed": [],
        "lost": [],
        "complete": True,
    }


def test_coverage_counts_a_value_no_block_holds_as_failed():
    # As if the scanner missed a line: tomllib read a key the text scan did not find.
    text = "[a]\nx = 1\n"
    lines = split_lines(text)
    scanner = toml_format._Scanner(text, lines, {"a": {"x": 1, "ghost": 2}, "empty": {}})
    scanner.scan()

    assert scanner.coverage() == {
        "unit": "keys",
        "total": 3,
        "extracted": 1,
        "failed": [
            {"unit": "a.ghost", "reason": "tomllib read it, no block holds it"},
            {"unit": "empty", "reason": "tomllib read it, no block holds it"},
        ],
        "lost": [],
        "complete": False,
    }


# Invalid files


def test_an_invalid_file_is_kept_as_paragraphs_with_its_types_lost():
    text = "[server]\nport = \n\nhost = 'x'\n"
    artifact = extract(text)

    assert [(b["type"], b["text"], b["locator"]) for b in artifact["blocks"]] == [
        (
            "paragraph",
            "[server]\nport = ",
            {"line_start": 1, "line_end": 2, "char_start": 0, "char_end": 16},
        ),
        (
            "paragraph",
            "host = 'x'",
            {"line_start": 4, "line_end": 4, "char_start": 18, "char_end": 28},
        ),
    ]
    reason = (
        "invalid TOML: Invalid value (at line 2, column 8); kept as text, its keys, types and"
        " values not read"
    )
    assert artifact["coverage"] == {
        "unit": "lines",
        "total": 3,
        "extracted": 3,
        "failed": [{"unit": "line 2", "reason": reason}],
        "lost": ["toml_types"],
        "complete": False,
    }
    assert artifact["warnings"] == [f"line 2: {reason}"]
    assert all(b["keys"] == [] and b["section_path"] == [] for b in artifact["blocks"])
    validated(artifact, text.encode())


def test_an_invalid_file_whose_error_has_no_line_names_the_end_of_the_document():
    artifact = extract("a = 1\na = 2")  # no newline: tomllib names no line

    assert artifact["coverage"]["failed"] == [
        {
            "unit": "end of document",
            "reason": "invalid TOML: Cannot overwrite a value (at end of document); kept as text,"
            " its keys, types and values not read",
        }
    ]
    assert artifact["coverage"]["lost"] == ["toml_types"]


def test_an_integer_outside_signed_64_bits_makes_the_file_invalid_naming_key_and_line():
    text = "[t]\nok = 1\nlist = [\n  1,\n  9223372036854775808,\n]\n"
    artifact = extract(text)

    assert [b["type"] for b in artifact["blocks"]] == ["paragraph"]
    assert artifact["coverage"]["lost"] == ["toml_types"]
    assert artifact["coverage"]["failed"] == [
        {
            "unit": "line 3",
            "reason": "invalid TOML: the integer 9223372036854775808 at t.list[1] is outside"
            " signed 64 bits; kept as text, its keys, types and values not read",
        }
    ]
    assert extract("n = -9223372036854775809\n")["coverage"]["failed"][0]["unit"] == "line 1"
    validated(artifact, text.encode())


def test_a_file_the_scanner_cannot_follow_is_kept_as_text(monkeypatch: pytest.MonkeyPatch):
    # A scanner defect must not lose the file: monkeypatched so no array token is ever read.
    monkeypatch.setattr(toml_format, "_INNER_TOKEN", toml_format.re.compile(r"(?!)"))
    artifact = extract("a = 1\nb = [\n  2,\n]\n")

    assert [b["type"] for b in artifact["blocks"]] == ["paragraph"]
    assert artifact["coverage"]["lost"] == ["toml_types"]
    assert artifact["coverage"]["failed"] == [
        {
            "unit": "line 2",
            "reason": "the scanner cannot read line 2: an array or inline table does not close;"
            " kept as text, its keys, types and values not read",
        }
    ]


# Contract bounds


def test_a_path_past_the_contracts_bounds_is_cut_and_the_loss_named():
    parts = [f"p{i}" for i in range(300)]
    text = f"[{'.'.join(parts)}]\nk = 1\n"
    artifact = extract(text)

    table, key = artifact["blocks"]
    assert table["section_path"] == parts[:64]
    assert table["keys"] == []  # the path is over 1,024 characters
    assert table["attrs"] == {"section_truncated": True, "keys_truncated": True}
    # The key path is the key's name, so over 1,024 characters it is left out like the key; the
    # block's text still holds it and its lines still cite it.
    assert key["locator"] == {"line_start": 2, "line_end": 2}
    assert "key_path" not in table["locator"]
    assert key["text"] == ".".join(parts) + ".k = 1"
    assert artifact["coverage"]["lost"] == ["exact_keys", "section_path"]
    assert artifact["coverage"]["complete"] is False
    validated(artifact, text.encode())


# Hostile input


@pytest.mark.parametrize(
    "text",
    [
        "a = " + "[" * 10_000 + "]" * 10_000 + "\n",
        "a = " + "{b=" * 10_000 + "1" + "}" * 10_000 + "\n",
    ],
    ids=["arrays", "inline-tables"],
)
def test_values_nested_ten_thousand_deep_are_kept_as_text(text: str):
    started = time.monotonic()
    artifact = extract(text)

    assert time.monotonic() - started < 10
    [block] = artifact["blocks"]
    assert block["text"] == text.rstrip("\n")
    assert artifact["coverage"]["lost"] == ["toml_types"]
    assert artifact["coverage"]["failed"] == [
        {
            "unit": "document",
            "reason": "TOML not read: values nested deeper than tomllib's recursion reaches;"
            " kept as text, its keys, types and values not read",
        }
    ]
    validated(artifact, text.encode())


def test_a_table_nested_ten_thousand_deep_is_read_within_the_contracts_bounds():
    path = ".".join(["a"] * 10_000)
    text = f"[{path}]\nx = 1\n"
    artifact = extract(text)

    table, key = artifact["blocks"]
    assert len(table["section_path"]) == 64
    assert (table["keys"], key["keys"]) == ([], [])
    assert key["attrs"] == {
        "value_type": "integer",
        "value": 1,
        "section_truncated": True,
        "keys_truncated": True,
    }
    assert artifact["coverage"]["lost"] == ["exact_keys", "section_path"]
    assert (artifact["coverage"]["total"], artifact["coverage"]["extracted"]) == (1, 1)
    validated(artifact, text.encode())


@pytest.mark.slow
def test_a_fifty_megabyte_string_value_is_one_key_block():
    text = 'big = "' + "x" * FIFTY_MB + '"\n'
    artifact = extract(text)

    [block] = artifact["blocks"]
    assert block["text"] == f'big = "{"x" * FIFTY_MB}"'
    assert len(block["attrs"]["value"]) == FIFTY_MB
    assert artifact["coverage"]["complete"] is True


@pytest.mark.slow
def test_a_fifty_megabyte_invalid_line_is_one_paragraph():
    text = "x" * FIFTY_MB + "\n"
    artifact = extract(text)

    [block] = artifact["blocks"]
    assert block["locator"] == {
        "line_start": 1,
        "line_end": 1,
        "char_start": 0,
        "char_end": FIFTY_MB,
    }
    assert artifact["coverage"]["lost"] == ["toml_types"]
    assert artifact["coverage"]["failed"][0]["unit"] == "line 1"


# Labelled fixtures and the contract


def test_there_are_at_least_eight_labelled_fixtures():
    assert len(gates.fixtures("toml")) >= 8


@pytest.mark.parametrize("fixture", gates.fixtures("toml"), ids=lambda fixture: fixture.name)
def test_each_fixtures_key_paths_are_keys_of_a_block_holding_their_line(fixture: gates.Fixture):
    artifact = extract(decode(fixture.source, None, fmt="toml"))
    validated(artifact, fixture.source)
    key_paths, locator = gates.Share(), gates.Share()

    gates.toml_scores(fixture.gold, artifact, key_paths, locator)

    assert (key_paths.value, locator.value) == (1.0, 1.0)
    assert artifact["coverage"]["complete"] is True


def test_the_gate_scores_toml_at_its_floors():
    scores = gates.score("toml", lambda data, name: extract(decode(data, None, fmt="toml")))

    assert scores == {"key paths": 1.0, "locator": 1.0}


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not here")
def test_every_corpus_file_ends_as_a_valid_artifact_or_a_contract_code():
    from extractor_sandbox.errors import ExtractError

    files = sorted((CORPUS / "toml").rglob("*.toml")) + sorted(
        (CORPUS / "toml_invalid").rglob("*.toml")
    )
    assert len(files) > 700
    refused = 0
    for path in files:
        data = path.read_bytes()
        try:
            text = decode(data, None, fmt="toml")
        except ExtractError:
            refused += 1
            continue
        artifact = extract(text)
        validated(artifact, data)
        if path.is_relative_to(CORPUS / "toml_invalid") and path.name != "utf16-bom.toml":
            assert artifact["coverage"]["lost"] == ["toml_types"], path
    assert refused < 20
