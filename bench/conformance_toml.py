"""TOML conformance: the toml-test suite's files in the shared corpus, read by the TOML parser.

Each file is decoded as the service decodes it (extractor_sandbox.source.decode, strict), read by
extract_toml, and its artifact checked with the server's parse_artifact. Then:

- valid files (inputs/toml/valid, gold in gold/toml/valid/*.toml.json, toml-test's tagged JSON):
  every leaf of the gold (a scalar, an empty array or table; an array of scalars counts each
  element) is a key path. It is found when the key block whose path is the longest prefix of it
  holds it in attrs.value with its value and type (a value_type that agrees when the block holds
  the leaf itself), or, for an empty table, a table block has its path. Also reported: the share
  of the gold's index-free leaf paths that are exactly a block's key (the contents of an inline
  table or an array of inline tables stay in their key's block, so they are not keys of their
  own), and the files tomllib (TOML 1.0) rejects, which the 1.1-only files of the suite are.
  The same artifacts are scored by the reference scorer (shared/tools/docparse_score.py, beside
  the corpus), which reads each block's key path from locator.key_path: its key-path recall,
  precision and F1, the means over the files tomllib reads, given as they are.
- invalid files (inputs/toml_invalid, no gold): the share kept as paragraphs with
  coverage.lost = ["toml_types"]; a file the decoder refuses ends as a contract error code; a
  crash or an artifact parse_artifact refuses is counted and named.

    .venv/bin/python bench/conformance_toml.py [--corpus ../shared/corpus] [--verbose]
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import math
import platform
import re
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

from extractor_sandbox.errors import ExtractError
from extractor_sandbox.formats.toml import extract_toml
from extractor_sandbox.source import decode
from loom_dagster.contract.validate import parse_artifact
from loom_dagster.errors import ExtractionFailed

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
TOML_TYPES = frozenset(
    {"string", "integer", "float", "bool", "datetime", "datetime-local", "date-local", "time-local"}
)
VALUE_TYPES = {
    "string": "string",
    "integer": "integer",
    "float": "float",
    "bool": "boolean",
    "datetime": "datetime",
    "datetime-local": "datetime",
    "date-local": "date",
    "time-local": "time",
}
_PATH_PART = re.compile(r'(?:([A-Za-z0-9_-]+)|"((?:[^"\\]|\\.)*)")((?:\[\d+\])*)')
_FRACTION = re.compile(r"(\.\d{6})\d+")

Path_ = tuple[str | int, ...]


def gold_leaves(node: Any, prefix: Path_ = ()) -> list[tuple[Path_, str, Any]]:
    """(path with indices, gold type, gold value) of each leaf of toml-test's tagged JSON."""
    if isinstance(node, dict):
        if set(node) == {"type", "value"} and node.get("type") in TOML_TYPES:
            if not isinstance(node["value"], (dict, list)):
                return [(prefix, node["type"], node["value"])]
        if not node:
            return [(prefix, "table", {})] if prefix else []  # an empty document has no leaf
        leaves: list[tuple[Path_, str, Any]] = []
        for key, item in node.items():
            leaves += gold_leaves(item, prefix + (key,))
        return leaves
    if isinstance(node, list):
        if not node:
            return [(prefix, "array", [])]
        leaves = []
        for index, item in enumerate(node):
            leaves += gold_leaves(item, prefix + (index,))
        return leaves
    raise ValueError(f"unexpected gold node at {prefix}: {node!r}")


def parse_key_path(rendered: str) -> Path_:
    """The parts and indices of a rendered key path such as servers[1]."name x"."""
    path: list[str | int] = []
    pos = 0
    while pos < len(rendered):
        match = _PATH_PART.match(rendered, pos)
        if match is None:
            raise ValueError(f"cannot read key path {rendered!r} at {pos}")
        bare, quoted, indices = match.groups()
        if bare is not None:
            path.append(bare)
        else:
            path.append(tomllib.loads(f'k = "{quoted}"')["k"])
        path += [int(index) for index in re.findall(r"\[(\d+)\]", indices)]
        pos = match.end()
        if pos < len(rendered):
            if rendered[pos] != ".":
                raise ValueError(f"cannot read key path {rendered!r} at {pos}")
            pos += 1
    return tuple(path)


def render_index_free(path: Path_) -> str:
    """The path's parts as TOML writes a dotted key: bare when it can be, else a basic string."""
    return ".".join(
        part if re.fullmatch(r"[A-Za-z0-9_-]+", part) else json.dumps(part, ensure_ascii=False)
        for part in path
        if isinstance(part, str)
    )


def _iso(text: str) -> str:
    return _FRACTION.sub(r"\1", text.replace("z", "Z").replace("t", "T").replace(" ", "T"))


def scalar_matches(gold_type: str, gold: Any, ours: Any) -> bool:
    """Whether our JSON value is the gold's value with its type."""
    try:
        if gold_type == "string":
            return isinstance(ours, str) and ours == gold
        if gold_type == "integer":
            return isinstance(ours, int) and not isinstance(ours, bool) and ours == int(gold)
        if gold_type == "bool":
            return isinstance(ours, bool) and ours == (gold == "true")
        if gold_type == "float":
            number = float(gold)
            if math.isnan(number):
                return ours == "nan"
            if math.isinf(number):
                return ours == ("inf" if number > 0 else "-inf")
            return isinstance(ours, float) and ours == number
        if not isinstance(ours, str):
            return False
        if gold_type in ("datetime", "datetime-local"):
            ours_dt = datetime.datetime.fromisoformat(ours)
            gold_dt = datetime.datetime.fromisoformat(_iso(gold))
            aware = gold_type == "datetime"
            return (ours_dt.tzinfo is not None) == aware and ours_dt == gold_dt
        if gold_type == "date-local":
            return datetime.date.fromisoformat(ours) == datetime.date.fromisoformat(gold)
        if gold_type == "time-local":
            return datetime.time.fromisoformat(ours) == datetime.time.fromisoformat(_iso(gold))
    except ValueError:
        return False
    return False


def leaf_found(leaf: tuple[Path_, str, Any], blocks: dict[Path_, dict[str, Any]]) -> bool:
    path, gold_type, gold = leaf
    for cut in range(len(path), 0, -1):
        block = blocks.get(path[:cut])
        if block is None:
            continue
        rest = path[cut:]
        if block["type"] == "toml_table":
            return gold_type == "table" and not rest
        attrs = block.get("attrs", {})
        if "value" not in attrs:
            return False
        expected_type = (
            ("array" if isinstance(rest[0], int) else "table")
            if rest
            else VALUE_TYPES.get(gold_type, gold_type)
        )
        if attrs.get("value_type") != expected_type:
            return False
        value = attrs["value"]
        for element in rest:
            try:
                value = value[element]
            except (KeyError, IndexError, TypeError):
                return False
        if gold_type in ("array", "table"):
            return value == gold
        return scalar_matches(gold_type, gold, value)
    return False


def read(path: Path) -> tuple[dict[str, Any] | None, str]:
    """(artifact, outcome): outcome is ok, refused:<code>, crash:<error> or invalid:<rule>."""
    data = path.read_bytes()
    try:
        text = decode(data, None, fmt="toml")
        artifact = extract_toml(text, {})
    except ExtractError as error:
        return None, f"refused:{error.code}"
    except Exception as error:  # noqa: BLE001 - a crash is what this counts
        return None, f"crash:{type(error).__name__}: {error}"
    raw = json.dumps(artifact, ensure_ascii=False, allow_nan=False).encode("utf-8")
    try:
        parse_artifact(raw, expected_format="toml", original_size=len(data))
    except ExtractionFailed as error:
        return artifact, f"invalid:{error}"
    return json.loads(raw), "ok"


def reference_scorer(corpus: Path) -> Any:
    """shared/tools/docparse_score.py beside the corpus, or None when it is not there."""
    path = corpus.parent / "tools" / "docparse_score.py"
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location("docparse_score_reference", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


REFERENCE_METRICS = ("toml_key_recall", "toml_key_precision", "toml_key_f1")


def versions(corpus: Path) -> dict[str, str]:
    manifest = json.loads((corpus / "MANIFEST.json").read_text())
    return {
        entry["input"]: entry.get("toml_version", "")
        for entry in manifest["entries"]
        if entry["format"] == "toml"
    }


def share(part: int, whole: int) -> str:
    return f"{part}/{whole} = {part / whole:.4f}" if whole else f"{part}/0"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--verbose", action="store_true", help="name every miss")
    args = parser.parse_args(argv)
    corpus: Path = args.corpus
    version_of = versions(corpus)
    reference = reference_scorer(corpus)
    reference_scores: dict[str, list[float]] = {metric: [] for metric in REFERENCE_METRICS}
    started = time.perf_counter()
    problems: list[str] = []

    # Valid files
    counts = {
        name: 0
        for name in (
            "files",
            "read",
            "files_1.1",
            "rejected_1.1",
            "rejected_1.0",
            "leaves",
            "found",
            "leaves_1.0",
            "found_1.0",
            "exact_keys",
        )
    }
    valid_root = corpus / "inputs" / "toml"
    for path in sorted(valid_root.rglob("*.toml")):
        relative = path.relative_to(corpus).as_posix()
        only_11 = version_of.get(relative) == "1.1-only"
        gold_path = corpus / "gold" / "toml" / (path.relative_to(valid_root).as_posix() + ".json")
        leaves = gold_leaves(json.loads(gold_path.read_text()))
        counts["files"] += 1
        counts["files_1.1"] += only_11
        counts["leaves"] += len(leaves)
        if not only_11:
            counts["leaves_1.0"] += len(leaves)
        artifact, outcome = read(path)
        if outcome != "ok" or artifact is None:
            problems.append(f"{relative}: {outcome}")
            continue
        if "toml_types" in artifact["coverage"]["lost"]:
            counts["rejected_1.1" if only_11 else "rejected_1.0"] += 1
            if args.verbose or not only_11:
                problems.append(f"{relative}: kept as text: {artifact['warnings'][:1]}")
            continue
        counts["read"] += 1
        if reference is not None:
            theirs = reference.score(
                reference.load_gold(str(gold_path), "toml"), reference.load_artifact(artifact)
            )
            for metric in REFERENCE_METRICS:
                if theirs.get(metric) is not None:
                    reference_scores[metric].append(theirs[metric])
        blocks = {
            parse_key_path(block["locator"]["key_path"]): block
            for block in artifact["blocks"]
            if block["type"] in ("toml_key", "toml_table")
        }
        all_keys = {key for block in artifact["blocks"] for key in block["keys"]}
        for leaf in leaves:
            if leaf_found(leaf, blocks):
                counts["found"] += 1
                counts["found_1.0"] += 0 if only_11 else 1
            else:
                problems.append(f"{relative}: leaf {leaf} not found with its value and type")
            if render_index_free(leaf[0]) in all_keys:
                counts["exact_keys"] += 1

    # Invalid files
    invalid = {"files": 0, "as_text": 0, "refused": 0, "read_as_valid": 0, "crash": 0}
    refusals: dict[str, int] = {}
    for path in sorted((corpus / "inputs" / "toml_invalid").rglob("*.toml")):
        relative = path.relative_to(corpus).as_posix()
        invalid["files"] += 1
        artifact, outcome = read(path)
        if outcome.startswith("refused:"):
            invalid["refused"] += 1
            refusals[outcome] = refusals.get(outcome, 0) + 1
        elif outcome.startswith("crash:") or artifact is None:
            invalid["crash"] += 1
            problems.append(f"{relative}: {outcome}")
        elif outcome != "ok":
            problems.append(f"{relative}: {outcome}")
        elif "toml_types" in artifact["coverage"]["lost"] and all(
            block["type"] == "paragraph" for block in artifact["blocks"]
        ):
            invalid["as_text"] += 1
        else:
            invalid["read_as_valid"] += 1
            problems.append(f"{relative}: invalid file read as TOML")
    elapsed = time.perf_counter() - started

    print(f"TOML conformance, toml-test (shared corpus), python {platform.python_version()}")
    print(f"valid files: {counts['files']}")
    print(f"  read as TOML:                        {share(counts['read'], counts['files'])}")
    print(
        f"  rejected by tomllib, 1.1-only files: {counts['rejected_1.1']}"
        f" (of {counts['files_1.1']} 1.1-only files)"
    )
    print(f"  rejected by tomllib, 1.0 files:      {counts['rejected_1.0']}")
    print(f"  key paths with value and type, all:  {share(counts['found'], counts['leaves'])}")
    print(
        f"  key paths with value and type, 1.0:  {share(counts['found_1.0'], counts['leaves_1.0'])}"
    )
    print(f"  key paths exactly a block's key:     {share(counts['exact_keys'], counts['leaves'])}")
    if reference is None:
        print(f"  reference scorer: not found beside {corpus}")
    for metric, values in reference_scores.items():
        if values:
            mean = sum(values) / len(values)
            print(f"  reference {metric + ':':<26}{mean:.4f} ({len(values)} files)")
    print(f"invalid files: {invalid['files']}")
    print(f"  kept as paragraphs, toml_types lost: {share(invalid['as_text'], invalid['files'])}")
    print(f"  refused by the decoder (a contract code): {invalid['refused']} {refusals}")
    print(f"  read as valid TOML:                  {invalid['read_as_valid']}")
    print(f"  crashes:                             {invalid['crash']}")
    invalid_artifacts = sum(": invalid:" in problem for problem in problems)
    print(f"artifacts parse_artifact refused:      {invalid_artifacts}")
    print(f"time: {elapsed:.1f} s")
    if problems:
        print("\nmisses:")
        for problem in problems:
            print(f"  {problem}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
