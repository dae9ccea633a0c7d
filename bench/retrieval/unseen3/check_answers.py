"""Wrote bench/retrieval/unseen3/questions.json (--write) and checks each answer against the SOURCE
file: pypdf page text, the CSV line, the XLSX row cells, the HTML text near the line. A
transcription check only; nothing of Loom runs.

    .venv/bin/python bench/retrieval/unseen3/check_answers.py   # prints any answer not at its place
"""

import csv
import html
import json
import re
import sys
from collections import Counter
from pathlib import Path

import openpyxl
import pypdf

ROOT = Path(__file__).resolve().parent
DOCS = ROOT / "docs"


def norm(t: object) -> str:
    return re.sub(r"\s+", " ", str(t).replace("\u00ad", "")).strip().casefold()


Q: list[dict[str, object]] = []


def q(
    slice_: str,
    lang: str,
    question: str,
    document: str,
    locator: dict[str, object],
    answer: object,
) -> None:
    """Adds a question; its id is its place in the list."""
    Q.append(
        dict(
            id=f"y{len(Q) + 1:03d}",
            slice=slice_,
            language=lang,
            question=question,
            document=document,
            locator=locator,
            answer=answer,
            half="tuning",
        )
    )


T, E, N = "table", "exact", "natural"
ASSAM = "pdf/camelot_assam.pdf"
BUDGET = "pdf/camelot_budget.pdf"
CHANDEL = "pdf/camelot_district_health.pdf"
ENERGY = "pdf/camelot_good_energy.pdf"
HEALTH = "pdf/camelot_health.pdf"
POP = "pdf/camelot_population_growth.pdf"
RAIN = "pdf/camelot_rainfall_distribution.pdf"
OUTB = "pdf/camelot_row_span_3.pdf"
ALCONA = "pdf/camelot_vertical_header.pdf"
JAL = "pdf/pdfplumber_issue-53-example.pdf"
LOAN = "pdf/pdfplumber_pr-138-example.pdf"
KINO = "pdf/tabula_failing_sort.pdf"
QH = "pdf/invoice2data_QualityHosting.pdf"
NETP = "pdf/invoice2data_NetpresseInvoice.pdf"
FREE = "pdf/invoice2data_free_fiber.pdf"
OLAP = "pdf/unstructured_fr_olap.pdf"
GEODOC = "pdf/georef-ar-api-docs.pdf"
LOOPS = "html/readability_wikipedia-4.html"
MOZ = "html/readability_wikipedia.html"
FFF = "html/readability_keep-tabular-data.html"
THREE = "html/unstructured_three_tables.html"
COMUNAS = "html/georef-ar-api_comunas.html"
ETL = "html/georef-ar-api_etl-install.html"
DEPTOS = "csv/georef-ar_departamentos.csv"
MUNIS = "csv/georef-ar_municipios.csv"
ISO = "csv/georef-ar_iso-3166-provincias-arg.csv"
ODG = "csv/odg-total-millones-pesos-1960-trimestral.csv"
ETS = "csv/eu-ets-sector-emissions.csv"
VODA = "xlsx/unstructured_vodafone-q1-fy24-additional-information.xlsx"
CUPS = "xlsx/unstructured_stanley-cups.xlsx"
JUST = "xlsx/pydatajson_catalogo-justicia.xlsx"

# ---- table: PDF rows
q(
    T,
    "en",
    "percentage of children attending school in Kamrup district, Assam",
    ASSAM,
    {"page": 1},
    ["Kamrup", "92.8", "91.4", "94.6"],
)
q(
    T,
    "en",
    "share of girls attending school in Tinsukia, Annual Health Survey 2010-11",
    ASSAM,
    {"page": 1},
    ["Tinsukia", "78.7", "76.4", "89.2"],
)
q(
    T,
    "en",
    "Department of Posts budget 2014-2015 total plan and non-plan",
    BUDGET,
    {"page": 1},
    ["Department of Posts", "7712.76"],
)
q(
    T,
    "en",
    "budget provision for Defence Pensions in 2014-15",
    BUDGET,
    {"page": 1},
    ["Defence Pensions", "51000.00"],
)
q(
    T,
    "en",
    "non-plan revenue of the Department of Fertilisers in the 2014-2015 budget",
    BUDGET,
    {"page": 1},
    ["Department of Fertilisers", "72999.96"],
)
q(
    T,
    "en",
    "how many women smoke in Chandel district (DLHS-4)",
    CHANDEL,
    {"page": 1},
    ["Women who smoke", "18.4"],
)
q(
    T,
    "en",
    "percentage of children with low birth weight in Chandel",
    CHANDEL,
    {"page": 1},
    ["low birth weight", "12.8", "14.6"],
)
q(
    T,
    "en",
    "Good Energy standard electricity unit rate and standing charge for London, direct debit",
    ENERGY,
    {"page": 1},
    ["London", "25.25", "54.69"],
)
q(
    T,
    "en",
    "electricity unit rate in North Wales & Merseyside on the Good Energy SVT tariff",
    ENERGY,
    {"page": 1},
    ["North Wales & Merseyside", "27.35", "78.30"],
)
q(
    T,
    "en",
    "Good Energy gas unit rate in Yorkshire when paying on receipt of bill",
    ENERGY,
    {"page": 2},
    ["Yorkshire", "8.04", "48.12"],
)
q(
    T,
    "en",
    "public health outlay 2012-13 for Kerala, total",
    HEALTH,
    {"page": 1},
    ["Kerala", "33,173,581"],
)
q(
    T,
    "en",
    "Gujarat family welfare capital outlay, budget estimates 2012-13",
    HEALTH,
    {"page": 1},
    ["Gujarat", "42,000"],
)
q(
    T,
    "en",
    "decadal population growth of Nagaland 2001-2011",
    POP,
    {"page": 1},
    ["Nagaland", "-0.47"],
)
q(T, "en", "Kerala population growth rate 1991-2001", POP, {"page": 1}, ["Kerala", "9.43"])
q(
    T,
    "en",
    "Chandigarh population growth between 1951 and 1961",
    POP,
    {"page": 1},
    ["Chandigarh", "394.13"],
)
q(
    T,
    "en",
    "Madhya Pradesh rainfall on 10 July 2016 against normal",
    RAIN,
    {"page": 1},
    ["MADHYA PRADESH", "36.9", "8.9", "315%"],
)
q(
    T,
    "en",
    "Goa cumulative monsoon rainfall from 1 June to 10 July 2016",
    RAIN,
    {"page": 1},
    ["GOA", "1552.0", "1245.9", "25%"],
)
q(T, "en", "how many states had scanty rainfall", RAIN, {"page": 1}, ["Scanty", "13", "1"])
q(
    T,
    "en",
    "food poisoning outbreak in Amravati, Maharashtra: cases and deaths",
    OUTB,
    {"page": 1},
    ["Amravati", "Food Poisoning", "6", "5"],
)
q(
    T,
    "en",
    "chickenpox outbreak in Morena district",
    OUTB,
    {"page": 1},
    ["Morena", "Chickenpox", "15", "0"],
)
q(
    T,
    "en",
    "registered voters in Greenbush, Alcona County primary election 2018",
    ALCONA,
    {"page": 1},
    ["Greenbush", "1212"],
)
q(
    T,
    "en",
    "Gretchen Whitmer votes in Curtis township, Democratic primary",
    ALCONA,
    {"page": 2},
    ["Curtis", "90"],
)
q(T, "en", "JAL international passengers in August 2015", JAL, {"page": 1}, ["Aug-2015", "721,817"])
q(
    T,
    "en",
    "JAL domestic passengers and load factor in September 2015",
    JAL,
    {"page": 3},
    ["Sep-2015", "2,934,022", "75.6"],
)
q(
    T,
    "en",
    "JAL Europe route passengers in December 2015",
    JAL,
    {"page": 2},
    ["Europe", "42,097", "62.0"],
)
q(
    T,
    "en",
    "how many JAL flights were cancelled in December 2015",
    JAL,
    {"page": 5},
    ["TTL Flights Cancelled", "151", "2", "153"],
)
q(
    T,
    "en",
    "3 year fixed home loan rate and comparison rate, April 2019",
    LOAN,
    {"page": 1},
    ["3 Year Fixed Rate", "3.94%", "5.13%"],
)
q(
    T,
    "en",
    "Viridian Line of Credit residential equity rate",
    LOAN,
    {"page": 1},
    ["Viridian Line of Credit", "6.53%"],
)
q(
    T,
    "de",
    "Wann läuft Gallows im Dieselkino Gleisdorf?",
    KINO,
    {"page": 1},
    ["Gallows", "ab 16 J.", "21:00"],
)
q(T, "de", "Wie lang ist der Film Margos Spuren?", KINO, {"page": 1}, ["Margos Spuren", "109 min"])
q(
    T,
    "de",
    "Filmfrühstück The Transporter Refueled Uhrzeit",
    KINO,
    {"page": 1},
    ["Filmfrühstück: The Transporter Refueled", "11:00"],
)
q(
    T,
    "de",
    "Zeilenbetrag für den Dienst OUDJQ_strukan",
    QH,
    {"page": 1},
    ["OUDJQ_strukan", "StandardExchange 2010", "3,89"],
)
q(T, "de", "Gesamtbetrag der QualityHosting Rechnung 47774", QH, {"page": 2}, ["Total EUR 34,73"])
q(
    T,
    "fr",
    "prix unitaire du justificatif papier chez Netpresse",
    NETP,
    {"page": 1},
    ["Justificatif Papier", "3,50 €"],
)
q(T, "fr", "montant de la TVA de la facture Netpresse", NETP, {"page": 1}, ["TVA 20% : 9,34 €"])
q(
    T,
    "fr",
    "montant HT des abonnements, forfaits et options sur la facture Free de juillet 2015",
    FREE,
    {"page": 1},
    ["24.99", "Abonnements, forfaits et options"],
)
# ---- table: HTML rows
q(
    T,
    "en",
    "year of the time loop film Repeat Performance",
    LOOPS,
    {"line": 366},
    ["Repeat Performance", "1947"],
)
q(
    T,
    "en",
    "when was Run Lola Run released, time loop films list",
    LOOPS,
    {"line": 538},
    ["Run Lola Run", "1998"],
)
q(T, "en", "Swedish time loop film Naken, year", LOOPS, {"line": 561}, ["Naken", "2000"])
q(
    T,
    "en",
    "Boss Level time loop film plot",
    LOOPS,
    {"line": 1086},
    [
        "Boss Level",
        "2021",
        "A retired special forces officer is trapped in a time loop on the day of his death.",
    ],
)
q(
    T,
    "es",
    "¿cómo se llama el archivo CSV de localidades censales?",
    ETL,
    {"line": 842},
    ["Localidades Censales", "localidades-censales.csv"],
)
q(T, "es", "ID de la Comuna 8 de CABA", COMUNAS, {"line": 684}, ["02056", "Comuna 8"])
q(
    T,
    "en",
    "who is working on the train GUI in Factorio 0.17",
    FFF,
    {"line": 304},
    ["Train GUI", "kovarex"],
)
q(
    T,
    "en",
    "page of the Advanced Topics chapter in the table of contents",
    THREE,
    {"line": 131},
    ["Advanced Topics", "25"],
)
# ---- table: CSV rows
q(
    T,
    "es",
    "¿a qué provincia pertenece el departamento de Tilcara?",
    DEPTOS,
    {"row": 296},
    ["departamento_id: 38094", "departamento_nombre: Tilcara", "provincia_id: 38"],
)
q(
    T,
    "es",
    "id del departamento La Matanza",
    DEPTOS,
    {"row": 41},
    ["departamento_id: 06427", "departamento_nombre: La Matanza"],
)
q(
    T,
    "es",
    "código del municipio de Ushuaia",
    MUNIS,
    {"row": 1825},
    ["municipio_id: 940014", "municipio_nombre: USHUAIA", "provincia_id: 94"],
)
q(
    T,
    "en",
    "ISO 3166-2 code of Tierra del Fuego province",
    ISO,
    {"row": 21},
    ["3166-2 code: AR-V", "subdivision name: Tierra del Fuego"],
)
q(
    T,
    "en",
    "EU ETS aviation emissions in 2020",
    ETS,
    {"row": 10},
    ["sector: 10 Aviation", "year: 2020", "emissions_mt: 24.96"],
)
q(
    T,
    "en",
    "emissions from lime production in 2023",
    ETS,
    {"row": 118},
    [
        "sector: 30 Production of lime, or calcination of dolomite/magnesite",
        "year: 2023",
        "emissions_mt: 21.38",
    ],
)
q(
    T,
    "es",
    "PIB total a precios de mercado en el primer trimestre de 1975 (oferta y demanda global)",
    ODG,
    {"row": 22},
    ["indice_tiempo: 1975-01-01", "pib_total_pm_60: 17877"],
)
q(
    T,
    "es",
    "exportaciones en el cuarto trimestre de 1980, millones de pesos de 1960",
    ODG,
    {"row": 45},
    ["indice_tiempo: 1980-10-01", "exportaciones_60: 2738"],
)
# ---- table: XLSX rows
q(
    T,
    "en",
    "Vodafone Germany revenue by half year",
    VODA,
    {"sheet": "04 Segmental analysis", "row": 7},
    ["Germany", "6447", "6681", "6592", "6521"],
)
q(
    T,
    "en",
    "Vodafone group revenue FY 22/23",
    VODA,
    {"sheet": "02 Group financial performance", "row": 8},
    ["Revenue", "45706"],
)
q(
    T,
    "en",
    "Vodafone restructuring costs FY 22/23",
    VODA,
    {"sheet": "02 Group financial performance", "row": 13},
    ["Restructuring costs", "-587"],
)
q(
    T,
    "en",
    "Vodafone Spain TV customers Q1 23/24",
    VODA,
    {"sheet": "09 TV customers", "row": 10},
    ["Spain¹", "1426"],
)
q(
    T,
    "en",
    "Vodafone free cash flow H2 22/23",
    VODA,
    {"sheet": "05 Cash flow", "row": 19},
    ["Free cash flow1", "4687"],
)
q(
    T,
    "en",
    "link to the Vodafone FY23 annual report",
    VODA,
    {"sheet": "Disclosure references", "row": 6},
    ["Annual Report", "vodafone.com/ar2023"],
)
q(
    T,
    "es",
    "¿con qué frecuencia se actualiza el dataset Internos del Servicio Penitenciario Federal?",
    JUST,
    {"sheet": "Dataset", "row": 8},
    [
        "dataset_title: Internos del Servicio Penitenciario Federal - SPF",
        "dataset_accrualPeriodicity: R/P1M",
    ],
)
q(
    T,
    "es",
    "tema del dataset Registro Unificado de Víctimas del Terrorismo de Estado",
    JUST,
    {"sheet": "Dataset", "row": 13},
    [
        "dataset_title: Registro Unificado de Víctimas del Terrorismo de Estado -RUVTE-",
        "dataset_theme: derechos-humanos",
    ],
)
q(
    T,
    "es",
    "tipo del campo fecha_sancion en la Base Infoleg",
    JUST,
    {"sheet": "Field", "row": 9},
    ["field_title: fecha_sancion", "field_type: date"],
)
q(
    T,
    "en",
    "how many Stanley Cups have the Maple Leafs won",
    CUPS,
    {"sheet": "Stanley Cups", "row": 5},
    ["Team: Maple Leafs", "Stanley Cups: 13"],
)
q(
    T,
    "en",
    "Flyers Stanley Cups since 1967",
    CUPS,
    {"sheet": "Stanley Cups Since 67", "row": 4},
    ["Team: Flyers", "Stanley Cups: 2"],
)
# ---- exact
q(E, "en", "AR-Q", ISO, {"row": 16}, ["3166-2 code: AR-Q", "subdivision name: Neuquén"])
q(E, "en", "06427", DEPTOS, {"row": 41}, ["06427", "La Matanza"])
q(E, "en", "940014", MUNIS, {"row": 1825}, ["940014", "USHUAIA"])
q(
    E,
    "en",
    "d43fa140-f43f-4cc2-8491-b1d8bb899de4",
    JUST,
    {"sheet": "Dataset", "row": 13},
    ["dataset_identifier: d43fa140-f43f-4cc2-8491-b1d8bb899de4"],
)
q(E, "en", "CON02858", QH, {"page": 1}, ["Contract No. CON02858"])
q(E, "en", "HRB 13302", QH, {"page": 1}, ["HRB 13302"])
q(E, "en", "DE30507500940000048567", QH, {"page": 1}, ["DE30507500940000048567"])
q(E, "fr", "facture 2022089083", NETP, {"page": 1}, ["Facture n° 2022089083"])
q(E, "fr", "FR7610107002450061705231739", NETP, {"page": 1}, ["FR76 10107 00245 00617052317 39"])
q(E, "fr", "Siret 53084813400017", NETP, {"page": 1}, ["Siret 53084813400017"])
q(E, "fr", "facture 562044387", FREE, {"page": 1}, ["562044387"])
q(E, "en", "FO10479674", FREE, {"page": 1}, ["FO10479674"])
q(E, "en", "002-842 090419", LOAN, {"page": 1}, ["002-842 090419"])
q(
    E,
    "en",
    "Table 5 public health outlay",
    HEALTH,
    {"page": 1},
    ["Table: 5", "Public Health Outlay 2012-13"],
)
q(
    E,
    "en",
    "TABLE 4 decadal growth rate",
    POP,
    {"page": 1},
    ["TABLE 4: STATE-WISE DECADAL GROWTH RATE OF POPULATION"],
)
q(
    E,
    "en",
    "demand no. 22 budget 2014-15",
    BUDGET,
    {"page": 1},
    ["Defence Services-Army", "92669.32"],
)
q(
    E,
    "en",
    "FY15 2nd Q TTL international passengers",
    JAL,
    {"page": 1},
    ["FY15 2nd Q TTL", "2,085,923"],
)
q(E, "en", "Good Energy region 17", ENERGY, {"page": 1}, ["North Scotland", "17", "26.64"])
q(E, "en", "R/P3M", JUST, {"sheet": "Dataset", "row": 12}, ["dataset_accrualPeriodicity: R/P3M"])
q(E, "en", "georef-etl_db", ETL, {"line": 686}, ["georef-etl_db"])
# ---- natural
q(
    N,
    "en",
    "when did Netscape register mozilla.org",
    MOZ,
    {"line": 275},
    "One day later, Jamie Zawinski from Netscape registered mozilla.org",
)
q(
    N,
    "en",
    "what was Mozilla's total revenue for 2011",
    MOZ,
    {"line": 278},
    "Mozilla reported that their total revenue for 2011 was $163 million",
)
q(
    N,
    "en",
    "when did Brendan Eich step down as Mozilla CEO",
    MOZ,
    {"line": 285},
    "Eich voluntarily stepped down on April 3, 2014",
)
q(
    N,
    "en",
    "what was Firefox originally called",
    MOZ,
    {"line": 321},
    "Firefox was originally named Phoenix",
)
q(
    N,
    "en",
    "when will Factorio 0.17 be released",
    FFF,
    {"line": 143},
    "we will aim to release the week starting 25th February.",
)
q(
    N,
    "en",
    "what was the probable cause of the acute diarrheal disease outbreak in Betul",
    OUTB,
    {"page": 1},
    "Consumption of contaminated water could be the probable cause of the outbreak.",
)
q(
    N,
    "en",
    "what is the annual fee for the home loan package",
    LOAN,
    {"page": 1},
    "pay an annual package fee of $395",
)
q(
    N,
    "en",
    "when was the Alcona County primary election",
    ALCONA,
    {"page": 1},
    "PRIMARY ELECTION, AUGUST 7, 2018",
)
q(
    N,
    "en",
    "how is consumption split between day and night for Economy 10 meters",
    ENERGY,
    {"page": 1},
    "consumption split for E7 and 66:34% for E10",
)
q(
    N,
    "en",
    "how many queries are in the OLAP log files used for the tests",
    OLAP,
    {"page": 9},
    "Ils sont répartis en 4 fichiers de respectivement 119, 242, 437 et 905 requêtes.",
)
q(
    N,
    "fr",
    "quelle pénalité en cas de retard de paiement chez Netpresse",
    NETP,
    {"page": 1},
    "pénalité de retard calculée sur la base de trois fois le taux de l’intérêt légal",
)
q(
    N,
    "fr",
    "sur quelle machine les tests de résumé de logs OLAP ont-ils été réalisés",
    OLAP,
    {"page": 9},
    "Les tests ont été réalisés sur un Core 2 Duo E8400 à 3,00 GHz",
)
q(
    N,
    "fr",
    "le paiement par chèque est-il accepté par Netpresse",
    NETP,
    {"page": 1},
    "Le règlement par chèque n’est plus accepté.",
)
q(
    N,
    "de",
    "Wie hoch ist die Gebühr bei einer Rücklastschrift bei QualityHosting?",
    QH,
    {"page": 2},
    "berechnen wir für die uns entstandenen Kosten ein Entgeld von 15,00 EUR",
)
q(
    N,
    "de",
    "Innerhalb welcher Frist muss man Einwände gegen die Rechnung erheben?",
    QH,
    {"page": 2},
    "sind schriftlich innerhalb 4 Wochen ab Rechnungsdatum unserer Buchhaltung anzuzeigen",
)
q(
    N,
    "de",
    "Was kostet das Doublefeature Fack ju Göhte im Dieselkino?",
    KINO,
    {"page": 1},
    "Doublefeature EHP ab € 13,-",
)
q(
    N,
    "es",
    "¿qué separador decimal usa la API Georef en los archivos CSV?",
    GEODOC,
    {"page": 16},
    "La API genera archivos CSV usando “.” como separador decimal.",
)
q(
    N,
    "es",
    "¿qué contenedor guarda los datos procesados del ETL de Georef?",
    ETL,
    {"line": 686},
    "georef-etl_db: Un contenedor con postgres y postgis para almacenar los datos procesados.",
)
q(
    N,
    "es",
    "¿qué resolución define los IDs de las comunas de CABA?",
    COMUNAS,
    {"line": 674},
    "Los IDs y los nombres de las comunas están definidos por la Resolución 55/2019 de INDEC",
)
q(
    N,
    "es",
    "¿qué cambió en el formato de las respuestas CSV de la API Georef?",
    GEODOC,
    {"page": 35},
    "todos los campos no-numéricos ahora son devueltos entre comillas dobles",
)


# ---- the check against the sources


def pdf_places(path: Path) -> dict[tuple[object, ...], str]:
    return {
        ("page", i): page.extract_text() or ""
        for i, page in enumerate(pypdf.PdfReader(path).pages, 1)
    }


def csv_places(path: Path) -> dict[tuple[object, ...], str]:
    """Each row (header = row 1) as `Header: value` cells, then its line as written."""
    lines = path.read_text(encoding="utf-8").splitlines()
    header = next(csv.reader([lines[0]]))
    places: dict[tuple[object, ...], str] = {}
    for i, line in enumerate(lines[1:], 2):
        cells = next(csv.reader([line]))
        named = " | ".join(f"{h}: {c}" for h, c in zip(header, cells, strict=False))
        places[("row", i)] = f"{named} || {line}"
    return places


def shown(value: object) -> str:
    """A cell as the sheet shows a general number: a whole float as an integer."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def xlsx_places(path: Path) -> dict[tuple[object, ...], str]:
    """Each sheet row as `Header: value` cells under the sheet's first row of two or more
    cells, then its cells' words."""
    places: dict[tuple[object, ...], str] = {}
    for sheet in openpyxl.load_workbook(path, data_only=True).worksheets:
        header: list[str] | None = None
        for i, row in enumerate(sheet.iter_rows(values_only=True), 1):
            cells = [shown(value) for value in row]
            if header is None and sum(1 for cell in cells if cell) >= 2:
                header = cells
            pairs = zip(header or [], cells, strict=False)
            named = " | ".join(f"{h}: {c}" for h, c in pairs if c)
            places[(sheet.title, i)] = f"{named} || {' | '.join(cells)}"
    return places


def html_places(path: Path) -> dict[tuple[object, ...], str]:
    """Each line with the 25 after it, tags out and entities read (a table row's cells follow
    the line that opens it)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return {
        ("line", i): html.unescape(re.sub(r"<[^>]+>", " ", " ".join(lines[i - 1 : i + 25])))
        for i in range(1, len(lines) + 1)
    }


def source_places(document: str) -> dict[tuple[object, ...], str]:
    path = DOCS / document
    if document.endswith(".pdf"):
        return pdf_places(path)
    if document.endswith(".csv"):
        return csv_places(path)
    if document.endswith(".xlsx"):
        return xlsx_places(path)
    return html_places(path)


def holds(text: str, answer: object) -> bool:
    cells = answer if isinstance(answer, list) else [answer]
    return all(norm(cell) in norm(text) for cell in cells)


def check() -> int:
    """Prints each answer its labelled place does not hold; returns how many."""
    cache: dict[str, dict[tuple[object, ...], str]] = {}
    bad = 0
    for question in Q:
        document = question["document"]
        places = cache.setdefault(document, source_places(document))
        locator = question["locator"]
        key = (
            (locator["sheet"], locator["row"])
            if "sheet" in locator
            else next(iter(locator.items()))
        )
        if holds(places.get(key, ""), question["answer"]):
            continue
        bad += 1
        found = [place for place, text in places.items() if holds(text, question["answer"])]
        print("not at its place:", question["id"], document, key, "found at", found[:5])
    return bad


def main() -> None:
    bad = check()
    print(len(Q), "questions;", Counter(x["slice"] for x in Q), Counter(x["language"] for x in Q))
    print(bad, "answers not at their place")
    if "--write" in sys.argv:
        document = {"about": ABOUT, "questions": Q}
        text = json.dumps(document, indent=1, ensure_ascii=False) + "\n"
        (ROOT / "questions.json").write_text(text)
        print("written")


ABOUT = (
    "A third TUNING set (never a judging set): mostly table questions over the public documents "
    "of docs/ (sources.json), none of which bench/retrieval/unseen, unseen2, tests/, bench/ or "
    "/work/shared holds. Fields as bench/retrieval/unseen/questions.json: id; slice (exact, table, "
    "natural); language of the question; question as a user types it; document (path under "
    "docs/); locator (page, line, row, sheet); answer (the cells that must all be in the passage: "
    "`Header: value` for CSV and XLSX rows whose header names the column, the cells' words for "
    "PDF and HTML rows and for workbook rows under a multi-row header, the identifier's words for "
    "exact questions, the passage's words for natural ones); half: always tuning."
)

if __name__ == "__main__":
    main()
