"""Parsing speed of the reference extractor's text formats, in MB/s.

For each format: the shared corpus's inputs of that format, and one large generated file,
each parsed in this process by the extractor's own code path (detection, strict decoding,
the parser), so the figure is the parser's, not the child process's start-up.

    .venv/bin/python bench/extract_speed.py --format markdown --format text
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import time
from collections.abc import Callable
from pathlib import Path

from extractor_sandbox.errors import ExtractError
from extractor_sandbox.source import extract

SHARED = Path(__file__).resolve().parents[2] / "shared"
CORPUS_FOLDER = {"markdown": "md", "html": "html", "sql": "sql", "toml": "toml", "csv": "csv"}
WORDS = "ledger invoice account retention schema partition revision chunk citation".split()


def prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def big_markdown(rng: random.Random, size: int) -> str:
    parts, n = [], 0
    while sum(map(len, parts)) < size:
        n += 1
        parts.append(
            f"## Section {n}\n\n{prose(rng, 60)}\n\n- {prose(rng, 8)}\n- {prose(rng, 8)}\n\n"
            f"```python\nprint({n})\n```\n\n"
        )
    return "".join(parts)


def big_text(rng: random.Random, size: int) -> str:
    parts: list[str] = []
    while sum(map(len, parts)) < size:
        parts.append(prose(rng, 80) + "\n" + prose(rng, 40) + "\n\n")
    return "".join(parts)


def big_html(rng: random.Random, size: int) -> str:
    parts = ["<html><head><title>Big</title></head><body>"]
    while sum(map(len, parts)) < size:
        parts.append(
            f"<h2>{prose(rng, 3)}</h2><p>{prose(rng, 60)}</p><table><tr><th>a</th><th>b</th></tr>"
            f"<tr><td>{prose(rng, 2)}</td><td>{rng.randint(0, 999)}</td></tr></table>"
        )
    return "".join(parts) + "</body></html>"


def big_sql(rng: random.Random, size: int) -> str:
    parts: list[str] = []
    n = 0
    while sum(map(len, parts)) < size:
        n += 1
        parts.append(
            f"CREATE TABLE analytics.events_{n} (id BIGINT, name TEXT);\n"
            f"INSERT INTO analytics.events_{n} SELECT id, name FROM staging.raw_{n} WHERE id > {n};\n"
        )
    return "".join(parts)


def big_toml(rng: random.Random, size: int) -> str:
    parts: list[str] = []
    n = 0
    while sum(map(len, parts)) < size:
        n += 1
        parts.append(
            f'# service {n}\n[service_{n}]\nname = "{prose(rng, 3)}"\nport = {rng.randint(1, 65535)}\n'
            f'tags = ["a", "b"]\n\n'
        )
    return "".join(parts)


def big_csv(rng: random.Random, size: int) -> str:
    parts = ["invoice,customer,amount,due\n"]
    n = 0
    while sum(map(len, parts)) < size:
        n += 1
        parts.append(
            f"INV-{n},{prose(rng, 2)},{rng.randint(1, 99999) / 100},2026-{n % 12 + 1:02d}-01\n"
        )
    return "".join(parts)


GENERATORS: dict[str, tuple[str, Callable[[random.Random, int], str]]] = {
    "markdown": (".md", big_markdown),
    "text": (".txt", big_text),
    "html": (".html", big_html),
    "sql": (".sql", big_sql),
    "toml": (".toml", big_toml),
    "csv": (".csv", big_csv),
}


def parse_rate(files: list[tuple[str, bytes]], fmt: str) -> tuple[float, float, int]:
    size = sum(len(data) for _, data in files)
    refused = 0
    try:  # the parser's imports are not its speed
        extract(files[0][1][:1000], fmt, files[0][0], {})
    except ExtractError:
        pass
    started = time.perf_counter()
    for name, data in files:
        try:
            extract(data, fmt, name, {})
        except ExtractError:
            refused += 1
    elapsed = time.perf_counter() - started
    return size / 1e6, size / 1e6 / elapsed, refused


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--format", action="append", dest="formats", required=True)
    parser.add_argument("--size-mb", type=float, default=20.0)
    args = parser.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    print(f"{'format':<10}{'input':<12}{'MB':>8}{'MB/s':>8}  refused")
    for fmt in args.formats:
        suffix, generate = GENERATORS[fmt]
        folder = SHARED / "corpus" / "inputs" / CORPUS_FOLDER.get(fmt, fmt)
        if folder.is_dir():
            corpus = [(p.name, p.read_bytes()) for p in sorted(folder.rglob("*")) if p.is_file()]
            mb, rate, refused = parse_rate(corpus, fmt)
            print(f"{fmt:<10}{'corpus':<12}{mb:>8.2f}{rate:>8.2f}  {refused}")
        big = generate(random.Random(7), int(args.size_mb * 1e6)).encode()
        mb, rate, refused = parse_rate([(f"big{suffix}", big)], fmt)
        print(f"{fmt:<10}{'generated':<12}{mb:>8.2f}{rate:>8.2f}  {refused}")


if __name__ == "__main__":
    main()
