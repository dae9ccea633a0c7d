"""Pandoc's native AST (a `.native` file of its test suite) as docparse-gold JSON.

    python bench/realworld/office/pandoc_gold.py IN.native OUT.gold.json --format docx|pptx

Reads the Haskell `show` form pandoc writes (constructors, strings, lists, tuples, records) with a
small tokenizer, and keeps what the scorer compares: headings with their levels, paragraphs,
list items, code, table cells, and the document title from the metadata (a level-0 heading, which
the scorer leaves out of level ranks). Footnote text follows the body, as paragraphs. Nothing of
pandoc's gold is edited: this only changes its notation.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

_TOKEN = re.compile(
    r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<num>-?\d+(?:\.\d+)?(?:e-?\d+)?)|(?P<name>[A-Za-z_][\w\']*)'
    r"|(?P<punct>[\[\](){},=]))",
    re.S,
)
_ESCAPE = re.compile(r"\\(\d+|x[0-9a-fA-F]+|o[0-7]+|[ntr\\\"'&abfv]|\^[A-Z@\[\\\]^_]|[A-Z]{2,3})")
_NAMED = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "\\": "\\",
    '"': '"',
    "'": "'",
    "&": "",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "NUL": "\0",
    "DEL": "\x7f",
    "SP": " ",
}


def _unescape(body: str) -> str:
    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code.isdigit():
            return chr(int(code))
        if code[0] == "x":
            return chr(int(code[1:], 16))
        if code[0] == "o" and len(code) > 1:
            return chr(int(code[1:], 8))
        return _NAMED.get(code, "")

    return _ESCAPE.sub(one, body)


class Con:
    """A constructor and its arguments."""

    def __init__(self, name: str, args: list[Any]) -> None:
        self.name, self.args = name, args

    def __repr__(self) -> str:
        return f"{self.name}{self.args!r}"


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                if text[pos:].strip():
                    raise ValueError(f"cannot read native at {pos}: {text[pos : pos + 40]!r}")
                break
            kind = m.lastgroup or ""
            self.tokens.append((kind, m.group(kind)))
            pos = m.end()
        self.i = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def atom(self, applied: bool = False) -> Any:
        """One value; a constructor's name takes arguments only where it is `applied` (a list
        element, inside parentheses, a field's value): as an argument it stands alone."""
        kind, value = self.take()
        if kind == "str":
            return _unescape(value[1:-1])
        if kind == "num":
            return float(value) if "." in value else int(value)
        if kind == "punct" and value == "[":
            return self.seq("]")
        if kind == "punct" and value == "(":
            items = self.seq(")")
            return items[0] if len(items) == 1 else tuple(items)
        if kind == "name":
            if applied:
                return self.constructor(value)
            if self.peek() == ("punct", "{"):  # record syntax binds tighter than application
                return Con(value, [self.record()])
            return {"True": True, "False": False, "Nothing": None}.get(value, Con(value, []))
        raise ValueError(f"unexpected {value!r}")

    def seq(self, close: str) -> list[Any]:
        items: list[Any] = []
        while True:
            token = self.peek()
            if token == ("punct", close):
                self.take()
                return items
            if token == ("punct", ","):
                self.take()
                continue
            items.append(self.value())

    def value(self) -> Any:
        return self.atom(applied=True)

    def constructor(self, name: str) -> Any:
        if name in ("True", "False"):
            return name == "True"
        if name == "Nothing":
            return None
        args: list[Any] = []
        while True:
            token = self.peek()
            if token is None or token in (
                ("punct", ","),
                ("punct", "]"),
                ("punct", ")"),
                ("punct", "}"),
            ):
                return Con(name, args)
            if token == ("punct", "{"):
                args.append(self.record())
                continue
            args.append(self.atom())

    def record(self) -> dict[str, Any]:
        self.take()  # {
        record: dict[str, Any] = {}
        while self.peek() != ("punct", "}"):
            if self.peek() == ("punct", ","):
                self.take()
                continue
            _, name = self.take()
            self.take()  # =
            record[name] = self.value()
        self.take()
        return record


def parse_native(text: str) -> Any:
    parser = _Parser(text)
    first = parser.peek()
    if first == ("name", "Pandoc"):
        parser.take()
        meta = parser.atom()
        blocks = parser.atom()
        return meta, blocks
    return None, parser.value()


def inline_text(inlines: list[Any], notes: list[list[Any]]) -> str:
    out: list[str] = []
    for item in inlines:
        if not isinstance(item, Con):
            continue
        name, args = item.name, item.args
        if name == "Str":
            out.append(args[0])
        elif name in ("Space", "SoftBreak"):
            out.append(" ")
        elif name == "LineBreak":
            out.append("\n")
        elif name in (
            "Emph",
            "Strong",
            "Underline",
            "Strikeout",
            "Superscript",
            "Subscript",
            "SmallCaps",
        ):
            out.append(inline_text(args[0], notes))
        elif name in ("Span", "Link"):
            out.append(inline_text(args[1], notes))
        elif name == "Quoted":
            quote = '"' if args[0].name == "DoubleQuote" else "'"
            out.append(quote + inline_text(args[1], notes) + quote)
        elif name == "Cite":
            out.append(inline_text(args[1], notes))
        elif name in ("Code", "Math"):
            out.append(args[1])
        elif name == "Note":
            notes.append(args[0])
        # Image (its alt text is no text of the page), RawInline: nothing
    return "".join(out)


def _cells_of_row(row: Any) -> list[Any]:
    # Row attr [Cell attr align rowspan colspan [Block]]
    return [cell.args[4] for cell in row.args[1]]


def to_gold(meta: Any, blocks: list[Any], fmt: str) -> dict[str, Any]:
    gold_blocks: list[dict[str, Any]] = []
    tables: list[dict[str, Any]] = []
    notes: list[list[Any]] = []

    def text_of_blocks(items: list[Any]) -> str:
        parts = []
        for block in items:
            if block.name in ("Para", "Plain"):
                parts.append(inline_text(block.args[0], notes))
            elif block.name == "LineBlock":
                parts.append("\n".join(inline_text(line, notes) for line in block.args[0]))
            elif block.name in ("BulletList", "OrderedList"):
                lists = block.args[-1]
                parts.extend(text_of_blocks(item) for item in lists)
            elif block.name in ("Div", "BlockQuote"):
                parts.append(text_of_blocks(block.args[-1]))
            elif block.name == "CodeBlock":
                parts.append(block.args[1])
            elif block.name == "Header":
                parts.append(inline_text(block.args[2], notes))
        return " ".join(p for p in parts if p)

    def walk(items: list[Any], in_list: bool = False) -> None:
        for block in items:
            name, args = block.name, block.args
            if name == "Header":
                gold_blocks.append(
                    {"type": "heading", "text": inline_text(args[2], notes), "level": args[0]}
                )
            elif name in ("Para", "Plain"):
                kind = "list_item" if in_list else "paragraph"
                gold_blocks.append({"type": kind, "text": inline_text(args[0], notes)})
            elif name == "LineBlock":
                text = "\n".join(inline_text(line, notes) for line in args[0])
                gold_blocks.append({"type": "paragraph", "text": text})
            elif name == "CodeBlock":
                gold_blocks.append({"type": "code", "text": args[1]})
            elif name in ("BulletList", "OrderedList"):
                for item in args[-1]:
                    walk(item, in_list=True)
            elif name == "DefinitionList":
                for term, definitions in args[0]:
                    gold_blocks.append({"type": "paragraph", "text": inline_text(term, notes)})
                    for definition in definitions:
                        walk(definition, in_list)
            elif name in ("BlockQuote", "Div"):
                walk(args[-1], in_list)
            elif name == "Figure":
                walk(args[-1], in_list)
            elif name == "Table":
                # Table attr caption colspecs head [body] foot
                head, bodies, foot = args[3], args[4], args[5]
                rows = []
                for row in head.args[1]:
                    rows.append([text_of_blocks(cell) for cell in _cells_of_row(row)])
                header_rows = len(rows)
                for body in bodies:
                    for row in body.args[2] + body.args[3]:
                        rows.append([text_of_blocks(cell) for cell in _cells_of_row(row)])
                for row in foot.args[1]:
                    rows.append([text_of_blocks(cell) for cell in _cells_of_row(row)])
                caption = args[1].args[1] if args[1].args else []
                if caption:
                    gold_blocks.append({"type": "caption", "text": text_of_blocks(caption)})
                tables.append(
                    {"rows": rows, "header_rows": header_rows, "after_block": len(gold_blocks)}
                )
            # HorizontalRule, RawBlock: nothing

    walk(blocks)
    while notes:
        pending, notes[:] = list(notes), []
        for note in pending:
            walk(note)
    title = _meta_title(meta, notes)
    if title:
        gold_blocks.insert(0, {"type": "heading", "text": title, "level": 0})
        for table in tables:
            table["after_block"] += 1
    return {
        "gold_schema": "docparse-gold/1",
        "format": fmt,
        "blocks": [b for b in gold_blocks if b["text"].strip()],
        "tables": tables,
    }


def _meta_title(meta: Any, notes: list[list[Any]]) -> str:
    if not isinstance(meta, Con) or not meta.args:
        return ""
    record = meta.args[0]
    entries = record.get("unMeta")
    if not isinstance(entries, Con):
        return ""
    for key, value in entries.args[0] if entries.args else []:
        if key == "title" and isinstance(value, Con) and value.name == "MetaInlines":
            return inline_text(value.args[0], notes)
    return ""


def convert(native: str, fmt: str) -> dict[str, Any]:
    meta, blocks = parse_native(native)
    return to_gold(meta, blocks, fmt)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("native", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--format", required=True)
    args = parser.parse_args()
    gold = convert(args.native.read_text(encoding="utf-8"), args.format)
    args.out.write_text(json.dumps(gold, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
