"""The documents the retrieval floors test ingests, written here (fixtures, not gold from others):
runbooks, SQL schemas, a TOML file, CSV and HTML tables, a PDF and plain text beside them, in
four sources with tags. Names that must be found once (stores, warehouses) are made up, so a
table question has one right row."""

from __future__ import annotations

from pathlib import Path

from tests.extractor.pdf_build import one_page, pdf, text_content

# source name -> (tags, {relative path: content})
Corpus = dict[str, tuple[tuple[str, ...], dict[str, str | bytes]]]

DISK_RUNBOOK = """\
# Disk runbook

## E-DISK-042: volume full

The data volume on a storage node is above 95 percent. Free space by rotating the ingest logs,
then expand the volume from the console. Page the storage on-call when the node holds primary
shards.

## E-DISK-043: inode exhaustion

The volume has free bytes but no free inodes, usually from millions of small temporary files.
Unlike E-DISK-042, expanding the volume does not help: delete the temporary spool directory.

## M-41: memory pressure

The node swaps under memory pressure; restart the indexing worker and lower its batch size.
"""

NETWORK_RUNBOOK = """\
# Network runbook

## E-NET-007: packet loss

Packet loss above two percent between racks. Check the top-of-rack switch counters and fail
over the uplink. A full volume on the log host (E-DISK-042) can look like packet loss in the
collector's graphs.

## Connection limits

When the application reports pool exhaustion, raise database.pool.max_connections in the
service settings, then restart the API workers one at a time.
"""

OPS_NOTES = """\
Weekly notes. The volume full alarm fired twice on the night shift; both times the ingest logs
had not rotated. Nobody filed form HW-78 this week.
"""

SCHEMA_SQL = """\
-- Customer tables
CREATE TABLE customer_accounts (
    account_id INTEGER PRIMARY KEY,
    customer_name TEXT NOT NULL,
    region TEXT,
    opened_on DATE
);

CREATE TABLE invoices (
    invoice_id INTEGER PRIMARY KEY,
    account_id INTEGER REFERENCES customer_accounts (account_id),
    amount NUMERIC(12, 2),
    issued_on DATE
);
"""

VIEWS_SQL = """\
CREATE VIEW active_customers AS
SELECT a.account_id, a.customer_name
FROM customer_accounts a
JOIN invoices i ON i.account_id = a.account_id
WHERE i.issued_on > DATE '2024-01-01';

CREATE VIEW regional_revenue AS
SELECT a.region, SUM(i.amount) AS revenue
FROM customer_accounts a
JOIN invoices i ON i.account_id = a.account_id
GROUP BY a.region;

SELECT * FROM active_customers ORDER BY customer_name;
"""

WAREHOUSE_NOTES = """\
The customer_accounts table feeds the monthly churn report; nobody reads it by hand.
"""

SETTINGS_TOML = """\
# Service settings
[server]
host = "0.0.0.0"
port = 8443

[database.pool]
max_connections = 40
idle_timeout_s = 300

[cache.pool]
max_connections = 8
"""

PLATFORM_NOTES = """\
The cache pool is small on purpose: eight connections keep the cache hosts cool.
"""

# Made-up store names: each row of the two sales tables has its own.
_SYLLABLES = ["ka", "lo", "mi", "ren", "tu", "vos", "sil", "dar", "pe", "nor", "qua", "zel"]
REGIONS = ["north", "south", "east", "west"]


def store_name(number: int) -> str:
    first = _SYLLABLES[number % 12]
    second = _SYLLABLES[(number // 12) % 12]
    return f"{first}{second}vik".capitalize() if number < 144 else f"Store{number}"


def sales_csv(first: int, rows: int, year: int) -> str:
    lines = ["store,region,month,units,revenue"]
    for offset in range(rows):
        number = first + offset
        units = 40 + (number * 37) % 300
        lines.append(
            f"{store_name(number)},{REGIONS[number % 4]},{year}-{1 + offset % 12:02d},"
            f"{units},{units * 3}.50"
        )
    return "\n".join(lines) + "\n"


WAREHOUSES_A = [("Oslund", "Bergen", 1200, "Ines Varga"), ("Pellmark", "Tromso", 800, "Ken Ode")]
WAREHOUSES_B = [("Quarrow", "Leeds", 2500, "Ada Brun"), ("Ristvale", "York", 640, "Tom Ell")]


def warehouse_html(title: str, rows: list[tuple[str, str, int, str]]) -> str:
    body = "\n".join(
        f"<tr><td>{name}</td><td>{city}</td><td>{capacity}</td><td>{manager}</td></tr>"
        for name, city, capacity, manager in rows
    )
    return (
        f"<!doctype html><html><head><title>{title}</title></head><body>\n<h1>{title}</h1>\n"
        "<table>\n<tr><th>Warehouse</th><th>City</th><th>Capacity</th><th>Manager</th></tr>\n"
        f"{body}\n</table>\n</body></html>\n"
    )


FORMS_PDF_LINES = [
    "Form HW-77: hours worked declaration",
    "Contractors file form HW-77 each month with their signed timesheet.",
    "Payroll rejects a declaration that arrives after the fifth working day.",
]

FINANCE_NOTES = """\
Quarter review. The E-DISK-042 outage on the storage cluster cost us a day of invoicing, and
the volume full alarm delayed the month-end close. Quarrow warehouse capacity doubles next
year, when the Leeds lease is renewed.
"""

SALES_2023_ROWS = 120  # long enough to be cut into several chunks
SALES_2024_ROWS = 12


def corpus() -> Corpus:
    return {
        "ops": (
            ("ops", "runbooks"),
            {
                "runbooks/disk.md": DISK_RUNBOOK,
                "runbooks/network.md": NETWORK_RUNBOOK,
                "notes.txt": OPS_NOTES,
            },
        ),
        "warehouse": (
            ("data",),
            {"schema.sql": SCHEMA_SQL, "views.sql": VIEWS_SQL, "notes.txt": WAREHOUSE_NOTES},
        ),
        "platform": (
            ("platform",),
            {"settings.toml": SETTINGS_TOML, "notes.txt": PLATFORM_NOTES},
        ),
        "finance": (
            ("finance",),
            {
                "sales/2023.csv": sales_csv(0, SALES_2023_ROWS, 2023),
                "sales/2024.csv": sales_csv(SALES_2023_ROWS, SALES_2024_ROWS, 2024),
                "warehouses/north.html": warehouse_html("Northern warehouses", WAREHOUSES_A),
                "warehouses/south.html": warehouse_html("Southern warehouses", WAREHOUSES_B),
                "forms.pdf": pdf(one_page(text_content(FORMS_PDF_LINES))),
                "notes.txt": FINANCE_NOTES,
            },
        ),
    }


def write_corpus(root: Path) -> dict[str, Path]:
    """Each source's folder under `root`, its files written."""
    folders = {}
    for name, (_, files) in corpus().items():
        folder = root / name
        for relative, content in files.items():
            path = folder / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        folders[name] = folder
    return folders
