"""OCR on scanned pages: the reference extractor beside the `tesseract` command, on the same images.

    .venv/bin/python bench/ocr.py [--pages 2] [--corpus ../shared/corpus]
                                  [--baseline-checkout ../loom-before]

The pages are public documents' text typeset again, so the gold is exact: the text of the first
pages of the shared corpus's PDFs (docling's test documents, MIT; read with pypdf), set in DejaVu
Sans at 11 points (a title line at 16) and rendered with Pillow at several resolutions (150, 300
and 400 pixels an inch), skews (0 and 2 degrees) and noise levels (none, and Gaussian noise of
sigma 40 on 0-255). Without the corpus, the text of this repository's README stands in.

Each image is shown on a PDF page of its own (as a JPEG, /DCTDecode, at its physical size), and
read by:
- loom: `extract_pdf` in this process, OCR warmed as the child warms it (decoding, scaling, the
  strokes painted out, Tesseract through ctypes, the words placed and laid out into blocks);
- the `tesseract` command on the image itself (`tesseract IMAGE stdout`, its default page
  segmentation, the same English model, OMP_THREAD_LIMIT=1 as the extractor's child has), started
  once per page as a program would be.
Text recall: the share of the gold's words (case-folded, as a multiset) the output holds. Pages
a second: pages over the wall-clock time of reading them, one at a time.

With --baseline-checkout, the same PDFs are read by that checkout's `extract_pdf` (its .venv),
before OCR existed: its recall and how many pages it reports failed.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from extractor_sandbox.formats import ocr  # noqa: E402
from extractor_sandbox.formats.pdf.reader import extract_pdf  # noqa: E402
from tests.extractor.pdf_build import pdf, stream  # noqa: E402

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
RESOLUTIONS = (150, 300, 400)
SKEWS = (0.0, 2.0)
NOISES = (0, 40)
PAGE_W, PAGE_H = 8.5, 11.0  # inches
MARGIN = 1.0
BODY_PT, TITLE_PT = 11, 16
LINES_A_PAGE = 36
WORD = re.compile(r"\w+")


def source_pages(corpus: Path, count: int) -> list[tuple[str, list[str]]]:
    """(title, body lines) of `count` pages of public text."""
    texts: list[str] = []
    folder = corpus / "inputs" / "pdf"
    if folder.is_dir():
        import pypdf

        for path in sorted(folder.glob("*.pdf")):
            if "right_to_left" in path.name:
                continue  # Arabic and Hebrew: the English model does not read them
            try:
                page_text = pypdf.PdfReader(path).pages[0].extract_text() or ""
            except Exception:
                continue
            words = page_text.split()
            if len(words) >= 150:
                texts.append(" ".join(words))
            if len(texts) >= count:
                break
    if len(texts) < count:
        words = (REPO / "README.md").read_text(encoding="utf-8").split()
        words = [w for w in words if w.isascii() and not set(w) & set("`|#*[]()<>")]
        for k in range(count - len(texts)):
            texts.append(" ".join(words[k * 400 : (k + 1) * 400]))
    pages = []
    width_chars = 78
    for text in texts[:count]:
        lines = textwrap.wrap(text, width_chars)
        title, body = " ".join(lines[0].split()[:6]), lines[1 : LINES_A_PAGE + 1]
        pages.append((title, body))
    return pages


def render(title: str, body: list[str], ppi: int, skew: float, noise: int) -> Any:
    from PIL import Image, ImageChops, ImageDraw, ImageFont

    image = Image.new("L", (int(PAGE_W * ppi), int(PAGE_H * ppi)), 255)
    draw = ImageDraw.Draw(image)
    left = int(MARGIN * ppi)
    y = int(MARGIN * ppi)
    draw.text((left, y), title, font=ImageFont.truetype(BOLD, TITLE_PT * ppi // 72), fill=0)
    y += int(TITLE_PT * 2 * ppi / 72)
    body_font = ImageFont.truetype(FONT, BODY_PT * ppi // 72)
    for line in body:
        draw.text((left, y), line, font=body_font, fill=0)
        y += int(BODY_PT * 1.4 * ppi / 72)
    if skew:
        image = image.rotate(skew, resample=Image.BICUBIC, fillcolor=255)
    if noise:
        grain = Image.effect_noise(image.size, noise)
        image = ImageChops.add(image, grain, scale=1.0, offset=-128)
    return image


def page_pdf(jpeg: bytes, width: int, height: int) -> bytes:
    """One letter page showing the JPEG over the whole page."""
    image = stream(
        jpeg,
        b"/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray"
        b" /BitsPerComponent 8 /Filter /DCTDecode" % (width, height),
    )
    content = b"q %g 0 0 %g 0 0 cm /Im0 Do Q" % (PAGE_W * 72, PAGE_H * 72)
    return pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
            b" /Resources << /XObject << /Im0 5 0 R >> >> >>",
            stream(content),
            image,
        ]
    )


def recall(gold: str, text: str) -> float:
    want = Counter(WORD.findall(gold.casefold()))
    got = Counter(WORD.findall(text.casefold()))
    total = sum(want.values())
    return sum((want & got).values()) / total if total else 1.0


def artifact_text(artifact: dict[str, Any]) -> str:
    parts = [block["text"] for block in artifact.get("blocks", [])]
    for table in artifact.get("tables", []):
        parts.extend(c["name"] for c in table.get("columns", []))
    return "\n".join(parts)


def run_tesseract(path: Path) -> str:
    finished = subprocess.run(
        ["tesseract", str(path), "stdout"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_THREAD_LIMIT": "1"},
        check=False,
    )
    return finished.stdout


BASELINE_SCRIPT = """
import json, sys
from extractor_sandbox.formats.pdf.reader import extract_pdf
out = []
for path in sys.argv[1:]:
    a = extract_pdf(open(path, "rb").read(), {}, name="scan.pdf")
    out.append({"text": "\\n".join(b["text"] for b in a["blocks"]),
                "failed": len(a["coverage"]["failed"])})
print(json.dumps(out))
"""


def baseline(checkout: Path, paths: list[Path]) -> list[dict[str, Any]]:
    python = checkout / ".venv" / "bin" / "python"
    finished = subprocess.run(
        [str(python), "-c", BASELINE_SCRIPT, *map(str, paths)],
        capture_output=True,
        text=True,
        cwd=checkout,
        env={**os.environ, "PYTHONPATH": str(checkout)},
        timeout=3600,
        check=True,
    )
    result: list[dict[str, Any]] = json.loads(finished.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=2, help="source pages per condition")
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    parser.add_argument("--baseline-checkout", type=Path, help="a checkout from before OCR")
    args = parser.parse_args()
    if shutil.which("tesseract") is None:
        print("the tesseract command is not installed (scripts/setup installs it as root)")
        return 2
    ocr.warm_ocr({}, lazy=False)
    if ocr._engine is None:
        print(f"OCR cannot start: {ocr._engine_error}")
        return 2
    pages = source_pages(args.corpus, args.pages)
    rows: list[tuple[str, float, float, float, float, int]] = []
    totals = {"loom": [0.0, 0.0], "cli": [0.0, 0.0]}  # recall sum, seconds
    pdfs: list[tuple[Path, str]] = []
    with tempfile.TemporaryDirectory(prefix="loom-ocr-bench-") as scratch:
        work = Path(scratch)
        for ppi in RESOLUTIONS:
            for skew in SKEWS:
                for noise in NOISES:
                    loom_r = cli_r = loom_s = cli_s = 0.0
                    for k, (title, body) in enumerate(pages):
                        gold = "\n".join([title, *body])
                        image = render(title, body, ppi, skew, noise)
                        png = work / f"p{ppi}-{skew:g}-{noise}-{k}.png"
                        image.save(png, dpi=(ppi, ppi))
                        buffer = io.BytesIO()
                        image.save(buffer, format="JPEG", quality=90)
                        document = page_pdf(buffer.getvalue(), *image.size)
                        pdf_path = png.with_suffix(".pdf")
                        pdf_path.write_bytes(document)
                        pdfs.append((pdf_path, gold))
                        started = time.perf_counter()
                        artifact = extract_pdf(document, {}, name="scan.pdf")
                        loom_s += time.perf_counter() - started
                        loom_r += recall(gold, artifact_text(artifact))
                        started = time.perf_counter()
                        text = run_tesseract(png)
                        cli_s += time.perf_counter() - started
                        cli_r += recall(gold, text)
                    n = len(pages)
                    label = f"{ppi} ppi, skew {skew:g}°, noise {noise}"
                    rows.append((label, loom_r / n, cli_r / n, n / loom_s, n / cli_s, n))
                    totals["loom"][0] += loom_r
                    totals["loom"][1] += loom_s
                    totals["cli"][0] += cli_r
                    totals["cli"][1] += cli_s
        before: list[dict[str, Any]] | None = None
        if args.baseline_checkout:
            before = baseline(args.baseline_checkout.resolve(), [p for p, _ in pdfs])
    count = sum(row[5] for row in rows)
    load = os.getloadavg()
    print(
        f"machine: {os.cpu_count()} cores, load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f};"
        f" Tesseract {ocr._engine.version}; {count} pages ({len(pages)} a condition)"
    )
    print()
    print("| condition | loom recall | tesseract recall | loom pages/s | tesseract pages/s |")
    print("|---|---|---|---|---|")
    for label, lr, cr, lp, cp, _ in rows:
        print(f"| {label} | {lr:.3f} | {cr:.3f} | {lp:.2f} | {cp:.2f} |")
    print(
        f"| **all** | **{totals['loom'][0] / count:.3f}** | **{totals['cli'][0] / count:.3f}**"
        f" | **{count / totals['loom'][1]:.2f}** | **{count / totals['cli'][1]:.2f}** |"
    )
    if before is not None:
        r = sum(recall(gold, b["text"]) for b, (_, gold) in zip(before, pdfs, strict=True))
        failed = sum(1 for b in before if b["failed"])
        print()
        print(
            f"baseline {args.baseline_checkout}: recall {r / count:.3f},"
            f" {failed} of {count} pages reported failed (no OCR)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
