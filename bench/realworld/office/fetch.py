"""Copy the bench's documents and their gold from a local clone of pandoc, and convert the gold.

    python bench/realworld/office/fetch.py PANDOC_GIT_DIR [--commit SHA]

Pandoc (GPL-2.0-or-later; data only, no code of it is copied) publishes, for its DOCX reader, test
documents `test/docx/<name>.docx` with the AST it must read from each, `<name>.native`; for its
DOCX writer, documents `test/docx/golden/<name>.docx` written from the natives its tests name
(copied as `written__<name>.docx`); and for its PPTX writer, decks
`test/pptx/<case>/output.pptx` written from `<case>/input.native`. Both
natives are copied as they are (`*.native`) and turned into docparse-gold JSON by
pandoc_gold.py (`*.gold.json`); MANIFEST.json names each file's source path and commit.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from pandoc_gold import convert  # noqa: E402

DATA = HERE / "data"
MAX_FILE = 512 * 1024  # keep the copy small


def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", str(repo), *args], check=True, capture_output=True
    ).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--commit", default="HEAD")
    args = parser.parse_args()
    commit = git(args.repo, "rev-parse", args.commit).decode().strip()
    names = git(args.repo, "ls-tree", "-r", "--name-only", commit, "test/docx", "test/pptx")
    paths = set(names.decode().splitlines())
    pairs: list[tuple[str, str, str, str]] = []  # format, document, native, local name
    for path in sorted(paths):
        if path.startswith("test/docx/") and path.count("/") == 2 and path.endswith(".docx"):
            native = path[: -len(".docx")] + ".native"
            if native in paths:
                pairs.append(("docx", path, native, Path(path).name))
        elif path.startswith("test/pptx/") and path.endswith("/output.pptx"):
            native = path[: -len("output.pptx")] + "input.native"
            if native in paths:
                case = path[len("test/pptx/") : -len("/output.pptx")].replace("/", "__")
                pairs.append(("pptx", path, native, f"{case}.pptx"))
    # The DOCX writer's tests: test/Tests/Writers/Docx.hs pairs each native input with the
    # document pandoc writes from it (docx/golden/<name>.docx).
    writer_tests = git(args.repo, "show", f"{commit}:test/Tests/Writers/Docx.hs").decode()
    for native, golden in re.findall(
        r'"(docx/[^"]+\.native)"\s*"(docx/golden/[^"]+\.docx)"', writer_tests
    ):
        if f"test/{native}" in paths and f"test/{golden}" in paths:
            local = "written__" + Path(golden).name
            pairs.append(("docx", f"test/{golden}", f"test/{native}", local))
    manifest = []
    for fmt, document, native, local in pairs:
        data = git(args.repo, "show", f"{commit}:{document}")
        text = git(args.repo, "show", f"{commit}:{native}").decode("utf-8")
        if len(data) > MAX_FILE:
            continue
        try:
            gold = convert(text, fmt)
        except (ValueError, IndexError, AttributeError) as error:
            print(f"skipped {document}: its native cannot be read ({error})")
            continue
        gold["source"] = f"jgm/pandoc@{commit}:{native}"
        out = DATA / fmt / local
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
        out.with_name(local + ".native").write_text(text, encoding="utf-8")
        out.with_name(local + ".gold.json").write_text(
            json.dumps(gold, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
        )
        manifest.append(
            {
                "input": f"{fmt}/{local}",
                "gold": f"{fmt}/{local}.gold.json",
                "repo": "jgm/pandoc",
                "commit": commit,
                "path": document,
                "gold_path": native,
                "licence": "GPL-2.0-or-later",
            }
        )
    (DATA / "MANIFEST.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(f"{len(manifest)} documents from jgm/pandoc@{commit}")


if __name__ == "__main__":
    main()
