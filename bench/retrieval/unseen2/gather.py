"""Copies the second tuning set's documents (issue 35) out of fetched repository snapshots into
docs/<format>/ and writes sources.json: each file's repository, commit, path, licence, size and
SHA-256.

    .venv/bin/python bench/retrieval/unseen2/gather.py   # needs the snapshots under /work/.mirror
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
MIRROR = Path("/work/.mirror")
PDFPLUMBER = "MIT (the repository); the PDFs are public records (US federal, state and local agencies; a Québec town council's minutes) kept there as parser test fixtures"
READXL = "MIT (the repository); example workbooks of the readxl package"
PDDL = "ODC-PDDL-1.0"
UNSTRUCTURED = "Apache-2.0 (the repository); example documents kept there as parser test fixtures (a company's published report, an SEC filing, a sample slide)"
# (repository, commit, path in it, path under docs/, licence)
FILES = [
    (
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "examples/pdfs/ca-warn-report.pdf",
        "pdf/pdfplumber_ca-warn-report.pdf",
        PDFPLUMBER,
    ),
    (
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "tests/pdfs/nics-background-checks-2015-11.pdf",
        "pdf/pdfplumber_nics-background-checks-2015-11.pdf",
        PDFPLUMBER,
    ),
    (
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "tests/pdfs/senate-expenditures.pdf",
        "pdf/pdfplumber_senate-expenditures.pdf",
        PDFPLUMBER,
    ),
    (
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "tests/pdfs/la-precinct-bulletin-2014-p1.pdf",
        "pdf/pdfplumber_la-precinct-bulletin-2014-p1.pdf",
        PDFPLUMBER,
    ),
    (
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "tests/pdfs/150109DSP-Milw-505-90D.pdf",
        "pdf/pdfplumber_150109DSP-Milw-505-90D.pdf",
        PDFPLUMBER,
    ),
    (
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "tests/pdfs/cupertino_usd_4-6-16.pdf",
        "pdf/pdfplumber_cupertino_usd_4-6-16.pdf",
        PDFPLUMBER,
    ),
    (
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "examples/pdfs/ag-energy-round-up-2017-02-24.pdf",
        "pdf/pdfplumber_ag-energy-round-up-2017-02-24.pdf",
        PDFPLUMBER,
    ),
    (
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "examples/pdfs/san-jose-pd-firearm-sample.pdf",
        "pdf/pdfplumber_san-jose-pd-firearm-sample.pdf",
        PDFPLUMBER,
    ),
    (
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "tests/pdfs/scotus-transcript-p1.pdf",
        "pdf/pdfplumber_scotus-transcript-p1.pdf",
        PDFPLUMBER,
    ),
    (
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "tests/pdfs/2023-06-20-PV.pdf",
        "pdf/pdfplumber_2023-06-20-PV.pdf",
        PDFPLUMBER,
    ),
    (
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "tests/pdfs/federal-register-2020-17221.pdf",
        "pdf/pdfplumber_federal-register-2020-17221.pdf",
        PDFPLUMBER,
    ),
    (
        "tidyverse/readxl",
        "47f8aeac0a99eee6c6db2d64ead2225e5e3ae4af",
        "inst/extdata/datasets.xlsx",
        "xlsx/readxl_datasets.xlsx",
        READXL,
    ),
    (
        "tidyverse/readxl",
        "47f8aeac0a99eee6c6db2d64ead2225e5e3ae4af",
        "inst/extdata/deaths.xlsx",
        "xlsx/readxl_deaths.xlsx",
        READXL,
    ),
    (
        "datasets/un-locode",
        "b1309b37edea63334a819a78c22b8967f61c37ad",
        "data/subdivision-codes.csv",
        "csv/unlocode-subdivision-codes.csv",
        PDDL,
    ),
    (
        "datasets/un-locode",
        "b1309b37edea63334a819a78c22b8967f61c37ad",
        "data/function-classifiers.csv",
        "csv/unlocode-function-classifiers.csv",
        PDDL,
    ),
    (
        "datasets/un-locode",
        "b1309b37edea63334a819a78c22b8967f61c37ad",
        "data/status-indicators.csv",
        "csv/unlocode-status-indicators.csv",
        PDDL,
    ),
    (
        "datasets/dac-and-crs-code-lists",
        "4bb5a5e72f17ce8ca96b353bc0f69e5a14f80625",
        "data/sectors.csv",
        "csv/dac-sectors.csv",
        PDDL,
    ),
    (
        "datasets/dac-and-crs-code-lists",
        "4bb5a5e72f17ce8ca96b353bc0f69e5a14f80625",
        "data/channel_codes.csv",
        "csv/dac-channel-codes.csv",
        PDDL,
    ),
    (
        "datasets/dac-and-crs-code-lists",
        "4bb5a5e72f17ce8ca96b353bc0f69e5a14f80625",
        "data/recipients.csv",
        "csv/dac-recipients.csv",
        PDDL,
    ),
    (
        "Unstructured-IO/unstructured",
        "3e5482bfcdc843b5218ad98d2845b4b71ab013b7",
        "example-docs/2023-half-year-analyses-by-segment.xlsx",
        "xlsx/unstructured_2023-half-year-analyses-by-segment.xlsx",
        UNSTRUCTURED,
    ),
    (
        "Unstructured-IO/unstructured",
        "3e5482bfcdc843b5218ad98d2845b4b71ab013b7",
        "example-docs/vodafone.xlsx",
        "xlsx/unstructured_vodafone.xlsx",
        UNSTRUCTURED,
    ),
    (
        "Unstructured-IO/unstructured",
        "3e5482bfcdc843b5218ad98d2845b4b71ab013b7",
        "example-docs/example-10k-1p.html",
        "html/unstructured_example-10k-1p.html",
        UNSTRUCTURED,
    ),
    (
        "Unstructured-IO/unstructured",
        "3e5482bfcdc843b5218ad98d2845b4b71ab013b7",
        "example-docs/fake-power-point-table.pptx",
        "pptx/unstructured_fake-power-point-table.pptx",
        UNSTRUCTURED,
    ),
]


def main() -> None:
    documents = []
    for repository, commit, source, target, licence in FILES:
        git = MIRROR / repository.replace("/", "+") / "repo"
        data = subprocess.run(
            ["git", "-C", str(git), "show", f"{commit}:{source}"], check=True, capture_output=True
        ).stdout
        path = HERE / "docs" / target
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        documents.append(
            {
                "path": target,
                "repository": repository,
                "commit": commit,
                "source_path": source,
                "licence": licence,
                "bytes": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
            }
        )
    (HERE / "sources.json").write_text(
        json.dumps({"documents": documents}, indent=1, ensure_ascii=False) + "\n"
    )
    print(f"{len(documents)} documents")


if __name__ == "__main__":
    main()
