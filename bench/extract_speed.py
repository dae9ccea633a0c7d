"""Parsing speed of the reference extractor's text formats, in MB/s.

For each format: the shared corpus's inputs of that format, and one large generated file,
each parsed in this process by the extractor's own code path (detection, strict decoding,
the parser), so the figure is the parser's, not the child process's start-up; beside it, in the
same run, a baseline reading the same text without structure or citations (the standard
library's csv, html.parser and tomllib, str.splitlines, sqlglot.parse; none for Markdown).
The readers take turns, round after round, and each one's median is kept; "x base (CPU)" is its
CPU time over the baseline's (CPU time, since on a shared machine wall time is mostly waiting).

    .venv/bin/python bench/extract_speed.py --format markdown --format text
"""

from __future__ import annotations

import argparse
import csv
import html.parser
import io
import os
import platform
import random
import time
import tomllib
from collections.abc import Callable
from pathlib import Path

import sqlglot

from extractor_sandbox.source import extract

SHARED = Path(__file__).resolve().parents[2] / "shared"
CORPUS_FOLDER = {"markdown": "md", "html": "html", "sql": "sql", "toml": "toml", "csv": "csv"}
WORDS = "ledger invoice account retention schema partition revision chunk citation".split()


def prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


class Parts(list[str]):
    """A list of text parts that keeps its total length (summing it each time was quadratic)."""

    chars = 0

    def append(self, part: str) -> None:
        super().append(part)
        self.chars += len(part)


def big_markdown(rng: random.Random, size: int) -> str:
    parts, n = Parts(), 0
    while parts.chars < size:
        n += 1
        parts.append(
            f"## Section {n}\n\n{prose(rng, 60)}\n\n- {prose(rng, 8)}\n- {prose(rng, 8)}\n\n"
            f"```python\nprint({n})\n```\n\n"
        )
    return "".join(parts)


def big_text(rng: random.Random, size: int) -> str:
    parts = Parts()
    while parts.chars < size:
        parts.append(prose(rng, 80) + "\n" + prose(rng, 40) + "\n\n")
    return "".join(parts)


def big_html(rng: random.Random, size: int) -> str:
    parts = Parts()
    parts.append("<html><head><title>Big</title></head><body>")
    while parts.chars < size:
        parts.append(
            f"<h2>{prose(rng, 3)}</h2><p>{prose(rng, 60)}</p><table><tr><th>a</th><th>b</th></tr>"
            f"<tr><td>{prose(rng, 2)}</td><td>{rng.randint(0, 999)}</td></tr></table>"
        )
    return "".join(parts) + "</body></html>"


def big_sql(rng: random.Random, size: int) -> str:
    parts = Parts()
    n = 0
    while parts.chars < size:
        n += 1
        parts.append(
            f"CREATE TABLE analytics.events_{n} (id BIGINT, name TEXT);\n"
            f"INSERT INTO analytics.events_{n} SELECT id, name FROM staging.raw_{n} WHERE id > {n};\n"
        )
    return "".join(parts)


def big_toml(rng: random.Random, size: int) -> str:
    parts = Parts()
    n = 0
    while parts.chars < size:
        n += 1
        parts.append(
            f'# service {n}\n[service_{n}]\nname = "{prose(rng, 3)}"\nport = {rng.randint(1, 65535)}\n'
            f'tags = ["a", "b"]\n\n'
        )
    return "".join(parts)


def big_csv(rng: random.Random, size: int) -> str:
    parts = Parts()
    parts.append("invoice,customer,amount,due\n")
    n = 0
    while parts.chars < size:
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


def html_baseline(text: str) -> object:
    parser = html.parser.HTMLParser()
    parser.feed(text)
    parser.close()
    return parser


# The baseline beside each format, in the same run: what a script would reach for to read the same
# text without structure or citations (none is at hand for Markdown here).
BASELINES: dict[str, tuple[str, Callable[[str], object]]] = {
    "text": ("str.splitlines", str.splitlines),
    "html": ("html.parser", html_baseline),
    "toml": ("tomllib.loads", tomllib.loads),
    "sql": ("sqlglot.parse", sqlglot.parse),
    "csv": ("csv.reader", lambda text: list(csv.reader(io.StringIO(text)))),
}


def ours(fmt: str) -> Callable[[str, bytes], object]:
    return lambda name, data: extract(data, fmt, name, {})


def baseline(fmt: str) -> Callable[[str, bytes], object]:
    read = BASELINES[fmt][1]
    return lambda name, data: read(data.decode("utf-8"))


def _warm(files: list[tuple[str, bytes]], read: Callable[[str, bytes], object]) -> None:
    try:  # the parser's imports are not its speed
        read(files[0][0], files[0][1][:1000])
    except Exception:  # noqa: BLE001 - a cut file may not parse; only the imports matter here
        pass


def _one_pass(
    files: list[tuple[str, bytes]], read: Callable[[str, bytes], object]
) -> tuple[float, float, int]:
    """Wall and CPU seconds for reading every file once, and how many were refused."""
    refused = 0
    wall, cpu = time.perf_counter(), time.process_time()
    for name, data in files:
        try:
            read(name, data)
        except Exception:  # noqa: BLE001 - counted: ours refuses, a baseline may raise
            refused += 1
    return time.perf_counter() - wall, time.process_time() - cpu, refused


def interleaved(
    files: list[tuple[str, bytes]], readers: list[Callable[[str, bytes], object]], rounds: int
) -> list[tuple[float, float, int]]:
    """Each reader's median wall and CPU seconds over `rounds`, the readers taking turns in each
    round, so a burst of other work on a shared machine falls on all of them alike."""
    for read in readers:
        _warm(files, read)
    runs: list[list[tuple[float, float, int]]] = [[] for _ in readers]
    for _ in range(rounds):
        for index, read in enumerate(readers):
            runs[index].append(_one_pass(files, read))
    result = []
    for found in runs:
        walls = sorted(wall for wall, _, _ in found)
        cpus = sorted(cpu for _, cpu, _ in found)
        result.append((walls[len(walls) // 2], cpus[len(cpus) // 2], found[0][2]))
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--format", action="append", dest="formats", required=True)
    parser.add_argument("--size-mb", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (median kept)")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()},"
        f" load {load:.1f}; medians of {args.rounds} interleaved rounds"
    )
    print(
        f"{'format':<10}{'input':<11}{'reader':<16}{'MB':>7}{'MB/s':>8}{'CPU MB/s':>10}"
        f"{'x base (CPU)':>14}  refused"
    )
    for fmt in args.formats:
        suffix, generate = GENERATORS[fmt]
        inputs = []
        folder = SHARED / "corpus" / "inputs" / CORPUS_FOLDER.get(fmt, fmt)
        if folder.is_dir():
            corpus = [(p.name, p.read_bytes()) for p in sorted(folder.rglob("*")) if p.is_file()]
            inputs.append(("corpus", corpus))
        big = generate(random.Random(7), int(args.size_mb * 1e6)).encode()
        inputs.append(("generated", [(f"big{suffix}", big)]))
        readers = [("loom", ours(fmt))]
        if fmt in BASELINES:
            readers.append((BASELINES[fmt][0], baseline(fmt)))
        for kind, files in inputs:
            mb = sum(len(data) for _, data in files) / 1e6
            timed = interleaved(files, [read for _, read in readers], args.rounds)
            base_cpu = timed[-1][1] if len(readers) > 1 else float("nan")
            for (reader_name, _), (wall, cpu, refused) in zip(readers, timed, strict=True):
                print(
                    f"{fmt:<10}{kind:<11}{reader_name:<16}{mb:>7.2f}{mb / wall:>8.2f}"
                    f"{mb / cpu:>10.2f}{cpu / base_cpu:>14.2f}  {refused}"
                )


if __name__ == "__main__":
    main()
