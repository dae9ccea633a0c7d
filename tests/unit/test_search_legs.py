"""The exact-key leg, filters inside every leg, folding, and their fusion, on a real tantivy
index in tmp_path."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from loom_dagster.chunking import Chunk
from loom_dagster.contract.artifact import Locator
from loom_dagster.search.exact import _IDENTIFIER, ExactLeg, query_identifiers, text_identifiers
from loom_dagster.search.fusion import LegRank, fuse
from loom_dagster.search.legs import LegHit, SearchFilter, chunk_key
from loom_dagster.search.lexical import IndexedChunk, LexicalIndex, LexicalLeg
from loom_dagster.search.service import BadSearch, SearchHit, make_filter, search


def indexed(
    document: str,
    text: str,
    *,
    ordinal: int = 0,
    section: tuple[str, ...] = (),
    keys: tuple[str, ...] = (),
    names: tuple[str, ...] = (),
    block_type: str = "paragraph",
    format: str = "markdown",
    source: str = "docs",
    path: str | None = None,
    tags: tuple[str, ...] = (),
) -> IndexedChunk:
    chunk = Chunk(
        ordinal=ordinal,
        text=text,
        block_ids=(f"b{ordinal}",),
        block_type=block_type,
        section_path=section,
        locator=Locator(line_start=1, line_end=2),
        keys=keys,
        revision=f"{document}@r1",
        format=format,
        names=names,
    )
    made = IndexedChunk.of(
        chunk, document_id=document, source=source, path=path or f"{document}.md", tags=tags
    )
    _KNOWN[chunk_key(made.chunk_id)] = made.chunk_id
    return made


# The ids of the chunks made here by key: the lexical and exact legs answer keys, not ids.
_KNOWN: dict[int, str] = {}


def ids(hits: Sequence[LegHit] | Sequence[SearchHit]) -> list[str]:
    return [
        (hit.chunk_id or _KNOWN[hit.identity]) if isinstance(hit, LegHit) else hit.chunk.chunk_id
        for hit in hits
    ]


@pytest.fixture
def index(tmp_path: Path) -> LexicalIndex:
    return LexicalIndex(tmp_path / "index")


# -- identifiers ----------------------------------------------------------------------------------


def test_identifiers_are_whole_folded_and_dotted_names_keep_their_tails() -> None:
    text = "See E-DISK-042 and HW-77; set server.tls.cert_file, not 3.14 or 2024-01-31."
    assert text_identifiers(text) == [
        "e-disk-042",
        "hw-77",
        "server.tls.cert_file",
        "tls.cert_file",
        "cert_file",
    ]
    asked = query_identifiers("What does `E-DISK-042` mean?")
    assert asked[0] == "e-disk-042" and "what does `e-disk-042` mean" in asked
    assert query_identifiers("orders") == ["orders"]
    # A key path typed with spaces is also looked up dotted.
    assert "database.pool.max_connections" in query_identifiers("database pool max_connections")


def test_an_identifier_is_found_only_by_the_exact_leg(index: LexicalIndex) -> None:
    # BM25 cuts M-41 into `m` and `41`, and HW-7 into `hw` and `7`: the chunk that talks about
    # `m` and `41` and `hw` more often wins there. The exact leg matches the code whole.
    target = indexed(
        "forms",
        "Form HW-7 asks each contractor for the hours worked in the month, signed by the "
        "site manager, and is filed with payroll before the fifth working day.",
    )
    decoy = indexed("noise", "hw 7: see the hw 7 list")
    index.publish("forms", [target])
    index.publish("noise", [decoy])

    lexical = LexicalLeg(index).rank("HW-7", SearchFilter(), 10)
    exact = ExactLeg(index).rank("HW-7", SearchFilter(), 10)

    assert ids(lexical)[0] == decoy.chunk_id
    assert ids(exact) == [target.chunk_id]
    assert ids(search(index, "HW-7", limit=1)) == [target.chunk_id]
    # Without the exact leg, the decoy is what a search answers first.
    assert ids(search(index, "HW-7", limit=1, legs=[LexicalLeg(index)])) == [decoy.chunk_id]


def test_a_definition_ranks_above_the_statements_that_read_it(index: LexicalIndex) -> None:
    table = indexed(
        "schema",
        "CREATE TABLE customer_accounts (id INT, name TEXT, email TEXT, region TEXT)",
        keys=("customer_accounts", "id", "name", "email", "region"),
        names=("customer_accounts",),
        block_type="sql_statement",
        format="sql",
    )
    view = indexed(
        "schema",
        "CREATE VIEW big AS SELECT * FROM customer_accounts",
        ordinal=1,
        keys=("big", "customer_accounts"),
        names=("big",),
        block_type="sql_statement",
        format="sql",
    )
    index.publish("schema", [table, view])

    # The view only reads the table: while a definition is found, a mention is not this leg's
    # answer (BM25 still has it).
    assert ids(ExactLeg(index).rank("customer_accounts", SearchFilter(), 10)) == [table.chunk_id]
    assert ids(
        ExactLeg(index).rank(
            "customer_accounts",
            SearchFilter(formats=("sql",), block_types=("sql_statement",), path_prefix="schema"),
            10,
        )
    ) == [table.chunk_id]


# -- filters inside every leg ---------------------------------------------------------------------


def test_a_filter_excludes_a_better_scoring_chunk_and_keeps_the_one_further_down(
    index: LexicalIndex,
) -> None:
    # Twenty chunks outside the filter outscore the one inside it: a filter applied after a
    # cut at 10 would answer nothing.
    better = [
        indexed(f"ops{n}", "E-NET-7 network outage network outage", tags=("ops",))
        for n in range(20)
    ]
    inside = indexed(
        "hr",
        "the E-NET-7 code also appears in a long HR memo about many other things",
        tags=("hr",),
    )
    for chunk in [*better, inside]:
        index.publish(chunk.document_id, [chunk])
    kept = SearchFilter(tags=("hr",))

    for leg in (LexicalLeg(index), ExactLeg(index)):
        assert ids(leg.rank("E-NET-7 network outage", SearchFilter(), 10))[0] != inside.chunk_id
        assert ids(leg.rank("E-NET-7 network outage", kept, 10)) == [inside.chunk_id]
    [hit] = search(index, "E-NET-7 network outage", kept, limit=10)
    assert hit.chunk.chunk_id == inside.chunk_id and hit.chunk.tags == ("hr",)


@pytest.mark.parametrize(
    ("search_filter", "expected"),
    [
        (SearchFilter(formats=("sql",)), {"q.sql"}),
        (SearchFilter(block_types=("table",)), {"t.csv"}),
        (SearchFilter(sources=("b",)), {"t.csv"}),
        (SearchFilter(path_prefix="runbooks/"), {"runbooks/a.md", "runbooks/b+c (1)\n.md"}),
        (SearchFilter(path_prefix="runbooks/b+c ("), {"runbooks/b+c (1)\n.md"}),
        (SearchFilter(tags=("ops", "nope")), {"runbooks/a.md"}),
    ],
)
def test_each_filter_keeps_only_its_chunks_in_both_legs(
    index: LexicalIndex, search_filter: SearchFilter, expected: set[str]
) -> None:
    chunks = [
        indexed("a", "alpha_beta here", path="runbooks/a.md", tags=("ops",), source="a"),
        indexed("b", "alpha_beta there", path="runbooks/b+c (1)\n.md", source="a"),
        indexed("c", "alpha_beta sql", path="q.sql", format="sql", block_type="sql_statement"),
        indexed("d", "alpha_beta rows", path="t.csv", format="csv", block_type="table", source="b"),
        indexed("e", "alpha_beta elsewhere", path="runbooks.md", source="a"),
    ]
    for chunk in chunks:
        index.publish(chunk.document_id, [chunk])
    for leg in (LexicalLeg(index), ExactLeg(index)):
        found = index.fetch(ids(leg.rank("alpha_beta", search_filter, 10)))
        assert {chunk.path for chunk in found.values()} == expected, leg.name


def test_case_and_accents_fold_in_the_lexical_leg(index: LexicalIndex) -> None:
    index.publish("menu", [indexed("menu", "Le Café NAÏVE sert des crêpes")])

    for query in ("cafe", "CAFÉ", "naive", "crepes"):
        assert ids(LexicalLeg(index).rank(query, SearchFilter(), 5)) == ["menu@r1#0"], query


# -- fusion -----------------------------------------------------------------------------------


def test_fusion_adds_reciprocal_ranks_and_keeps_each_legs_rank() -> None:
    exact = [LegHit("x", 9.0)]
    lexical = [LegHit("y", 5.0), LegHit("z", 4.0), LegHit("x", 3.0)]

    fused = fuse([("exact", exact), ("lexical", lexical)], 10, k=60)

    assert [f.chunk_id for f in fused] == ["x", "y", "z"]
    assert fused[0].score == pytest.approx(1 / 61 + 1 / 63)
    assert fused[0].legs == (LegRank("exact", 1, 9.0), LegRank("lexical", 3, 3.0))
    assert fused[1].legs == (LegRank("lexical", 1, 5.0),)


def test_fusion_breaks_a_tie_by_how_far_ahead_each_leg_put_it_then_for_the_first_leg() -> None:
    fused = fuse([("exact", [LegHit("a", 1.0)]), ("lexical", [LegHit("b", 1.0)])], 2)
    assert [f.chunk_id for f in fused] == ["a", "b"]

    # a: first in exact (by a hair), a distant second in lexical; b: the other way round.
    close = [LegHit("a", 1.0), LegHit("b", 0.95)]
    distant = [LegHit("b", 20.0), LegHit("a", 5.0)]
    fused = fuse([("exact", close), ("lexical", distant)], 2)
    assert [f.chunk_id for f in fused] == ["b", "a"]
    assert fused[0].score == fused[1].score


def test_fusion_matches_a_hit_known_by_key_with_the_same_chunk_known_by_id() -> None:
    # The lexical and exact legs read keys; the vector leg knows ids: one chunk, two legs.
    lexical = [LegHit("", 5.0, chunk_key("a@r1#0")), LegHit("", 4.0, chunk_key("b@r1#0"))]
    vector = [LegHit("a@r1#0", 0.9)]

    fused = fuse([("lexical", lexical), ("vector", vector)], 10, k=60)

    assert [(f.chunk_id, f.key) for f in fused] == [
        ("a@r1#0", chunk_key("a@r1#0")),
        ("", chunk_key("b@r1#0")),
    ]
    assert fused[0].legs == (LegRank("lexical", 1, 5.0), LegRank("vector", 1, 0.9))
    assert fused[0].score == pytest.approx(2 / 61)


def test_a_search_with_only_some_legs_still_answers(index: LexicalIndex) -> None:
    index.publish("a", [indexed("a", "lighthouse keeper logbook")])

    assert ids(search(index, "lighthouse", legs=[LexicalLeg(index)])) == ["a@r1#0"]
    assert ids(search(index, "lighthouse", legs=[])) == []


# -- bad requests ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "code", "message"),
    [
        (
            lambda ix: search(ix, "?? !!"),
            "empty_query",
            "the query '?? !!' has no words to search for",
        ),
        (lambda ix: search(ix, "words", limit=0), "bad_limit", "limit must be 1 to 1000, not 0"),
        (
            lambda ix: search(ix, "words", limit=1001),
            "bad_limit",
            "limit must be 1 to 1000, not 1001",
        ),
        (
            lambda ix: search(ix, "words", SearchFilter(tags=("nope",))),
            "unknown_tag",
            "unknown tag 'nope': no published chunk carries it "
            "(a source gets tags from `loom sources add --tag`)",
        ),
        (
            lambda ix: make_filter(formats=["docx", "word"]),
            "unknown_format",
            "unknown format 'word'; formats are ",
        ),
        (
            lambda ix: make_filter(tags=["bad tag"]),
            "unknown_tag",
            "tag 'bad tag' must be 1-64 letters, digits, '.', '_' or '-', starting with a "
            "letter or digit",
        ),
    ],
)
def test_a_bad_request_is_refused_with_its_code(
    index: LexicalIndex, call: object, code: str, message: str
) -> None:
    index.publish("a", [indexed("a", "words", tags=("ops",))])
    with pytest.raises(BadSearch) as raised:
        call(index)  # type: ignore[operator]
    assert raised.value.code == code
    assert raised.value.message.startswith(message)


def test_a_chunk_key_is_stable_and_takes_an_id_that_is_not_utf8() -> None:
    # A document id from a file name that is not UTF-8 carries surrogates: a key, not a crash.
    key = chunk_key("caf\udce9@r1#0")
    assert key == chunk_key("caf\udce9@r1#0") != chunk_key("caf\udce8@r1#0")
    assert 0 <= key < 2**64


def test_text_identifiers_start_only_where_a_word_starts() -> None:
    """The identifier pattern tries a match only at the start of a run of letters and digits
    (issue 40 row 2: trying every offset of a 1,500-letter word took 52 ms a chunk); it finds
    what the pattern that tried every offset found."""
    every_offset = re.compile(r"[^\W_]+(?:[-_.][^\W_]+)+")
    rng = random.Random(40)
    for _ in range(5000):
        text = "".join(rng.choice("ab1_-. é\n_Z9") for _ in range(rng.randint(0, 40)))
        assert [m.group() for m in _IDENTIFIER.finditer(text)] == [
            m.group() for m in every_offset.finditer(text)
        ], text
    assert text_identifiers("A" * 1500 + " E-DISK-042") == ["e-disk-042"]


# -- identifiers with spaces and punctuation (issue 35) -------------------------------------------


def test_phrase_identifiers_are_found_in_text_written_one_way() -> None:
    from loom_dagster.search.exact import query_phrases, text_phrases

    text = (
        "Table B4 lists exports; see Figure 3, Form 1099-K and Appendix C. As 29 C.F.R. "
        "§ 1910.147(c) requires, per RFC 2616. Genesis 3:1\u20135 is quoted. In 2014 we met."
    )
    assert text_phrases(text) == [
        "table b4",
        "figure 3",
        "form 1099-k",
        "appendix c",
        "cfr 1910.147(c)",
        "29 cfr 1910.147(c)",
        "cfr 1910.147",
        "29 cfr 1910.147",
        "rfc 2616",
        "§1910.147(c)",
        "§1910.147",
        "genesis 3:1-5",
    ]
    # A query is typed in any case and with the spaces and dots of its own writing.
    assert query_phrases("what is in table b4?") == ["table b4"]
    assert set(query_phrases("29 CFR §1910.147")) == {
        "cfr 1910.147",
        "29 cfr 1910.147",
        "§1910.147",
    }
    assert query_phrases("genesis 3:1-5") == ["genesis 3:1-5"]
    # A word before a number is a label only when it names a part; a lone letter needs its capital.
    assert query_phrases("exports in 2014") == []
    assert query_phrases("schedule a meeting at 10:30") == []


def test_a_caption_label_outranks_a_toml_table_header(index: LexicalIndex) -> None:
    caption = indexed(
        "report",
        "Table B4. Wheat export volumes by destination, in thousands of tonnes, for the "
        "marketing years 2010 to 2015, as reported by the customs offices of each port, with "
        "the revisions published after the annual review of the harvest statistics.",
        format="pdf",
    )
    header = indexed(
        "config", '[table]\nname = "b4"', format="toml", block_type="toml_table", names=("table",)
    )
    index.publish("report", [caption])
    index.publish("config", [header])
    # BM25 alone: the short TOML table holds both words densely and comes first.
    assert ids(search(index, "Table B4", limit=1, legs=[LexicalLeg(index)])) == [header.chunk_id]
    assert ids(ExactLeg(index).rank("Table B4", SearchFilter(), 10)) == [caption.chunk_id]
    assert ids(search(index, "Table B4", limit=2)) == [caption.chunk_id, header.chunk_id]


def test_the_manual_citing_a_section_outranks_a_page_mentioning_the_code(
    index: LexicalIndex,
) -> None:
    manual = indexed(
        "manual",
        "Lockout procedures. Each energy control procedure meets 29 CFR §1910.147, and every "
        "authorized employee is trained before servicing a machine.",
    )
    mention = indexed(
        "page",
        "The C.F.R. has 50 titles; title 29 of the C.F.R. is labor, and the C.F.R. was first "
        "printed in 1938. Part 1910 and part 147 of the C.F.R. are often asked about.",
    )
    index.publish("manual", [manual])
    index.publish("page", [mention])
    query = "29 C.F.R. § 1910.147"
    assert ids(ExactLeg(index).rank(query, SearchFilter(), 10)) == [manual.chunk_id]
    assert ids(search(index, query, limit=1)) == [manual.chunk_id]


def test_a_question_one_table_row_answers_reaches_that_row(index: LexicalIndex) -> None:
    from loom_dagster.chunking import chunk_artifact
    from loom_dagster.contract.artifact import Artifact, Block, Coverage

    rows = "\n".join(
        ["Year | Wheat export volume (t) | Maize export volume (t)"]
        + [
            f"{year} | {3000 + 41 * (year - 1990):,} | {800 + year - 1990}"
            for year in range(1990, 2030)
        ]
    )
    prose = (
        "Wheat export volume rose in most years; the wheat export volume of each year since "
        "1990 is in the table below, beside the maize export volume, both in tonnes."
    )
    blocks = (
        Block("b0", "heading", "Exports", depth=1, locator=Locator(1, 1)),
        Block("b1", "paragraph", prose, ("Exports",), (), Locator(3, 4), parent="b0"),
        Block(
            "b2",
            "paragraph",
            "Table 2. Export volumes",
            ("Exports",),
            (),
            Locator(6, 6),
            parent="b0",
        ),
        Block(
            "b3",
            "table",
            rows,
            ("Exports",),
            (),
            Locator(8, 49),
            parent="b0",
            attrs={"table": {"rows": 41, "columns": 3}},
        ),
    )
    artifact = Artifact(
        schema_version=1,
        format="html",
        parser="test",
        parser_version="1",
        options={},
        attrs={},
        warnings=(),
        coverage=Coverage(unit="lines", total=49, extracted=49),
        blocks=blocks,
    )
    chunks = chunk_artifact(artifact, revision="report@r1")
    # Other documents, so the question's function words weigh what they weigh in a real index.
    for n in range(20):
        filler = f"What was said in the meeting {n} is in the minutes, and the notes of it too."
        index.publish(f"notes{n}", [indexed(f"notes{n}", filler)])
    index.publish(
        "report",
        [
            IndexedChunk.of(c, document_id="report", source="docs", path="report.html")
            for c in chunks
        ],
    )

    (hit,) = search(index, "What was the wheat export volume in 2014?", limit=1)

    assert "Year | Wheat export volume (t)" in hit.chunk.text
    assert "\n2014 | 3,984 | 824" in hit.chunk.text
    assert hit.chunk.locator.row_start <= 26 <= hit.chunk.locator.row_end  # 2014 is row 26


def test_a_short_question_naming_a_table_by_a_plain_word_finds_its_definition(
    index: LexicalIndex,
) -> None:
    definition = indexed(
        "schema",
        "CREATE TABLE staff (staff_id INT, first_name TEXT, last_name TEXT, store_id INT)",
        keys=("staff", "staff_id", "first_name", "last_name", "store_id"),
        names=("staff",),
        block_type="sql_statement",
        format="sql",
    )
    reader = indexed(
        "schema",
        "CREATE VIEW staff_list AS SELECT staff.staff_id, staff.first_name FROM staff "
        "JOIN store ON staff.store_id = store.store_id -- the staff table, listed",
        ordinal=1,
        keys=("staff_list", "staff", "store"),
        names=("staff_list",),
        block_type="sql_statement",
        format="sql",
    )
    index.publish("schema", [definition, reader])
    for question in ("staff table", "how are staff stored", "columns of the staff table"):
        assert ids(search(index, question, limit=1)) == [definition.chunk_id], question
    # A sentence's words are BM25's: a long question does not look its words up as names.
    from loom_dagster.search.exact import query_name_words

    assert query_name_words("how are staff stored") == ["staff"]
    assert query_name_words("which of the staff members at the store were paid twice") == []


def test_the_passage_whose_sentence_holds_the_question_words_comes_first(
    index: LexicalIndex,
) -> None:
    # The first passage names compression, the packet and its size over and over, each in a
    # sentence of its own; the second says it in one sentence. BM25 scores passages whole and
    # ranks the first first; its best two-sentence window holds fewer of the question's words.
    scattered = indexed(
        "article",
        "Compression is everywhere in the protocol. Compression matters. The packet format "
        "is old. Every packet has a header. Size limits are small. Small servers suffer.",
    )
    answering = indexed(
        "article",
        "The researchers found that zlib compression makes the malicious packet small, a mere "
        "39 kilobytes on the wire, which any client of the game accepts without a check.",
        ordinal=1,
    )
    index.publish("article", [scattered, answering])
    for n in range(10):
        index.publish(f"other{n}", [indexed(f"other{n}", f"the server {n} makes a reply")])
    question = "compression packet small"
    assert ids(LexicalLeg(index).rank(question, SearchFilter(), 2)) == [
        scattered.chunk_id,
        answering.chunk_id,
    ]
    assert ids(search(index, question, limit=2, legs=[LexicalLeg(index)]))[0] == answering.chunk_id


def test_an_answering_sentence_overtakes_passages_ranked_three_places_above_it(
    index: LexicalIndex,
) -> None:
    # Three short passages repeat the question's words, each in a sentence of its own, and BM25
    # ranks them above the long one a single sentence of which answers. Its window holds every
    # word of the question: that must outweigh a lead of three fused places, not only one or two.
    mentions = [
        indexed("ferry", text, ordinal=n)
        for n, text in enumerate(
            (
                "The harbour ferry is a landmark. The ferry has a blue hull. Winter storms close "
                "the harbour. Running costs rose.",
                "Ferry tickets are sold at the harbour. The ferry timetable is printed weekly. "
                "Ferry crews stop for lunch.",
                "Harbour views from the ferry are famous. The ferry deck is wide. Visitors stop at "
                "the harbour cafe to watch it.",
            )
        )
    ]
    answer = indexed(
        "ferry",
        "The town council met on a wet Tuesday in March and heard from the treasurer, the "
        "engineers and a long line of residents about roads, drains and the library. Near the "
        "end of the evening the council agreed that the harbour ferry would stop running in "
        "1987, when the new bridge opened, and the boat was sold to a museum upriver.",
        ordinal=3,
    )
    index.publish("ferry", [*mentions, answer])
    for n in range(10):
        filler = f"the road {n} was repaired when the council paid for it"
        index.publish(f"road{n}", [indexed(f"road{n}", filler)])
    question = "when did the harbour ferry stop running"
    assert ids(LexicalLeg(index).rank(question, SearchFilter(), 4)) == [
        *(m.chunk_id for m in mentions),
        answer.chunk_id,
    ]
    assert ids(search(index, question, limit=4, legs=[LexicalLeg(index)]))[0] == answer.chunk_id


def test_a_question_s_function_words_do_not_lift_prose_over_the_row_that_names_its_subject(
    index: LexicalIndex,
) -> None:
    # Rows of a table hold no "was", "to", "the" or "in", so over an index of many rows those
    # words weigh almost as much as the name asked about; a prose passage that holds them all
    # (and not the name) must not outrank the row that names it.
    rows = [
        indexed(
            "stocks",
            f"Symbol: S{n} | Security: Company {n} | Sector: Energy | Date added: 19{n + 10}-01-01",
            ordinal=n,
            format="csv",
        )
        for n in range(40)
    ]
    named = indexed(
        "stocks",
        "Symbol: KR | Security: Kroger | Sector: Consumer Staples | Date added: 1957-03-04",
        ordinal=40,
        format="csv",
    )
    index.publish("stocks", [*rows, named])
    prose = indexed(
        "news",
        "It was late in the day; the board added a clause to the deal, and the shareholders were "
        "told that the vote was to be held in the hall.",
        format="html",
    )
    index.publish("news", [prose])
    for n in range(3):
        filler = f"The market was quiet in session {n}, and the trading floor was calm."
        index.publish(f"market{n}", [indexed(f"market{n}", filler, format="html")])
    question = "in what year was Kroger added to the index"
    assert ids(LexicalLeg(index).rank(question, SearchFilter(), 1)) == [named.chunk_id]
    # A query of nothing but such words still searches them.
    assert LexicalLeg(index).rank("to be or not to be", SearchFilter(), 1)


def test_the_definition_a_short_query_names_comes_first_over_a_sibling_both_other_legs_prefer(
    tmp_path: Path, index: LexicalIndex
) -> None:
    from loom_dagster.search.embedding import NgramEmbedder
    from loom_dagster.search.fusion import rank_all
    from loom_dagster.search.vector import VectorIndex

    film = indexed(
        "schema",
        "CREATE TABLE film (film_id INT, title TEXT, description TEXT, release_year INT, "
        "language_id INT, rental_duration INT, rental_rate DECIMAL, length INT, rating TEXT)",
        keys=("film", "film_id", "title", "description"),
        names=("film",),
        block_type="sql_statement",
        format="sql",
    )
    sibling = indexed(
        "schema",
        "-- columns of the film table, as text\nCREATE TABLE film_text (film_id INT, title TEXT)",
        ordinal=1,
        keys=("film_text", "film_id", "title"),
        names=("film_text",),
        block_type="sql_statement",
        format="sql",
    )
    readers = [
        indexed(
            "schema",
            f"CREATE INDEX idx_film_{n} ON film_table_{n} (film_id) -- film table {n}",
            ordinal=2 + n,
            keys=(f"idx_film_{n}", f"film_table_{n}", "film_id"),
            names=(f"idx_film_{n}",),
            block_type="sql_statement",
            format="sql",
        )
        for n in range(8)
    ]
    chunks = [film, sibling, *readers]
    index.publish("schema", chunks)
    vectors = VectorIndex(tmp_path / "vectors", NgramEmbedder())
    vectors.publish_many({"schema": chunks})
    legs = [ExactLeg(index), LexicalLeg(index), vectors]
    question = "columns of the film table"
    # BM25 and the vectors rank the sibling (whose comment echoes the question) first and the
    # indexes on film tables above the table; only the exact leg names it.
    for leg in legs[1:]:
        ranked = ids(leg.rank(question, SearchFilter(), 10))  # type: ignore[attr-defined]
        assert ranked.index(film.chunk_id) > 5, ranked
    fused = rank_all(legs, question, SearchFilter(), 2)
    assert [hit.chunk_id or _KNOWN[hit.key] for hit in fused] == [film.chunk_id, sibling.chunk_id]


def test_a_short_query_defines_a_name_only_when_each_of_its_words_is_one(
    index: LexicalIndex,
) -> None:
    city = indexed(
        "schema",
        "CREATE TABLE city (city_id INT, city TEXT, country_id INT)",
        keys=("city", "city_id", "country_id"),
        names=("city",),
        block_type="sql_statement",
        format="sql",
    )
    row = indexed(
        "capitals", "Country: Mexico | Capital: Mexico City", format="csv", path="capitals.csv"
    )
    index.publish("schema", [city])
    index.publish("capitals", [row])

    asked = ExactLeg(index).rank("columns of the city table", SearchFilter(), 5)
    by_chance = ExactLeg(index).rank("capital city of Mexico", SearchFilter(), 5)

    assert ids(asked) == [city.chunk_id] and asked[0].defines
    # The table is still this leg's answer; it only does not claim the first place.
    assert ids(by_chance) == [city.chunk_id] and not by_chance[0].defines


def test_an_identifier_a_passage_only_mentions_does_not_hold_off_the_answering_sentence(
    index: LexicalIndex,
) -> None:
    # A hyphenated word of a question is an identifier to the exact leg, which finds it written
    # in a page's script. A definition, a code or a citation the query names keeps its first
    # place from the window rerank (test_the_manual_citing_a_section_outranks_...); a passage
    # holding a sentence's hyphenated word does not.
    script = indexed(
        "index",
        "const video = document.querySelector('.demo-video'); video.play(); "
        "video.classList.add('demo-video');",
        format="markdown",
    )
    answer = indexed(
        "faq",
        "The prompt is drawn by Starship. The autocompletion you see in the video comes from "
        "the shell you chose, not from Starship; the demo used Fish, which completes commands "
        "out of the box.",
        format="markdown",
    )
    index.publish("index", [script])
    index.publish("faq", [answer])
    for n in range(10):
        filler = f"the prompt {n} shows the branch and the shell in use"
        index.publish(f"other{n}", [indexed(f"other{n}", filler)])
    question = "where does the autocompletion in the demo-video come from"
    exact = ExactLeg(index).rank(question, SearchFilter(), 5)
    assert ids(exact) == [script.chunk_id] and not exact[0].named
    assert ids(search(index, question, limit=1)) == [answer.chunk_id]
    # The rerank runs before the cut to the limit: the first hit is the same at any limit.
    assert ids(search(index, question, limit=10))[0] == answer.chunk_id


def test_a_query_names_by_a_code_not_by_a_hyphenated_word() -> None:
    from loom_dagster.search.exact import named_as_code

    for query in ("E-DISK-042", "zh-Hans-HK", "where is max_connections set", "server.port value"):
        assert named_as_code(query), query
    for query in ("where does the demo-video come from", "Wie oft die Lua-Datei anpassen"):
        assert not named_as_code(query), query


def test_a_files_name_heads_its_rows_as_a_title_does(index: LexicalIndex) -> None:
    """ "DAC recipient code for Viet Nam": a country list's row names Viet Nam in many columns
    and holds codes of its own; the aid recipients' row is the answer, and only its file's name
    says "dac recipients". A part of a name holding a digit names nothing."""
    from loom_dagster.search.lexical import file_title

    assert file_title("csv/dac-recipients.csv") == "dac recipients"
    assert file_title("reports/q1-fy24_revenue.2023.xlsx") == "revenue"
    countries = indexed(
        "countries",
        "official_name_en: Viet Nam | UNTERM English Short: Viet Nam | official_name_fr: Viet "
        "Nam | ISO3166-1-numeric: 704 | Dial: 84 | currency code: VND | M49 code: 704",
        block_type="table",
        format="csv",
        path="csv/country-codes.csv",
    )
    recipients = indexed(
        "recipients",
        "code: 769 | name_en: Viet Nam | income_group: LMICs | geography: Far East Asia",
        block_type="table",
        format="csv",
        path="csv/dac-recipients.csv",
    )
    index.publish("countries", [countries])
    index.publish("recipients", [recipients])
    query = "DAC recipient code for Viet Nam"
    assert ids(index.search(query, limit=1)) == [recipients.chunk_id]


def test_a_window_holds_a_question_word_written_in_another_form_of_its_stem(
    index: LexicalIndex,
) -> None:
    from loom_dagster.search.passages import same_stem, window_shares

    terms = ["dinar", "bosnia", "withdrawn"]
    texts = {
        1: ("In Bosnia the dinar saw its withdrawal in July 1998. Nothing else changed.", ""),
        2: ("The dinar was a currency. Many coins were minted. Bosnia is in Europe.", ""),
    }
    shares = window_shares(terms, [1.0, 1.0, 2.0], texts, index.analyze)

    # withdrawal is withdrawn's stem: the first passage's window holds every term.
    assert shares == {1: 1.0, 2: 0.25}
    for a, b in (("terrarium", "terrariums"), ("arrested", "arrests"), ("matrix", "matrices")):
        assert same_stem(a, b), (a, b)
    for a, b in (("interest", "internet"), ("fish", "fishing"), ("state", "statute")):
        assert not same_stem(a, b), (a, b)


def test_the_first_document_s_lede_comes_first_over_a_later_passage_holding_the_same_words(
    index: LexicalIndex,
) -> None:
    # Both passages of the article hold every word of the question in one window; the later,
    # shorter one repeats them, so BM25 and the window rerank put it first. Within the first
    # document a passage's place counts: an article answers in its first passages.
    lede = indexed(
        "article",
        "Gunmen opened fire on visitors at the national museum on Wednesday, killing nineteen "
        "people. No group claimed it, but the attack raised fears that militants linked to the "
        "Islamic State were widening their operations. The museum is near the parliament.",
        section=("Attack stokes fears",),
    )
    later = indexed(
        "article",
        "Tourists stayed away after the attack. The museum attack raised fears of the Islamic "
        "State among hotel owners, whose fears were for their trade.",
        ordinal=3,
        section=("Attack stokes fears",),
    )
    index.publish("article", [lede, later])
    for n in range(10):
        filler = f"the museum {n} opened a new wing on Wednesday"
        index.publish(f"other{n}", [indexed(f"other{n}", filler)])
    question = "why did the museum attack raise fears about the Islamic State"
    assert ids(LexicalLeg(index).rank(question, SearchFilter(), 2)) == [
        later.chunk_id,
        lede.chunk_id,
    ]
    assert ids(search(index, question, limit=2, legs=[LexicalLeg(index)])) == [
        lede.chunk_id,
        later.chunk_id,
    ]


def test_a_passage_the_exact_leg_named_keeps_the_first_place_over_its_document_s_lede(
    index: LexicalIndex,
) -> None:
    from loom_dagster.search.fusion import Fused, LegRank

    lede = indexed(
        "manual", "What do the disk codes mean, E-DISK-042 among them? They are listed below."
    )
    named = indexed(
        "manual",
        "E-DISK-042: what we mean is that the disk is full. Free space and retry.",
        ordinal=4,
    )
    other = indexed("notes", "Spare parts arrive on Mondays.")
    index.publish("manual", [lede, named])
    index.publish("notes", [other])
    for n in range(10):
        index.publish(f"array{n}", [indexed(f"array{n}", f"the disk {n} of the array spins")])

    def fused(hit: Fused, *legs: LegRank) -> Fused:
        return replace(hit, legs=legs)

    # As fusion hands them over: another document's passage first, then the passage the exact
    # leg named, then the manual's lede; the window rerank puts the named one first (both of
    # the manual's windows hold the question's words, the note none).
    hits = [
        Fused(other.chunk_id, 0.35, (LegRank("vector", 1, 0.5),), chunk_key(other.chunk_id)),
        Fused(named.chunk_id, 0.3, (), chunk_key(named.chunk_id)),
        Fused(lede.chunk_id, 0.2, (LegRank("lexical", 1, 10.0),), chunk_key(lede.chunk_id)),
    ]
    question = "what does E-DISK-042 mean"
    by_name = LegRank("exact", 1, 3.0, named=True)
    hits[1] = fused(hits[1], by_name, LegRank("lexical", 2, 9.0))
    reranked = LexicalLeg(index).rerank_passages(question, hits)
    assert [hit.chunk_id for hit in reranked][:2] == [named.chunk_id, lede.chunk_id]
    # Not named, the same passage gives the first place to the lede, four places before it.
    hits[1] = fused(hits[1], LegRank("lexical", 2, 9.0))
    reranked = LexicalLeg(index).rerank_passages(question, hits)
    assert [hit.chunk_id for hit in reranked][:2] == [lede.chunk_id, named.chunk_id]


def test_an_earlier_passage_takes_the_first_place_only_by_the_margin_and_its_window() -> None:
    from loom_dagster.search.passages import LEAD_MARGIN, Candidate, lead_passage

    first = Candidate(share=0.6, bm25=10.0, ordinal=3)  # 0.6 + 0.5 + 0.4 / 4 = 1.2
    assert lead_passage(1, {1: first, 2: Candidate(0.6, 9.5, 0)}) == 2  # 0.6 + 0.475 + 0.4
    # Ahead by half the margin (0.6 + 0.25 + 0.4 = 1.25): the first keeps its place.
    assert LEAD_MARGIN == 0.1
    assert lead_passage(1, {1: first, 2: Candidate(0.6, 5.0, 0)}) == 1
    # Ahead by more than the margin, but its window holds less of the question: the first
    # keeps its place (a place in the document breaks near-ties only).
    assert lead_passage(1, {1: first, 2: Candidate(0.5, 10.0, 0)}) == 1
