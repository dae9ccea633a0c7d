"""Copies the third tuning set's documents out of fetched repository snapshots into
docs/<format>/ and writes sources.json: each file's repository, commit, path, licence, size and
SHA-256.

    .venv/bin/python bench/retrieval/unseen3/gather.py   # needs the snapshots under /work/.mirror
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
MIRROR = Path("/work/.mirror")

CAMELOT = ("camelot-dev/camelot", "2b80d0bc692d1b22203c3385e77da8201675aa50")
PDFPLUMBER = ("jsvine/pdfplumber", "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a")
TABULA = ("tabulapdf/tabula-java", "2cdf3b4fd3f7e921dca8cc6814cdd9316be40f0f")
INVOICE2DATA = ("invoice-x/invoice2data", "bd2fcceb867882047173dbd66a9500f47634a0cd")
UNSTRUCTURED = ("Unstructured-IO/unstructured", "3e5482bfcdc843b5218ad98d2845b4b71ab013b7")
# The Vodafone quarterly workbook is gone from unstructured's newest tree; this commit holds it.
UNSTRUCTURED_OLD = ("Unstructured-IO/unstructured", "fc9c967204735b523874df103148e284e16baecc")
READABILITY = ("mozilla/readability", "ab4027a8b37669745016869a37a504727992b2ba")
GEOREF_ETL = ("datosgobar/georef-ar-etl", "0f75e16caf5f7242451b6394f6001c64186823e5")
# departamentos.csv and municipios.csv left georef-ar-etl's tree later; this commit holds them.
GEOREF_ETL_OLD = ("datosgobar/georef-ar-etl", "523de26118f27f145b5df9adb2fdfff3e265ce2d")
GEOREF_API = ("datosgobar/georef-ar-api", "b1911b612214a52046f031bec922dd5cb5dd7fcf")
PYDATAJSON = ("datosgobar/pydatajson", "f26e3d5928ce9d455485e03fa63a8d8741588b7a")
EU_ETS = ("datasets/eu-emissions-trading-system", "82336bc6548e09946560a295d5949ba95c4685f7")

MIT_FIXTURE = "MIT (the repository); a public document kept there as a parser test fixture"
CAMELOT_LICENCE = (
    "MIT (the repository); Indian government statistics, a UK tariff label and a Michigan "
    "county's election returns kept there as parser test fixtures"
)
INVOICE_LICENCE = "MIT (the repository); invoices kept there as extraction test fixtures"
UNSTRUCTURED_LICENCE = (
    "Apache-2.0 (the repository); example documents kept there as parser test fixtures"
)
READABILITY_LICENCE = "Apache-2.0 (the repository); a web page kept there as a test fixture"
DATOSGOBAR = "MIT (the repository, Dirección Nacional de Datos e Información Pública, Argentina)"
DATOSGOBAR_OLD = (
    "MIT (the repository's licence, added after this commit; Dirección Nacional de Datos e "
    "Información Pública, Argentina)"
)
PDDL = "ODC-PDDL-1.0 (the data package; the repository's code is Unlicense)"

# ((repository, commit), path in it, path under docs/, licence)
FILES = [
    (CAMELOT, "tests/files/assam.pdf", "pdf/camelot_assam.pdf", CAMELOT_LICENCE),
    (CAMELOT, "tests/files/budget.pdf", "pdf/camelot_budget.pdf", CAMELOT_LICENCE),
    (
        CAMELOT,
        "tests/files/district_health.pdf",
        "pdf/camelot_district_health.pdf",
        CAMELOT_LICENCE,
    ),
    (CAMELOT, "tests/files/good_energy.pdf", "pdf/camelot_good_energy.pdf", CAMELOT_LICENCE),
    (CAMELOT, "tests/files/health.pdf", "pdf/camelot_health.pdf", CAMELOT_LICENCE),
    (
        CAMELOT,
        "tests/files/population_growth.pdf",
        "pdf/camelot_population_growth.pdf",
        CAMELOT_LICENCE,
    ),
    (
        CAMELOT,
        "tests/files/rainfall_distribution.pdf",
        "pdf/camelot_rainfall_distribution.pdf",
        CAMELOT_LICENCE,
    ),
    (CAMELOT, "tests/files/row_span_3.pdf", "pdf/camelot_row_span_3.pdf", CAMELOT_LICENCE),
    (
        CAMELOT,
        "tests/files/vertical_header.pdf",
        "pdf/camelot_vertical_header.pdf",
        CAMELOT_LICENCE,
    ),
    (
        PDFPLUMBER,
        "tests/pdfs/issue-53-example.pdf",
        "pdf/pdfplumber_issue-53-example.pdf",
        MIT_FIXTURE,
    ),
    (
        PDFPLUMBER,
        "tests/pdfs/pr-138-example.pdf",
        "pdf/pdfplumber_pr-138-example.pdf",
        MIT_FIXTURE,
    ),
    (
        TABULA,
        "src/test/resources/technology/tabula/failing_sort.pdf",
        "pdf/tabula_failing_sort.pdf",
        MIT_FIXTURE,
    ),
    (
        INVOICE2DATA,
        "tests/compare/QualityHosting.pdf",
        "pdf/invoice2data_QualityHosting.pdf",
        INVOICE_LICENCE,
    ),
    (
        INVOICE2DATA,
        "tests/compare/NetpresseInvoice.pdf",
        "pdf/invoice2data_NetpresseInvoice.pdf",
        INVOICE_LICENCE,
    ),
    (
        INVOICE2DATA,
        "tests/compare/free_fiber.pdf",
        "pdf/invoice2data_free_fiber.pdf",
        INVOICE_LICENCE,
    ),
    (
        UNSTRUCTURED,
        "example-docs/language-docs/fr_olap.pdf",
        "pdf/unstructured_fr_olap.pdf",
        UNSTRUCTURED_LICENCE,
    ),
    (GEOREF_API, "docs/georef-ar-api-docs.pdf", "pdf/georef-ar-api-docs.pdf", DATOSGOBAR),
    (
        READABILITY,
        "test/test-pages/keep-tabular-data/source.html",
        "html/readability_keep-tabular-data.html",
        READABILITY_LICENCE,
    ),
    (
        READABILITY,
        "test/test-pages/wikipedia/source.html",
        "html/readability_wikipedia.html",
        READABILITY_LICENCE,
    ),
    (
        READABILITY,
        "test/test-pages/wikipedia-4/source.html",
        "html/readability_wikipedia-4.html",
        READABILITY_LICENCE,
    ),
    (
        UNSTRUCTURED,
        "test_unstructured/documents/html_files/three_tables.html",
        "html/unstructured_three_tables.html",
        UNSTRUCTURED_LICENCE,
    ),
    (GEOREF_API, "docs/communes/index.html", "html/georef-ar-api_comunas.html", DATOSGOBAR),
    (
        GEOREF_API,
        "docs/etl-install/index.html",
        "html/georef-ar-api_etl-install.html",
        DATOSGOBAR,
    ),
    (
        GEOREF_ETL_OLD,
        "data/departamentos.csv",
        "csv/georef-ar_departamentos.csv",
        DATOSGOBAR_OLD,
    ),
    (GEOREF_ETL_OLD, "data/municipios.csv", "csv/georef-ar_municipios.csv", DATOSGOBAR_OLD),
    (
        GEOREF_ETL,
        "data/iso-3166-provincias-arg.csv",
        "csv/georef-ar_iso-3166-provincias-arg.csv",
        DATOSGOBAR,
    ),
    (
        PYDATAJSON,
        "samples/series-tiempo/odg-total-millones-pesos-1960-trimestral.csv",
        "csv/odg-total-millones-pesos-1960-trimestral.csv",
        DATOSGOBAR,
    ),
    (EU_ETS, "data/eu-ets-sector-emissions.csv", "csv/eu-ets-sector-emissions.csv", PDDL),
    (
        UNSTRUCTURED_OLD,
        "example-docs/vodafone-q1-fy24-additional-information.xlsx",
        "xlsx/unstructured_vodafone-q1-fy24-additional-information.xlsx",
        UNSTRUCTURED_LICENCE,
    ),
    (
        UNSTRUCTURED,
        "example-docs/stanley-cups.xlsx",
        "xlsx/unstructured_stanley-cups.xlsx",
        UNSTRUCTURED_LICENCE,
    ),
    (
        PYDATAJSON,
        "samples/archivos-tests/excel-validos/catalogo-justicia.xlsx",
        "xlsx/pydatajson_catalogo-justicia.xlsx",
        DATOSGOBAR,
    ),
]


def main() -> None:
    documents = []
    for (repository, commit), source, target, licence in FILES:
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
    print(f"{len(documents)} documents, {sum(d['bytes'] for d in documents)} bytes")


if __name__ == "__main__":
    main()
