"""Copies the unseen set's documents out of local snapshots of public repositories (the session's
`fetch` mirrors) into docs/, and writes sources.json: each document's repository, commit, path,
licence, size and SHA-256. Run once; the copies are committed, so the bench never needs it.

    python bench/retrieval/unseen/gather.py /work/.mirror
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
LIMIT = 3 * 1024 * 1024

READABILITY_NOTE = (
    "Apache-2.0 (the repository); the page itself is a third-party news or blog page kept there "
    "as a parser test fixture"
)
DATASETS = "ODC-PDDL-1.0"

# (repository, licence, [(path in repository, target under docs/)])
PLAN: list[tuple[str, str, list[tuple[str, str]]]] = [
    (
        "mozilla/readability",
        READABILITY_NOTE,
        [
            (f"test/test-pages/{name}/source.html", f"html/{name}.html")
            for name in (
                "aclu ars-1 bbc-1 blogger buzzfeed-1 citylab-1 cnet cnn daringfireball-1 "
                "dropbox-blog ebb-org ehow-1 engadget firefox-nightly-blog gitlab-blog "
                "google-sre-book-1 heise herald-sun-1 iab-1 ietf-1 la-nacion lemonde-1 "
                "liberation-1 lwn-1 medicalnewstoday medium-1 mercurial mozilla-1 nytimes-1 "
                "quanta-1 salon-1 seattletimes-1 spiceworks telegraph theverge tmz-1 v8-blog "
                "wapo-1 webmd-1 wikipedia-3 wordpress folha aktualne ehow-2 medium-2 mozilla-2 nytimes-2 "
                "wapo-2 webmd-2 yahoo-4 topicseed-1 lifehacker-working simplyfound-1 tumblr royal-road"
            ).split()
        ],
    ),
    (
        "microsoft/markitdown",
        "MIT",
        [
            (f"packages/markitdown/tests/test_files/{name}", f"{kind}/markitdown_{name}")
            for kind, name in (
                ("html", "test_blog.html"),
                ("html", "test_wikipedia.html"),
                ("html", "test_serp.html"),
                ("docx", "test.docx"),
                ("docx", "test_with_comment.docx"),
                ("docx", "rlink.docx"),
                ("pptx", "test.pptx"),
                ("xlsx", "test.xlsx"),
                ("pdf", "REPAIR-2022-INV-001_multipage.pdf"),
                ("pdf", "RECEIPT-2024-TXN-98765_retail_purchase.pdf"),
                ("pdf", "SPARSE-2024-INV-1234_borderless_table.pdf"),
                ("pdf", "movie-theater-booking-2024.pdf"),
                ("pdf", "masterformat_partial_numbering.pdf"),
                ("pdf", "test.pdf"),
            )
        ]
        + [("packages/markitdown/pyproject.toml", "toml/markitdown_pyproject.toml")],
    ),
    (
        "docling-project/docling",
        "MIT",
        [("pyproject.toml", "toml/docling_pyproject.toml")],
    ),
    (
        "scanny/python-pptx",
        "MIT",
        [
            (f"features/steps/test_files/{name}", f"pptx/python-pptx_{name}")
            for name in (
                "prs-notes.pptx",
                "tbl-cell.pptx",
                "ph-populated-placeholders.pptx",
                "shp-shapes.pptx",
            )
        ]
        + [
            (
                "features/steps/test_files/shp-embedded-xlsx.xlsx",
                "xlsx/python-pptx_shp-embedded-xlsx.xlsx",
            )
        ],
    ),
    (
        "python-openxml/python-docx",
        "MIT",
        [
            (f"features/steps/test_files/{name}", f"docx/python-docx_{name}")
            for name in (
                "tbl-having-tables.docx",
                "par-known-paragraphs.docx",
                "blk-paras-and-tables.docx",
            )
        ],
    ),
    (
        "tabulapdf/tabula-java",
        "MIT (the repository); the PDFs are EU and US government publications kept as table-extraction fixtures (ICDAR 2013 table competition)",
        [
            (
                f"src/test/resources/technology/tabula/icdar2013-dataset/competition-dataset-eu/eu-{n}.pdf",
                f"pdf/eu-{n}.pdf",
            )
            for n in "001 002 003 004 005 006 007 008 009a 010 013 014 015 016 017 018 019 020 021 022 023 024 025 026 027".split()
        ]
        + [
            (
                f"src/test/resources/technology/tabula/icdar2013-dataset/competition-dataset-us/us-{n}.pdf",
                f"pdf/us-{n}.pdf",
            )
            for n in "002 003 004 006 008 009 012 015 016 019 022 026 027 028 029 033 037".split()
        ]
        + [
            (f"src/test/resources/technology/tabula/{name}", f"pdf/{name}")
            for name in (
                "argentina_diputados_voting_record.pdf campaign_donors.pdf frx_2012_disclosure.pdf "
                "schools.pdf labor.pdf offense.pdf puertos1.pdf indictb1h_14.pdf 12s0324.pdf "
                "sydney_disclosure_contract.pdf S2MNCEbirdisland.pdf china.pdf cs-en-us-pbms.pdf twotables.pdf "
                "spanning_cells.pdf mednine.pdf m27.pdf Publication_of_award_of_Bids_for_Transport_Sector__August_2016.pdf "
                "20.pdf should_detect_rulings.pdf"
            ).split()
        ],
    ),
    (
        "camelot-dev/camelot",
        "MIT",
        [
            ("docs/_static/pdf/foo.pdf", "pdf/camelot_foo.pdf"),
            ("docs/_static/pdf/superscript.pdf", "pdf/camelot_superscript.pdf"),
            ("docs/benchmark/lattice/agstat/agstat.pdf", "pdf/camelot_agstat.pdf"),
            (
                "docs/benchmark/lattice/electoral_roll/electoral_roll.pdf",
                "pdf/camelot_electoral_roll.pdf",
            ),
            (
                "docs/benchmark/lattice/column_span_1/column_span_1.pdf",
                "pdf/camelot_column_span_1.pdf",
            ),
            ("docs/benchmark/lattice/row_span/row_span.pdf", "pdf/camelot_row_span.pdf"),
            ("docs/_static/pdf/group_rows.pdf", "pdf/camelot_group_rows.pdf"),
        ],
    ),
    (
        "jOOQ/sakila",
        "BSD-2-Clause",
        [
            (f"{db}-sakila-db/{db}-sakila-schema.sql", f"sql/{db}-sakila-schema.sql")
            for db in ("mysql", "postgres", "sqlite", "oracle", "sql-server", "db2", "cockroachdb")
        ]
        + [
            (
                "oracle-sakila-db/oracle-sakila-schema-pl-sql.sql",
                "sql/oracle-sakila-schema-pl-sql.sql",
            )
        ],
    ),
    (
        "datasets/country-codes",
        DATASETS,
        [
            ("data/country-codes.csv", "csv/country-codes.csv"),
            ("tmp/UNSD-es.csv", "csv/UNSD-es.csv"),
            ("tmp/UNSD-fr.csv", "csv/UNSD-fr.csv"),
        ],
    ),
    ("datasets/gdp", DATASETS, [("data/top-economies.csv", "csv/top-economies.csv")]),
    (
        "datasets/s-and-p-500-companies",
        DATASETS,
        [("data/constituents.csv", "csv/sp500-constituents.csv")],
    ),
    ("datasets/currency-codes", DATASETS, [("data/codes-all.csv", "csv/currency-codes.csv")]),
    (
        "datasets/language-codes",
        DATASETS,
        [
            ("data/language-codes-full.csv", "csv/language-codes-full.csv"),
            ("data/ietf-language-tags.csv", "csv/ietf-language-tags.csv"),
        ],
    ),
    (
        "datasets/oil-prices",
        DATASETS,
        [
            ("data/brent-monthly.csv", "csv/brent-monthly.csv"),
            ("data/wti-year.csv", "csv/wti-year.csv"),
        ],
    ),
    (
        "starship/starship",
        "ISC",
        [
            (f"docs/public/presets/toml/{name}.toml", f"toml/starship-{name}.toml")
            for name in (
                "bracketed-segments catppuccin-powerline gruvbox-rainbow jetpack nerd-font-symbols "
                "no-empty-icons no-runtime-versions pastel-powerline plain-text-symbols pure-preset "
                "tokyo-night"
            ).split()
        ]
        + [(f"{n}", f"toml/starship-{n}") for n in ("Cargo.toml", "deny.toml", "typos.toml")]
        + [
            (f"docs/{lang}/{page}README.md", f"md/starship-{lang}-{page.strip('/') or 'index'}.md")
            for lang in ("de-DE", "fr-FR", "es-ES")
            for page in (
                "",
                "faq/",
                "guide/",
                "advanced-config/",
                "installing/",
                "migrating-to-0.45.0/",
            )
        ],
    ),
]


def main() -> None:
    mirror = Path(sys.argv[1])
    docs = HERE / "docs"
    seen = {
        hashlib.sha256(p.read_bytes()).hexdigest()
        for root in (
            HERE.parents[2] / "shared",
            HERE.parents[2] / "tests",
            HERE.parents[1] / "realworld",
            HERE.parents[1] / "docparse",
        )
        if root.exists()
        for p in root.rglob("*")
        if p.is_file() and p.stat().st_size < LIMIT
    }
    manifest = []
    for repo, licence, files in PLAN:
        git = mirror / repo.replace("/", "+") / "repo"
        commit = subprocess.run(
            ["git", "-C", str(git), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        for path, target in files:
            data = subprocess.run(
                ["git", "-C", str(git), "show", f"HEAD:{path}"], capture_output=True, check=True
            ).stdout
            digest = hashlib.sha256(data).hexdigest()
            if len(data) > LIMIT or digest in seen:
                print(
                    f"skipped {repo}:{path} ({'too big' if len(data) > LIMIT else 'already used here'})"
                )
                continue
            seen.add(digest)
            out = docs / target
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
            manifest.append(
                {
                    "path": target,
                    "repository": repo,
                    "commit": commit,
                    "source_path": path,
                    "licence": licence,
                    "bytes": len(data),
                    "sha256": digest,
                }
            )
    (HERE / "sources.json").write_text(
        json.dumps({"documents": manifest}, indent=1, ensure_ascii=False) + "\n"
    )
    print(f"{len(manifest)} documents, {sum(m['bytes'] for m in manifest) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
