"""HTML page furniture (issue 35 item 4): share buttons, comment counts, reader comments,
navigation, newsletter boxes and cookie banners are kept in attrs.furniture, out of the blocks,
so chunking makes no passage of them (extractor_sandbox/formats/html/furniture.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from extractor_sandbox.formats.html import extract_html
from extractor_sandbox.formats.html import reader as html_reader
from loom_dagster.chunking import chunk_artifact
from loom_dagster.contract.validate import parse_artifact
from tests.extractor.server_check import validated

ARTICLE = """<!DOCTYPE html>
<html><head><title>Ducks return</title></head>
<body>
<header><a href="/">The Paper</a>
<nav><ul><li><a href="/">Home</a></li><li><a href="/news">News</a></li></ul></nav>
</header>
<div id="cookie-banner"><p>We use cookies to improve your experience.</p><button>Accept all</button></div>
<main>
<article>
<div class="share-buttons"><a href="#">Share on Facebook</a> <a href="#">Share on Twitter</a></div>
<h1>Ducks return to the lake</h1>
<p class="byline">By Ann Lee, <a href="#comments" class="comment-count">212 comments</a></p>
<p>The ducks came back on Monday, the warden said, after a winter in the south.</p>
<p>Local <a href="/birds">birdwatchers</a> counted forty of them on the north shore.</p>
<aside class="newsletter"><h3>Get our newsletter</h3><p>The week's news, every Friday.</p>
<form><input type="email"><button>Sign up</button></form></aside>
</article>
<section id="comments"><h2>Reader comments</h2><p>Great news for the lake! Bob</p></section>
</main>
<footer><p>Copyright 2024 The Paper</p></footer>
</body></html>
"""
CONTENT = [
    "Ducks return to the lake",
    "By Ann Lee,",
    "The ducks came back on Monday, the warden said, after a winter in the south.",
    "Local birdwatchers counted forty of them on the north shore.",
]


def extract(page: str) -> dict[str, Any]:
    return validated(extract_html(page, {}), page)


def texts(page: str) -> list[str]:
    return [block["text"] for block in extract(page)["blocks"]]


def furniture(page: str) -> list[tuple[str, str]]:
    return [(part["kind"], part["text"]) for part in extract(page)["attrs"].get("furniture", [])]


def test_an_articles_furniture_is_out_of_its_blocks_and_kept_in_attrs_furniture() -> None:
    artifact = extract(ARTICLE)

    assert [block["text"] for block in artifact["blocks"]] == CONTENT
    kinds = {part["kind"] for part in artifact["attrs"]["furniture"]}
    assert kinds == {"navigation", "links", "cookie", "share", "comments", "newsletter", "footer"}
    assert artifact["coverage"]["complete"] is True
    assert artifact["coverage"]["extracted"] == artifact["coverage"]["total"]
    assert any("page furniture left out of the blocks" in w for w in artifact["warnings"])


def test_each_furniture_part_keeps_its_text_and_line_span() -> None:
    parts = extract(ARTICLE)["attrs"]["furniture"]

    share = next(part for part in parts if part["kind"] == "share")
    assert share == {
        "kind": "share",
        "text": "Share on Facebook Share on Twitter",
        "line_start": 10,
        "line_end": 10,
    }


def test_the_articles_first_passage_starts_with_its_title_not_share_on_facebook() -> None:
    raw = json.dumps(extract(ARTICLE)).encode("utf-8")
    chunks = chunk_artifact(
        parse_artifact(raw, expected_format="html", original_size=len(ARTICLE)), revision="a@1"
    )

    assert chunks[0].section_path == ("Ducks return to the lake",)
    assert chunks[0].text.startswith("By Ann Lee,")
    passages = " ".join(chunk.text for chunk in chunks)
    for words in ("Share on", "212 comments", "Reader comments", "cookies", "newsletter", "Home"):
        assert words not in passages


def test_share_buttons_are_furniture_by_their_class() -> None:
    page = '<p>Body text.</p><ul class="social-links"><li><a href="#">Facebook</a></li></ul>'

    assert texts(page) == ["Body text."]
    assert furniture(page) == [("share", "Facebook")]


def test_share_buttons_are_furniture_by_their_words() -> None:
    page = "<div><button>Share on Facebook</button> <button>Tweet</button></div><p>Body text.</p>"

    assert texts(page) == ["Body text."]
    assert furniture(page) == [("share", "Share on Facebook Tweet")]


def test_a_comment_count_is_furniture_alone_or_inside_a_byline() -> None:
    alone = "<p>Body text.</p><div><a href='#c'>212 comments</a></div>"
    in_byline = "<p>By Ann <span class='comment-count'>212 comments</span> today</p>"

    assert texts(alone) == ["Body text."]
    assert furniture(alone) == [("comments", "212 comments")]
    assert texts(in_byline) == ["By Ann", "today"]
    assert furniture(in_byline) == [("comments", "212 comments")]


def test_a_reader_comments_section_is_furniture() -> None:
    page = (
        "<h1>Story</h1><p>Body text.</p>"
        '<div id="comments"><h2>Reader comments</h2><p>First!</p></div>'
    )

    assert texts(page) == ["Story", "Body text."]
    assert furniture(page) == [("comments", "Reader comments"), ("comments", "First!")]


def test_navigation_is_furniture_by_element_role_and_breadcrumb() -> None:
    page = (
        "<nav><a href='/'>Home</a></nav>"
        "<div role='navigation'><a href='/a'>Archive</a></div>"
        "<ol class='breadcrumbs'><li>News</li><li>Science</li></ol>"
        "<p>Body text.</p>"
    )

    assert texts(page) == ["Body text."]
    assert furniture(page) == [
        ("navigation", "Home"),
        ("navigation", "Archive"),
        ("navigation", "News"),
        ("navigation", "Science"),
    ]


def test_a_newsletter_box_is_furniture() -> None:
    page = (
        "<p>Body text.</p><div class='newsletter-signup'><h3>Stay informed</h3>"
        "<p>Get the morning briefing.</p><button>Subscribe</button></div>"
    )

    assert texts(page) == ["Body text."]
    assert [kind for kind, _ in furniture(page)] == ["newsletter"] * 3


def test_a_cookie_banner_is_furniture() -> None:
    page = (
        "<div class='consent-popup'><p>This site uses cookies.</p><a href='#'>Accept</a></div>"
        "<p>Body text.</p>"
    )

    assert texts(page) == ["Body text."]
    assert furniture(page) == [("cookie", "This site uses cookies."), ("cookie", "Accept")]


def test_a_menu_of_links_outside_the_marked_main_content_is_furniture() -> None:
    page = (
        "<div><a href='/'>Home</a> <a href='/about'>About</a></div>"
        "<main><p>Body with <a href='/x'>a link</a>.</p><p><a href='/y'>Only a link</a></p></main>"
    )

    assert texts(page) == ["Body with a link.", "Only a link"]
    assert furniture(page) == [("links", "Home About")]


def test_links_are_content_where_the_page_marks_no_main_content() -> None:
    page = "<ul><li><a href='/a'>Chapter one</a></li><li><a href='/b'>Chapter two</a></li></ul>"

    assert texts(page) == ["Chapter one", "Chapter two"]


def test_main_content_or_a_title_inside_a_furniture_hint_is_content() -> None:
    wrapped_main = "<div class='comments-open'><main><p>Body text.</p></main></div>"
    wrapped_title = "<div class='banner'><h1>The title</h1><p>Standfirst.</p></div><p>Body.</p>"

    assert texts(wrapped_main) == ["Body text."]
    assert texts(wrapped_title) == ["The title", "Standfirst.", "Body."]


def test_hints_on_html_body_and_article_are_not_read() -> None:
    page = "<body class='has-cookie-banner'><article class='share-enabled'><p>Body.</p></article>"

    assert texts(page) == ["Body."]


def test_a_page_of_nothing_but_furniture_keeps_it_as_content() -> None:
    page = "<ul class='nav navbar-nav'><li><a href='/'>Home</a></li><li>About</li></ul>"

    assert texts(page) == ["Home", "About"]
    assert "furniture" not in extract(page)["attrs"]


def test_words_of_furniture_inside_a_longer_sentence_are_content() -> None:
    page = "<p>Share on Facebook was the campaign's slogan.</p><p>The shared comments section.</p>"

    assert texts(page) == [
        "Share on Facebook was the campaign's slogan.",
        "The shared comments section.",
    ]


def test_a_table_cells_words_are_the_tables_whatever_they_say() -> None:
    # A layout table (a cell holds a list) reads its cells as blocks: "Share" and "3 comments"
    # there are a cell's words, not furniture.
    page = (
        "<table><tr><th>Share</th><th>3 comments</th></tr>"
        "<tr><td><ul><li>a</li></ul></td><td>b</td></tr></table>"
    )

    assert texts(page) == ["Share", "3 comments", "a", "b"]


def test_a_bare_comments_heading_is_content() -> None:
    # A style guide's "Comments" section is content; only a section marked as comments is not.
    page = "<h2>Comments</h2><p>Comments should be complete sentences.</p>"

    assert texts(page) == ["Comments", "Comments should be complete sentences."]


def test_a_heading_slug_id_or_a_class_naming_the_content_is_no_furniture_hint() -> None:
    # Sphinx anchors a section by its slug; a layout class can name a sidebar and the article.
    slug = '<p>Intro.</p><div id="sharing-with-a-single-developer"><p>Push to it.</p></div>'
    layout = '<p>Intro.</p><div class="l-sidebar-fixed l-article-body"><p>Body text.</p></div>'

    assert texts(slug) == ["Intro.", "Push to it."]
    assert texts(layout) == ["Intro.", "Body text."]


def test_an_aside_is_furniture_outside_the_marked_main_content_only() -> None:
    beside_main = "<main><p>Body text.</p></main><aside><p>Popular this week</p></aside>"
    in_article = "<article><p>Body text.</p><aside><p>A pull quote.</p></aside></article>"
    unmarked = "<p>Body text.</p><aside><p>The film's review.</p></aside>"

    assert texts(beside_main) == ["Body text."]
    assert furniture(beside_main) == [("aside", "Popular this week")]
    assert texts(in_article) == ["Body text.", "A pull quote."]
    assert texts(unmarked) == ["Body text.", "The film's review."]


def test_a_footer_is_furniture_outside_the_main_content_and_the_articles_own_inside_it() -> None:
    page = (
        "<article><p>Body text.</p><footer><p>Written by Ann Lee</p></footer></article>"
        "<footer><p>Copyright 2024 The Paper</p></footer>"
    )

    assert texts(page) == ["Body text.", "Written by Ann Lee"]
    assert furniture(page) == [("footer", "Copyright 2024 The Paper")]


def test_a_newsletter_box_and_a_cookie_banner_are_furniture_by_their_words() -> None:
    page = (
        "<div><p>We use cookies to improve your experience. See our privacy policy.</p>"
        "<button>Accept all cookies</button></div>"
        "<p>Body text.</p><div><p>Sign up for our daily newsletter</p></div>"
    )

    assert texts(page) == ["Body text."]
    assert [kind for kind, _ in furniture(page)] == ["cookie", "cookie", "newsletter"]


def test_a_sentence_about_cookies_or_a_newsletter_is_content() -> None:
    page = (
        "<p>We use cookies in this recipe.</p>"
        "<p>The newsletter went out on Monday to 4,000 readers.</p>"
    )

    assert texts(page) == [
        "We use cookies in this recipe.",
        "The newsletter went out on Monday to 4,000 readers.",
    ]


def test_past_its_bound_attrs_furniture_joins_runs_of_parts_with_their_text_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(html_reader, "MAX_FURNITURE", 2)
    page = "<p>Body.</p><nav><ul><li>a</li><li>b</li><li>c</li></ul></nav><footer>d</footer>"

    artifact = extract(page)

    assert artifact["attrs"]["furniture"] == [
        {"kind": "navigation", "text": "a\nb", "line_start": 1, "line_end": 1},
        {"kind": "mixed", "text": "c\nd", "line_start": 1, "line_end": 1},
    ]
    assert artifact["coverage"]["complete"] is True
    assert any("at most 2 parts" in warning for warning in artifact["warnings"])


# Lists of links under a heading (furniture.link_lists): a page's "Most read" box is furniture;
# an index page's links, a contents list and an article's references are content.
PROSE = [
    "The ducks came back on Monday, the warden said, after a winter spent in the south of the"
    " country, where the lakes do not freeze and the reeds stand until spring.",
    "Local birdwatchers counted forty of them on the north shore, more than in any year since"
    " the survey began, and the warden expects the numbers to grow through April.",
    "The council will decide next month whether to close the shore path during the nesting"
    " season, as it did two years ago, when the birds raised more young than ever before.",
]
BODY = "".join(f"<p>{text}</p>" for text in PROSE)


def _links(*titles: str, tag: str = "li", href: str = "/story") -> str:
    return "".join(f"<{tag}><a href='{href}'>{title}</a></{tag}>" for title in titles)


def test_a_most_read_heading_and_its_links_on_a_page_with_no_main_are_furniture() -> None:
    page = (
        "<div class='col'>\n<h3>Most Read Business Stories</h3>\n<ul>\n"
        + _links("Housing market splits in two", "Boeing chief faces questions")
        + "\n</ul>\n</div>\n<h1>Ducks return</h1>\n"
        + BODY
    )

    artifact = extract(page)

    assert [block["text"] for block in artifact["blocks"]] == ["Ducks return", *PROSE]
    assert artifact["attrs"]["furniture"] == [
        {"kind": "related", "text": text, "line_start": line, "line_end": line}
        for text, line in (
            ("Most Read Business Stories", 2),
            ("Housing market splits in two", 4),
            ("Boeing chief faces questions", 4),
        )
    ]


def test_a_related_or_you_may_like_list_is_furniture_inside_the_article_too() -> None:
    page = (
        "<main><article><h1>Ducks return</h1>"
        + BODY
        + "<h2>You May Like</h2>"
        + _links("Swans in winter", tag="p")
        + "<h4>Related</h4><ul>"
        + _links("Geese", "Herons")
        + "</ul></article></main>"
    )

    assert texts(page) == ["Ducks return", *PROSE]
    assert [kind for kind, _ in furniture(page)] == ["related"] * 5


def test_a_run_of_three_link_items_under_any_heading_on_a_page_with_no_main_is_furniture() -> None:
    page = (
        "<h1>Ducks return</h1>"
        + BODY
        + "<h3>Health Solutions From Our Sponsors</h3>"
        + _links("Controlling Heart Disease", "Sleep Better", "Treat Psoriasis", tag="p")
    )

    assert texts(page) == ["Ducks return", *PROSE]
    assert furniture(page) == [
        ("links", "Health Solutions From Our Sponsors"),
        ("links", "Controlling Heart Disease"),
        ("links", "Sleep Better"),
        ("links", "Treat Psoriasis"),
    ]


def test_an_index_pages_lists_of_links_are_its_content() -> None:
    # A documentation index: headings over lists of links, and little prose beside them.
    page = (
        "<h1>Guides</h1><p>Start here.</p><h2>Popular guides</h2><ul>"
        + _links("Installing", "Configuring", "Upgrading")
        + "</ul><h2>Reference</h2><ul>"
        + _links("Command line", "Settings", "Errors")
        + "</ul>"
    )

    assert texts(page) == [
        "Guides",
        "Start here.",
        "Popular guides",
        "Installing",
        "Configuring",
        "Upgrading",
        "Reference",
        "Command line",
        "Settings",
        "Errors",
    ]


def test_a_contents_list_of_the_pages_own_sections_is_content() -> None:
    by_anchor = (
        "<h2>Chapters</h2><ul>"
        + _links("Arrival", "Counting", "Nesting", href="#arrival")
        + "</ul><h1>Ducks return</h1>"
        + BODY
    )
    by_heading = "<h2>Contents</h2><ul>" + _links("Arrival", "Counting", "Nesting") + "</ul>" + BODY

    assert texts(by_anchor) == [
        "Chapters",
        "Arrival",
        "Counting",
        "Nesting",
        "Ducks return",
        *PROSE,
    ]
    assert texts(by_heading) == ["Contents", "Arrival", "Counting", "Nesting", *PROSE]


def test_an_articles_references_list_is_content() -> None:
    page = (
        "<h1>Ducks return</h1>"
        + BODY
        + "<h2>References</h2><ol>"
        + _links("https://example.org/survey-2024", "https://example.org/warden", "Bird atlas")
        + "</ol>"
    )

    assert texts(page)[-4:] == [
        "References",
        "https://example.org/survey-2024",
        "https://example.org/warden",
        "Bird atlas",
    ]
    wiki = page.replace("<h2>References</h2>", "<h2>References[<a href='?edit'>edit</a>]</h2>")
    assert texts(wiki)[-4] == "References[edit]"


def test_a_related_heading_over_prose_is_content() -> None:
    # A paper's "Related work" heads prose; only a run of link items after such a heading goes.
    page = "<h1>Ducks</h1>" + BODY + "<h2>Related work</h2><p>Smith counted geese in 2019.</p>"

    assert texts(page) == ["Ducks", *PROSE, "Related work", "Smith counted geese in 2019."]


def test_an_ad_slots_label_alone_is_furniture_as_readabilitys_ad_words_read_it() -> None:
    page = (
        "<p>The ducks came back on Monday.</p><div class='slot'><p>Advertisement</p></div>"
        "<p>Forty of them.</p><div>ADVERTISING</div><div>Publicité</div>"
    )

    assert texts(page) == ["The ducks came back on Monday.", "Forty of them."]
    assert furniture(page) == [
        ("advert", "Advertisement"),
        ("advert", "ADVERTISING"),
        ("advert", "Publicité"),
    ]


def test_a_loading_placeholder_alone_is_furniture() -> None:
    page = "<p>The ducks came back on Monday.</p><div>Loading...</div><p>Forty.</p><p>正在加载…</p>"

    assert texts(page) == ["The ducks came back on Monday.", "Forty."]
    assert furniture(page) == [("loading", "Loading..."), ("loading", "正在加载…")]


def test_an_advertising_heading_or_a_sentence_about_ads_or_loading_is_content() -> None:
    page = (
        "<h2>Advertising</h2><p>Ads paid for most of the paper until 2010.</p>"
        "<p>Loading the van took an hour.</p>"
    )

    assert texts(page) == [
        "Advertising",
        "Ads paid for most of the paper until 2010.",
        "Loading the van took an hour.",
    ]


def test_a_print_edition_note_with_its_headline_and_reprint_links_is_furniture() -> None:
    note = (
        "A version of this article appears in print on January 13, 2017, on Page A7 of the New"
        " York edition with the headline: Sanctions on Sudan Will Be Lifted. Order Reprints|"
        " Today's Paper|Subscribe"
    )
    page = (
        "<main><article><h1>Sanctions on Sudan to be lifted</h1>"
        "<p>On Friday, the Obama administration will announce a new Sudan strategy.</p>"
        "<footer><p>A version of this article appears in print on January 13, 2017, on Page A7"
        " of the <span>New York edition</span> with the headline: Sanctions on Sudan Will Be"
        " Lifted. <a href='/r'>Order Reprints</a>| <a href='/p'>Today's Paper</a>|"
        "<a href='/s'>Subscribe</a></p></footer></article></main>"
    )

    assert texts(page) == [
        "Sanctions on Sudan to be lifted",
        "On Friday, the Obama administration will announce a new Sudan strategy.",
    ]
    assert furniture(page) == [("print", note)]


def test_a_feedback_call_and_a_continue_reading_link_are_furniture() -> None:
    page = (
        "<p>The ducks came back on Monday.</p>"
        "<p><a href='#story-continues-1'>Continue reading the main story</a></p>"
        "<p>Forty of them.</p>"
        "<p>We’re interested in your feedback on this page. <a href='/f'>Tell us what you"
        " think.</a></p>"
    )

    assert texts(page) == ["The ducks came back on Monday.", "Forty of them."]
    assert [kind for kind, _ in furniture(page)] == ["navigation", "feedback"]


def test_a_sentence_about_an_article_in_print_is_content() -> None:
    page = (
        "<p>The first version of this article was written in 1962.</p>"
        "<p>Our print edition appears on Sundays; a version of it goes online on Monday.</p>"
    )

    assert texts(page) == [
        "The first version of this article was written in 1962.",
        "Our print edition appears on Sundays; a version of it goes online on Monday.",
    ]


def test_a_highlighters_comment_class_inside_code_is_no_furniture_hint() -> None:
    page = (
        '<pre class="language-js"><code class="language-js"><span class="token comment">'
        "// load-add.js</span>\nconst x = 1;</code></pre>"
        '<p>Inline <code class="comment">x</code> too.</p>'
    )

    assert texts(page) == ["// load-add.js\nconst x = 1;", "Inline x too."]
    assert furniture(page) == []


def test_a_print_version_link_alone_is_furniture() -> None:
    page = (
        "<p>The ducks came back on Monday.</p>"
        "<p class='printversion'><a href='?view=print'>Version zum Drucken</a></p>"
        "<p><a href='?print=1'>Printer-friendly version</a></p>"
    )

    assert texts(page) == ["The ducks came back on Monday."]
    assert furniture(page) == [
        ("print", "Version zum Drucken"),
        ("print", "Printer-friendly version"),
    ]


def test_a_pager_pair_or_a_next_story_link_is_furniture_a_lone_next_button_is_content() -> None:
    page = (
        "<p>The ducks came back on Monday.</p>"
        "<p><a href='/1'>« Vorige</a> | <a href='/3'>Nächste »</a></p>"
        "<p><a href='/3'>Next story →</a></p>"
        "<h3>Add-ons</h3><p><a href='#themes' role='button'>Next</a></p>"
    )

    assert texts(page) == ["The ducks came back on Monday.", "Add-ons", "Next"]
    assert furniture(page) == [
        ("navigation", "« Vorige | Nächste »"),
        ("navigation", "Next story →"),
    ]


def test_a_link_to_the_comments_in_another_language_is_furniture() -> None:
    page = (
        "<p>The ducks came back on Monday.</p>"
        "<p><a href='/forum'><b>Kommentare lesen (1 Beitrag)</b></a></p>"
        "<p><a href='#c'>12 commentaires</a></p>"
        "<h2>Kommentare</h2><p>Kommentare lesen wir jeden Tag, sagt die Redaktion.</p>"
    )

    assert texts(page) == [
        "The ducks came back on Monday.",
        "Kommentare",
        "Kommentare lesen wir jeden Tag, sagt die Redaktion.",
    ]
    assert [kind for kind, _ in furniture(page)] == ["comments", "comments"]


def test_a_most_read_box_is_furniture_by_its_class_in_one_word_or_two() -> None:
    # Its label is in whatever language ("les plus partagés"); its class names it.
    page = (
        "<main><article><h1>Ducks return</h1>"
        + BODY
        + "</article>"
        + "<div class='most-shared link-flow'><span class='name'>les plus partagés</span><ol>"
        + _links("Une jupe pas très laïque")
        + "</ol></div>"
        + "<div class='mostRead'><b>Top</b><ol>"
        + _links("Housing market splits")
        + "</ol></div>"
        + "<div id='meistgelesen_tabbox'><ol>"
        + _links("Apple Watch: Erste Testberichte")
        + "</ol></div></main>"
    )

    assert texts(page) == ["Ducks return", *PROSE]
    assert [kind for kind, _ in furniture(page)] == ["related"] * 5


def test_a_most_read_heading_in_another_language_and_its_links_are_furniture() -> None:
    page = (
        "<main><article><h1>Ducks return</h1>"
        + BODY
        + "<h3>Meistgelesene Artikel</h3><ul>"
        + _links("Apple Watch: Erste Testberichte", "LG kündigt 8K-iMac an")
        + "</ul><h3>Lo más leído</h3><ul>"
        + _links("Cómo contar patos", "Garzas en invierno")
        + "</ul><h3>À lire aussi</h3><ul>"
        + _links("Les canards reviennent")
        + "</ul></article></main>"
    )

    assert texts(page) == ["Ducks return", *PROSE]
    assert [kind for kind, _ in furniture(page)] == ["related"] * 8


def test_a_most_read_label_set_as_a_paragraph_heads_its_links_a_read_more_one_does_not() -> None:
    # A span's "les plus partagés" over the site's most shared is the box's label; a paragraph
    # "Read more:" in the article introduces its own further reading (readability keeps it).
    page = (
        "<main><article><h1>Ducks return</h1>"
        + BODY
        + "<p>Read more:</p>"
        + _links("Swans in winter", tag="p")
        + "</article><div class='box'><span>Vidéos les plus vues</span><ul>"
        + _links("Fatou Diome", "Cérémonie des Molières")
        + "</ul></div></main>"
    )

    assert texts(page) == ["Ducks return", *PROSE, "Read more:", "Swans in winter"]
    assert furniture(page) == [
        ("related", "Vidéos les plus vues"),
        ("related", "Fatou Diome"),
        ("related", "Cérémonie des Molières"),
    ]


def _ticker(*items: str) -> str:
    return "".join(
        f"<li><a href='/d/{at}'><span>{time}</span></a> <a href='/d#{at}'>{title}</a></li>"
        for at, (time, title) in enumerate(item.split(" ", 1) for item in items)
    )


def test_a_headings_pilcrow_link_as_sphinx_and_mkdocs_write_it_is_furniture() -> None:
    page = (
        '<main><h1 id="comunas">Comunas de CABA<a class="headerlink" href="#comunas" '
        'title="Permanent link">&para;</a></h1><p>Las comunas de la Ciudad.</p>'
        '<h2 id="uso">Uso<a class="headerlink" href="#uso">¶</a></h2><p>Texto.</p></main>'
    )
    artifact = extract(page)

    assert [block["text"] for block in artifact["blocks"]] == [
        "Comunas de CABA",
        "Las comunas de la Ciudad.",
        "Uso",
        "Texto.",
    ]
    assert artifact["blocks"][3]["section_path"] == ["Comunas de CABA", "Uso"]
    assert furniture(page) == [("permalink", "¶"), ("permalink", "¶")]


def test_a_news_ticker_of_timed_headlines_under_its_label_is_furniture() -> None:
    page = (
        "<main><article><h1>Ducks return</h1>"
        + BODY
        + "</article><div class='live'><a href='/direct/'>Direct</a><ul>"
        + _ticker(
            "14:44 Accusations de viols : militaires mis en cause",
            "14:32 Un artiste arrêté pour avoir coloré un geyser",
            "13:54 En Islande, tuer un Basque est désormais interdit",
        )
        + "<li><a href='/d/9'>13:43</a> <a href='/d#9'>Défense.</a> La vente de 24 avions"
        " représente un contrat de 6,3 milliards d'euros.</li>" + "</ul></div></main>"
    )

    assert texts(page) == ["Ducks return", *PROSE]
    assert [kind for kind, _ in furniture(page)] == ["ticker"] * 5


def test_a_live_blogs_timed_entries_and_a_programmes_timed_links_are_content() -> None:
    # A live blog's entries are its story (their words are not their links); a conference
    # programme's times stand under no ticker's label.
    entries = [
        "14:44 The warden counted forty ducks on the north shore this morning, more than last"
        " year.",
        "14:32 The council says the path will close in April, as it did two years ago.",
        "13:54 Birdwatchers have gathered at the lake since dawn, the warden says.",
    ]
    programme = ["09:00 Counting ducks", "10:30 Herons in winter", "12:00 The survey's future"]
    page = (
        "<main><h1>Ducks return</h1>"
        + BODY
        + "<h2>Live</h2><ul>"
        + "".join(f"<li>{entry} <a href='/src'>Source</a></li>" for entry in entries)
        + "</ul><h2>Programme</h2><ul>"
        + _ticker(*programme)
        + "</ul></main>"
    )

    assert texts(page) == [
        "Ducks return",
        *PROSE,
        "Live",
        *(f"{entry} Source" for entry in entries),
        "Programme",
        *programme,
    ]
