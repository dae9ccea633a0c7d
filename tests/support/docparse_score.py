"""The qualification gate's scorer: how close an extractor's artifact is to a document's gold labels.

Plain standard-library Python, so anyone can run it:

    python tests/support/docparse_score.py --dir ARTIFACTS --gold-dir GOLD

An artifact `ARTIFACTS/<key>.json` is scored against `GOLD/<key>.gold.json` (or `<key>.json`), or
failing that the one gold anywhere under GOLD with the same file name; e.g. the artifact
`out/docx/lorem_ipsum.docx.json` against `../shared/corpus/gold/docx/lorem_ipsum.docx.json`.

Gold comes in two forms, both JSON (`load_gold`):

- docparse-gold (`{"gold_schema": "docparse-gold/1", ...}`), the form the reference scorer
  (shared/tools/docparse_score.py) reads: `blocks` [{type, text, level, page}], `tables`
  [{rows, header_rows, page}], `page_count`; this bench adds three optional lists:
  `notes` [{text, page}] (speaker notes), `images` [{page, text}] (a picture, chart or diagram,
  and the text it shows) and `scanned_pages` [int].
- DoclingDocument JSON (the shared corpus's gold): its body tree in reading order; speaker notes
  from a deck's notes layer; pictures as images.

The metrics are the seed's ("The metrics"). `score_document` gives each as (hits, total), and
`score_slice` sums hits and totals over a slice, so a slice's score is not a mean of means and a
long document weighs as much as its words. A metric with nothing to count is left out.

- text recall / text precision: the gold's words the artifact holds / the artifact's words the
  gold holds, as multisets (words: runs of letters and digits, NFKC, case-folded; a table's cells
  are words too).
- reading order: each gold block is located in the artifact on its own (the artifact block
  holding most of its words, at least half); the longest run of them in increasing order over the
  number located.
- heading F1: headings matched one to one by their words (a second pass ignores leading section
  numbers such as "2.1"); 2 x matched / (gold headings + artifact headings).
- heading level: the matched headings whose level has the same rank among the matched headings'
  levels, a gold heading of level 0 (a title from the document's metadata) left out.
- table cell F1: non-empty cell texts matched as multisets; 2 x matched / (gold + artifact cells).
- locator: located gold blocks (and gold tables matched to an artifact table) whose page or
  slide lies within the artifact block's page_start..page_end.
- notes: speaker notes held in an artifact block marked attrs.notes on their slide.
- announced loss: the words drawn inside gold images (each image at least one) whose page or
  slide the artifact reads with OCR (attrs.ocr_pages, attrs.ocr_slides) or names as not read
  (a failed unit "slide 3" or "page 3", a block there with attrs.images_unread); an image with no
  page counts as announced when the artifact names any such loss or warns.
- failed units: scanned pages the artifact reads with OCR or names as failed.

Where the reference scorer computes the same metric, the definition is its definition (a test
runs both on the same artifacts). As there, a block's attrs.table is read as a table when it
holds a grid (rows as lists); a table block whose attrs.table holds the contract's counts
({"rows": 3, "columns": 2}: DOCX, PPTX, HTML) is read from its text (a row per line, cells joined
by " | ").
"""

from __future__ import annotations

import argparse
import bisect
import json
import re
import sys
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Score = tuple[float, float]  # (hits, total)
METRICS = (
    "text recall",
    "text precision",
    "reading order",
    "heading F1",
    "heading level",
    "table cell F1",
    "locator",
    "notes",
    "announced loss",
    "failed units",
)

_WORD = re.compile(r"[^\W_]+")
_SECTION_NUMBER = re.compile(r"[ivxlc]+|[a-z]")
_NAMED_PAGE = re.compile(r"\b(?:page|slide)s?\s+(\d+)(?:\s*-\s*(\d+))?")


def words(text: str) -> list[str]:
    """The words of a text: runs of letters and digits, NFKC-normalised and case-folded."""
    return _WORD.findall(unicodedata.normalize("NFKC", text or "").casefold())


def key_text(text: str) -> str:
    return " ".join(words(text))


def without_section_number(text: str) -> str:
    """A heading's words without leading numbering: "2 1 results" -> "results"."""
    tokens = key_text(text).split()
    start = 0
    while start < len(tokens) - 1 and (
        tokens[start].isdigit() or _SECTION_NUMBER.fullmatch(tokens[start])
    ):
        start += 1
    return " ".join(tokens[start:])


# The gold


@dataclass
class Gold:
    blocks: list[dict[str, Any]] = field(default_factory=list)  # type, text, level?, page?
    tables: list[dict[str, Any]] = field(default_factory=list)  # rows, header_rows, page?
    notes: list[dict[str, Any]] = field(default_factory=list)  # text, page?
    images: list[dict[str, Any]] = field(default_factory=list)  # page?, text
    scanned_pages: list[int] = field(default_factory=list)
    page_count: int | None = None


def load_gold(path: str | Path) -> Gold:
    """A gold file, in the docparse-gold form or as a DoclingDocument."""
    document = json.loads(Path(path).read_text(encoding="utf-8"))
    if str(document.get("gold_schema", "")).startswith("docparse-gold"):
        return gold_from_docparse(document)
    if document.get("schema_name") == "DoclingDocument":
        return gold_from_docling(document)
    raise ValueError(f"{path}: neither docparse-gold nor a DoclingDocument")


def gold_from_docparse(document: dict[str, Any]) -> Gold:
    gold = Gold(page_count=document.get("page_count"))
    for block in document.get("blocks") or []:
        if (block.get("text") or "").strip():
            gold.blocks.append(_only_set(block, "type", "text", "level", "page"))
    for table in document.get("tables") or []:
        rows = [["" if cell is None else str(cell) for cell in row] for row in table["rows"]]
        gold.tables.append({"rows": rows, "page": table.get("page")})
    gold.notes = [_only_set(note, "text", "page") for note in document.get("notes") or []]
    gold.images = [_only_set(image, "text", "page") for image in document.get("images") or []]
    gold.scanned_pages = [int(page) for page in document.get("scanned_pages") or []]
    return gold


def _only_set(item: dict[str, Any], *names: str) -> dict[str, Any]:
    return {name: item[name] for name in names if item.get(name) is not None}


def gold_from_docling(document: dict[str, Any]) -> Gold:
    """A DoclingDocument's body in reading order, read as the reference scorer reads it.

    Furniture (page headers and footers) is not gold; neither are comments. A deck's speaker notes
    (its notes layer) are gold notes, and pictures are gold images, their text what they hold.
    """
    gold = Gold(page_count=len(document.get("pages") or {}) or None)
    is_deck = "presentationml" in ((document.get("origin") or {}).get("mimetype") or "")

    def resolve(ref: str) -> tuple[str, dict[str, Any]]:
        parts = ref.lstrip("#/").split("/")
        item: Any = document
        for part in parts:
            item = item[int(part)] if isinstance(item, list) else item[part]
        return parts[0], item

    def page_of(item: dict[str, Any]) -> int | None:
        prov = item.get("prov") or []
        return int(prov[0]["page_no"]) if prov and prov[0].get("page_no") is not None else None

    def add_block(block_type: str, text: str, page: int | None, level: int | None = None) -> None:
        if text.strip():
            block: dict[str, Any] = {"type": block_type, "text": text}
            if level is not None:
                block["level"] = level
            if page is not None:
                block["page"] = page
            gold.blocks.append(block)

    def subtree_text(item: dict[str, Any]) -> list[str]:
        found = [item["text"]] if item.get("text") else []
        for child in item.get("children") or []:
            kind, sub = resolve(child["$ref"])
            if kind in ("texts", "groups"):
                found.extend(subtree_text(sub))
        return found

    def add_captions(item: dict[str, Any]) -> None:
        for ref in item.get("captions") or []:
            _, caption = resolve(ref["$ref"])
            add_block("caption", caption.get("text") or "", page_of(caption))

    def add_table(data: dict[str, Any], page: int | None) -> None:
        gold.tables.append({"rows": _docling_grid(data), "page": page})

    def walk(node: dict[str, Any]) -> None:
        for child in node.get("children") or []:
            kind, item = resolve(child["$ref"])
            layer = item.get("content_layer", "body")
            if layer == "notes" and is_deck and kind == "texts":
                gold.notes.append(
                    _only_set({"text": item.get("text"), "page": page_of(item)}, "text", "page")
                )
            if layer != "body":
                continue
            if kind == "texts":
                _add_docling_text(item, add_block, page_of(item))
                walk(item)
            elif kind == "groups" and item.get("label") == "inline":
                pages = [page_of(resolve(c["$ref"])[1]) for c in item.get("children") or []]
                text = " ".join(t.strip() for t in subtree_text(item) if t.strip())
                add_block("paragraph", text, next((p for p in pages if p is not None), None))
            elif kind == "groups":
                if item.get("label") == "sheet" and (item.get("name") or "").strip():
                    add_block("heading", item["name"], None, 1)
                walk(item)
            elif kind == "tables":
                add_captions(item)
                add_table(item.get("data") or {}, page_of(item))
            elif kind == "pictures":
                add_captions(item)
                chart = ((item.get("meta") or {}).get("tabular_chart") or {}).get("chart_data")
                if isinstance(chart, dict) and chart.get("table_cells"):
                    add_table(chart, page_of(item))
                image = {"text": " ".join(subtree_text(item)), "page": page_of(item)}
                gold.images.append(_only_set(image, "text", "page"))
            else:
                walk(item)

    walk(document.get("body") or {})
    return gold


def _add_docling_text(item: dict[str, Any], add_block: Any, page: int | None) -> None:
    label = item.get("label", "text")
    text = item.get("text") or item.get("orig") or ""
    if label in ("page_header", "page_footer"):
        return
    if label == "title":
        add_block("heading", text, page, 0)
    elif label == "section_header":
        level = item.get("level")
        add_block("heading", text, page, int(level) if level is not None else 1)
    elif label in ("list_item", "code", "formula"):
        add_block(label, text, page)
    else:
        add_block("paragraph", text, page)


def _docling_grid(data: dict[str, Any]) -> list[list[str]]:
    cells = data.get("table_cells") or []
    n_rows, n_cols = int(data.get("num_rows") or 0), int(data.get("num_cols") or 0)
    if not n_rows or not n_cols:
        for cell in cells:
            n_rows = max(n_rows, int(cell.get("end_row_offset_idx", 1)))
            n_cols = max(n_cols, int(cell.get("end_col_offset_idx", 1)))
    grid = [["" for _ in range(n_cols)] for _ in range(n_rows)]
    for cell in cells:
        row, col = (
            int(cell.get("start_row_offset_idx", 0)),
            int(cell.get("start_col_offset_idx", 0)),
        )
        if 0 <= row < n_rows and 0 <= col < n_cols:
            grid[row][col] = cell.get("text") or ""
    return grid


# The artifact, as the scorer sees it


@dataclass
class Parsed:
    blocks: list[dict[str, Any]]  # type, text, depth, pages (first, last) or None, attrs
    tables: list[dict[str, Any]]  # rows, pages
    announced_pages: set[int]  # read with OCR or named as not read
    names_a_loss: bool  # warns, names a failed unit, or names an image it did not read


def parse_artifact(artifact: dict[str, Any]) -> Parsed:
    blocks, tables = [], []
    for block in artifact.get("blocks") or []:
        pages = _pages(block.get("locator"))
        attrs = block.get("attrs") or {}
        parsed = {
            "type": block.get("type") or "paragraph",
            "text": block.get("text") or "",
            "depth": block.get("depth"),
            "pages": pages,
            "attrs": attrs,
        }
        blocks.append(parsed)
        grid = attrs.get("table") if isinstance(attrs, dict) else None
        if (
            isinstance(grid, dict)
            and isinstance(grid.get("rows"), list)
            and (grid.get("rows") or grid.get("columns"))
        ):
            tables.append({"rows": _grid(grid), "pages": pages})
        elif parsed["type"] == "table":
            rows = [line.split(" | ") for line in parsed["text"].split("\n") if line.strip()]
            tables.append({"rows": rows, "pages": pages})
    _add_listed_tables(artifact, blocks, tables)
    coverage = artifact.get("coverage") or {}
    failed_pages = _named_pages(str(unit.get("unit", "")) for unit in coverage.get("failed") or [])
    ocr = (artifact.get("attrs") or {}).get("ocr_pages", []) + (artifact.get("attrs") or {}).get(
        "ocr_slides", []
    )
    unread = {
        page
        for block in blocks
        if block["attrs"].get("images_unread") and block["pages"]
        for page in range(block["pages"][0], block["pages"][1] + 1)
    }
    names_a_loss = bool(
        artifact.get("warnings")
        or coverage.get("failed")
        or unread
        or ocr
        or any(block["attrs"].get("images_unread") for block in blocks)
    )
    return Parsed(blocks, tables, failed_pages | set(ocr) | unread, names_a_loss)


def _add_listed_tables(
    artifact: dict[str, Any], blocks: list[dict[str, Any]], tables: list[dict[str, Any]]
) -> None:
    """The artifact's `tables` (a PDF's, a sheet's) that no table block already holds; as the
    reference scorer does, their cells are the artifact's words when no block is a table."""
    had_table_block = bool(tables)
    # Only a table block holds a listed table: two listed tables with the same cells are two
    # tables (the reference scorer compares with the blocks' tables alone).
    in_blocks = [_cells(t["rows"]) for t in tables]
    for table in artifact.get("tables") or []:
        rows = _grid(table)
        if _cells(rows) in in_blocks:
            continue
        pages = _pages(table.get("locator"))
        tables.append({"rows": rows, "pages": pages})
        if not had_table_block:
            text = "\n".join(" | ".join(row) for row in rows)
            blocks.append(
                {"type": "table", "text": text, "depth": None, "pages": pages, "attrs": {}}
            )


def _grid(table: dict[str, Any]) -> list[list[str]]:
    """A table's rows as text, its column names first when they name it (header_rows >= 1)."""
    rows = [["" if v is None else str(v) for v in row] for row in table.get("rows") or []]
    names = [
        str(column.get("name", "")) if isinstance(column, dict) else str(column)
        for column in table.get("columns") or []
    ]
    header_rows = table.get("header_rows")
    if any(n.strip() for n in names) and (header_rows is None or int(header_rows) >= 1):
        rows = [names, *rows] if not rows or _keys(rows[0]) != _keys(names) else rows
    return rows


def _keys(row: list[str]) -> list[str]:
    return [key_text(cell) for cell in row]


def _pages(locator: Any) -> tuple[int, int] | None:
    if not isinstance(locator, dict) or not locator.get("page_start"):
        return None
    first = int(locator["page_start"])
    return first, int(locator.get("page_end") or first)


def _named_pages(units: Iterable[str]) -> set[int]:
    pages: set[int] = set()
    for unit in units:
        for match in _NAMED_PAGE.finditer(unit):
            first = int(match.group(1))
            pages.update(range(first, int(match.group(2) or first) + 1))
    return pages


# The metrics


def score_document(gold: Gold, artifact: dict[str, Any]) -> dict[str, Score]:
    """Each metric defined for this pair, as (hits, total)."""
    parsed = parse_artifact(artifact)
    scores: dict[str, Score] = {}
    scores.update(text_overlap(gold, parsed))
    located = locate_blocks(
        [words(b["text"]) for b in gold.blocks], [words(b["text"]) for b in parsed.blocks]
    )
    scores.update(reading_order(gold, located))
    scores.update(heading_scores(gold, parsed))
    scores.update(table_cells(gold, parsed))
    scores.update(locator(gold, parsed, located))
    scores.update(notes(gold, parsed))
    scores.update(announced_loss(gold, parsed))
    scores.update(failed_units(gold, parsed))
    return {metric: score for metric, score in scores.items() if score[1] > 0}


def score_slice(pairs: Iterable[tuple[Gold, dict[str, Any]]]) -> dict[str, float]:
    """Each metric over a slice: its hits summed over its totals summed."""
    hits: dict[str, float] = defaultdict(float)
    totals: dict[str, float] = defaultdict(float)
    for gold, artifact in pairs:
        for metric, (hit, total) in score_document(gold, artifact).items():
            hits[metric] += hit
            totals[metric] += total
    return {metric: hits[metric] / totals[metric] for metric in METRICS if totals.get(metric)}


def text_overlap(gold: Gold, parsed: Parsed) -> dict[str, Score]:
    gold_words = Counter(w for b in gold.blocks for w in words(b["text"]))
    for table in gold.tables:
        gold_words.update(w for row in table["rows"] for cell in row for w in words(cell))
    parsed_words = Counter(w for b in parsed.blocks for w in words(b["text"]))
    shared = sum((gold_words & parsed_words).values())
    return {
        "text recall": (shared, gold_words.total()),
        "text precision": (shared, parsed_words.total()),
    }


Location = tuple[int, int]  # (artifact block index, word offset in it)


def locate_blocks(gold: list[list[str]], parsed: list[list[str]]) -> list[Location | None]:
    """Where each gold block is in the artifact, found on its own: the artifact block sharing most
    of its words (at least half of them), ties to the best Dice overlap, then to a block not yet
    taken, then the earliest; within it, where its first words start."""
    counts = [Counter(tokens) for tokens in parsed]
    holders: dict[str, list[int]] = defaultdict(list)
    for index, count in enumerate(counts):
        for word in count:
            holders[word].append(index)
    taken: Counter[int] = Counter()
    found: list[Location | None] = []
    for tokens in gold:
        shared: dict[int, int] = defaultdict(int)
        for word, n in Counter(tokens).items():
            for index in holders.get(word, ()):
                shared[index] += min(n, counts[index][word])
        best = max(shared.values(), default=0)
        if not tokens or best < 0.5 * len(tokens):
            found.append(None)
            continue

        def dice(index: int, tokens: list[str] = tokens, shared: dict[int, int] = shared) -> float:
            return 2.0 * shared[index] / (len(tokens) + len(parsed[index]))

        near_best = sorted(
            (i for i, s in shared.items() if s >= 0.9 * best),
            key=lambda i: (-dice(i), taken[i] > 0, i),
        )
        top = dice(near_best[0])
        equal = [i for i in near_best if abs(dice(i) - top) < 1e-9]
        index = next((i for i in equal if not taken[i]), equal[0])
        taken[index] += 1
        found.append((index, _offset(parsed[index], tokens)))
    return found


def _offset(haystack: list[str], tokens: list[str]) -> int:
    for needle in (tokens[:3], tokens[:1]):
        for start in range(len(haystack) - len(needle) + 1):
            if haystack[start : start + len(needle)] == needle:
                return start
    return 0


def reading_order(gold: Gold, located: list[Location | None]) -> dict[str, Score]:
    places = [place for place in located if place is not None]
    with_words = sum(1 for b in gold.blocks if words(b["text"]))
    if len(places) >= 2:
        return {"reading order": (_longest_increasing(places), len(places))}
    if len(places) == 1 and with_words >= 2:
        return {"reading order": (1, 1)}
    return {}


def _longest_increasing(sequence: list[Location]) -> int:
    tails: list[Location] = []
    for item in sequence:
        at = bisect.bisect_left(tails, item)
        tails[at : at + 1] = [item]
    return len(tails)


def heading_scores(gold: Gold, parsed: Parsed) -> dict[str, Score]:
    gold_heads = [b for b in gold.blocks if b["type"] in ("heading", "title")]
    parsed_heads = [b for b in parsed.blocks if b["type"] in ("heading", "title")]
    if not gold_heads and not parsed_heads:
        return {}
    pairs = _match_headings(gold_heads, parsed_heads)
    scores: dict[str, Score] = {"heading F1": (2 * len(pairs), len(gold_heads) + len(parsed_heads))}
    # Levels are ranked among the matched headings' own levels, leaving out a gold level-0
    # heading (a title from the document's metadata, whose depth conventions differ).
    leveled = [(g, p) for g, p in pairs if _level(g.get("level")) != 0]
    if leveled:
        gold_rank = _ranks(_level(g.get("level")) for g, _ in leveled)
        parsed_rank = _ranks(_level(p["depth"]) for _, p in leveled)
        same = sum(
            gold_rank[_level(g.get("level"))] == parsed_rank[_level(p["depth"])] for g, p in leveled
        )
        scores["heading level"] = (same, len(leveled))
    return scores


def _match_headings(
    gold_heads: list[dict[str, Any]], parsed_heads: list[dict[str, Any]]
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Headings paired one to one by their words, then, for those left, without numbering."""
    pairs = []
    by_text: dict[str, list[int]] = defaultdict(list)
    for index, head in enumerate(parsed_heads):
        by_text[key_text(head["text"])].append(index)
    left_gold, left_parsed = [], set(range(len(parsed_heads)))
    for head in gold_heads:
        candidates = by_text.get(key_text(head["text"]))
        if candidates:
            index = candidates.pop(0)
            left_parsed.discard(index)
            pairs.append((head, parsed_heads[index]))
        else:
            left_gold.append(head)
    by_bare: dict[str, list[int]] = defaultdict(list)
    for index in sorted(left_parsed):
        by_bare[without_section_number(parsed_heads[index]["text"])].append(index)
    for head in left_gold:
        bare = without_section_number(head["text"])
        if bare and by_bare.get(bare):
            pairs.append((head, parsed_heads[by_bare[bare].pop(0)]))
    return pairs


def _level(value: Any) -> int:
    try:
        return int(value) if value is not None else 1
    except (TypeError, ValueError):
        return 1


def _ranks(levels: Iterable[int]) -> dict[int, int]:
    return {level: rank for rank, level in enumerate(sorted(set(levels)))}


def _cells(rows: list[list[str]]) -> Counter[str]:
    """A table's non-empty cell texts as a multiset. A cell equal to its left or upper neighbour
    counts once with it: some writers repeat a spanning cell in each place it spans, others not."""
    grid = [_keys(row) for row in rows]
    found: Counter[str] = Counter()
    for r, row in enumerate(grid):
        for c, value in enumerate(row):
            left = c > 0 and row[c - 1] == value
            above = r > 0 and c < len(grid[r - 1]) and grid[r - 1][c] == value
            if value and not left and not above:
                found[value] += 1
    return found


def table_cells(gold: Gold, parsed: Parsed) -> dict[str, Score]:
    gold_cells = sum((_cells(t["rows"]) for t in gold.tables), Counter())
    parsed_cells = sum((_cells(t["rows"]) for t in parsed.tables), Counter())
    shared = sum((gold_cells & parsed_cells).values())
    return {"table cell F1": (2 * shared, gold_cells.total() + parsed_cells.total())}


def locator(gold: Gold, parsed: Parsed, located: list[Location | None]) -> dict[str, Score]:
    hits = total = 0
    for block, place in zip(gold.blocks, located, strict=True):
        if place is not None and block.get("page") is not None:
            total += 1
            hits += _on_page(block["page"], parsed.blocks[place[0]]["pages"])
    taken: set[int] = set()
    for table in gold.tables:
        cells = _cells(table["rows"])
        if table.get("page") is None or not cells:
            continue
        total += 1
        best, best_index = 0, None
        for index, candidate in enumerate(parsed.tables):
            overlap = sum((cells & _cells(candidate["rows"])).values())
            if overlap > best or (
                overlap == best > 0 and best_index in taken and index not in taken
            ):
                best, best_index = overlap, index
        if best_index is not None and best >= 0.5 * cells.total():
            taken.add(best_index)
            hits += _on_page(table["page"], parsed.tables[best_index]["pages"])
    return {"locator": (hits, total)}


def _on_page(page: int, pages: tuple[int, int] | None) -> bool:
    return pages is not None and pages[0] <= page <= pages[1]


def notes(gold: Gold, parsed: Parsed) -> dict[str, Score]:
    """Speaker notes held in a block marked attrs.notes, on their slide, with half their words."""
    note_blocks = [b for b in parsed.blocks if b["attrs"].get("notes")]
    held = 0
    for note in gold.notes:
        wanted = Counter(words(note["text"]))
        held += any(
            (note.get("page") is None or _on_page(note["page"], b["pages"]))
            and sum((wanted & Counter(words(b["text"]))).values()) >= 0.5 * wanted.total()
            for b in note_blocks
        )
    return {"notes": (held, len(gold.notes))}


def announced_loss(gold: Gold, parsed: Parsed) -> dict[str, Score]:
    hits = total = 0
    for image in gold.images:
        weight = max(1, len(words(image.get("text", ""))))
        page = image.get("page")
        announced = parsed.names_a_loss if page is None else page in parsed.announced_pages
        total += weight
        hits += weight * announced
    return {"announced loss": (hits, total)}


def failed_units(gold: Gold, parsed: Parsed) -> dict[str, Score]:
    read_or_failed = sum(page in parsed.announced_pages for page in gold.scanned_pages)
    return {"failed units": (read_or_failed, len(gold.scanned_pages))}


# The command line


def find_gold(key: str, gold_dir: Path) -> Path | None:
    for suffix in (".gold.json", ".json"):
        if (gold_dir / f"{key}{suffix}").is_file():
            return gold_dir / f"{key}{suffix}"
    name = Path(key).name
    found = sorted(
        {*gold_dir.rglob(f"{name}.gold.json")}
        | {p for p in gold_dir.rglob(f"{name}.json") if not p.name.endswith(".gold.json")}
    )
    return found[0] if len(found) == 1 else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", required=True, type=Path, help="artifacts, <key>.json each")
    parser.add_argument("--gold-dir", required=True, type=Path, help="gold, <key>.json each")
    args = parser.parse_args(argv)
    pairs, missing = [], []
    for path in sorted(args.dir.rglob("*.json")):
        key = str(path.relative_to(args.dir)).removesuffix(".json").removesuffix(".artifact")
        gold_path = find_gold(key, args.gold_dir)
        if gold_path is None:
            missing.append(key)
            continue
        gold, artifact = load_gold(gold_path), json.loads(path.read_text(encoding="utf-8"))
        pairs.append((gold, artifact))
        shares = {m: round(h / t, 4) for m, (h, t) in score_document(gold, artifact).items()}
        print(json.dumps({"doc": key, **shares}))
    print(
        json.dumps(
            {
                "slice": str(args.dir),
                "documents": len(pairs),
                **{m: round(v, 4) for m, v in score_slice(pairs).items()},
            }
        )
    )
    for key in missing:
        print(f"no gold for {key}", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
