"""Writes the example folder's binary documents (a workbook and a PDF), so they can be rebuilt.

    .venv/bin/python examples/make_documents.py

openpyxl and reportlab are development dependencies; the files are committed, so running the
example needs neither.
"""

from __future__ import annotations

from pathlib import Path

from openpyxl import Workbook
from reportlab.pdfgen import canvas

DOCS = Path(__file__).resolve().parent / "docs"


def workbook(path: Path) -> None:
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Disk usage"
    sheet.append(["host", "volume", "used %", "checked"])
    for host, volume, used, checked in (
        ("invoice-worker-1", "/var/spool", 91.5, "2026-11-02"),
        ("invoice-worker-2", "/var/spool", 64.0, "2026-11-02"),
        ("ledger-db-1", "/data", 77.25, "2026-11-03"),
    ):
        sheet.append([host, volume, used, checked])
    book.save(path)


def handbook(path: Path) -> None:
    pdf = canvas.Canvas(str(path), invariant=1)
    pages = (
        ("On-call handbook", ["Who is on call, and how a page reaches them."]),
        (
            "Escalation",
            [
                "Page the secondary when the primary has not acknowledged in 15 minutes.",
                "A disk-full alert on an invoice worker is severity two.",
            ],
        ),
    )
    for title, lines in pages:
        pdf.setFont("Helvetica-Bold", 18)
        pdf.drawString(72, 760, title)
        pdf.setFont("Helvetica", 11)
        for index, line in enumerate(lines):
            pdf.drawString(72, 730 - 16 * index, line)
        pdf.showPage()
    pdf.save()


if __name__ == "__main__":
    workbook(DOCS / "runbooks" / "disk-usage.xlsx")
    handbook(DOCS / "on-call-handbook.pdf")
