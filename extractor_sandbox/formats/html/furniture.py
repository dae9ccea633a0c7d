"""Page furniture in HTML: what a page shows around its content (navigation, share buttons,
comment counts and comment sections, newsletter and cookie boxes, sidebars, footers), told apart
as readability and trafilatura tell it, from the page's own signals.

- Elements: nav and footer, and the roles navigation, banner, contentinfo and search, are
  furniture of their kind; aside (and role="complementary") only on a page that marks its main
  content, outside it. An aside or footer inside the main content is the article's (a pull quote,
  a film's review, its author).
- Hints: an element whose class or id holds a word of furniture (share, social, comments,
  newsletter, subscribe, cookie, consent, banner, breadcrumb, nav, sidebar, related, advert, ...),
  a word being a run of letters between the name's other characters ("share-buttons" holds
  "share"; "shared" does not), unless the name also says content (article, body, content, main,
  post, entry, story: "l-sidebar-fixed l-article-body" holds the article, as readability reads
  it) or is an id of more than three words (a heading's slug, "sharing-with-a-single-developer");
  and a box of the site's most read (shared, viewed, popular...) stories named in one word or two
  ("most-shared", "mostRead", "most_popular", "meistgelesen"), kind "related", whatever the
  language of its label ("les plus partagés"); a heading's link to itself as Sphinx and MkDocs
  write it (class "headerlink", its "¶"), kind "permalink".
- Text: a block that says nothing but furniture's usual words ("Share on Facebook", "212
  comments", "Reader comments", "Skip to content", "Continue reading the main story"); a block
  (not a heading) that is only a label, as readability's adWords and loadingWords read it
  ("Advertisement", "Loading..."), or opens with a newspaper's note about the article (its
  print-edition line, which repeats the headline; its feedback call), or is one of the page's
  own controls (a print-version link, a pager, a link to the comments, in a few languages).
- Link density: where a page marks its main content (main, article, role="main"), a paragraph or
  list item outside it whose words are all link text (a menu) is furniture of kind "links".
- Link lists (link_lists): a heading followed by a run of list items or paragraphs whose words are
  (nearly) all link text, as trafilatura's link-density test and readability's conditional
  cleaning read a block of links: kind "related" where the heading says what such blocks say
  ("Most Read Business Stories", "Related", "You May Like"; "Les plus partagés", "Meistgelesene
  Artikel", "Lo más leído", "Mais lidas", "I più letti", "Lire aussi"), anywhere on the page, a
  short paragraph naming a most read list (a label set as a span) heading its run too, not a
  "Read more:" paragraph (an article's own further reading); on a page that
  marks no main content, kind "links" for a run of three or more whatever its heading, unless its
  links point inside the page (a contents list) or its heading names a contents list or an
  article's references. Either only on a page with prose elsewhere, more of it than the run
  holds: an index page's list of links, its content, stays.
- Tickers: a label ("Direct", "Live", "Latest news", "Liveticker", "Dernières infos") over a run
  of three or more list items each opening with the time it was posted and holding a link, half
  of them or more (nearly) all link text, is the site's feed of other stories, kind "ticker", on
  a page with prose elsewhere; a live blog's entries say more than their links, and a
  programme's times stand under no ticker's label.

The content signals win: a main element (or role="main") or an h1 inside furniture makes that
furniture content (a page wrapped in a box named "comments-open" keeps its article), html, body,
main and article are never furniture by their hints, and a page whose every block would be
furniture keeps all of them as content. The reader keeps furniture out of the blocks and lists it
in attrs.furniture ({"kind", "text", "line_start", "line_end"}), as the PDF reader keeps running
headers, so chunking and ranking never see it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

# Elements that are furniture by what they are.
_TAG_KINDS = {"nav": "navigation", "aside": "aside", "footer": "footer"}
_ROLE_KINDS = {
    "navigation": "navigation",
    "banner": "banner",
    "complementary": "aside",
    "contentinfo": "footer",
    "search": "navigation",
}
# Elements whose hints are never read: the page itself and its content's own containers.
NEVER_FURNITURE = frozenset({"html", "body", "main", "article"})
# Elements that mark the page's main content.
MAIN_TAGS = frozenset({"main", "article"})
# Elements that say something of themselves with no attribute.
SIGNAL_TAGS = frozenset(_TAG_KINDS) | MAIN_TAGS

# Words of a class or id that name furniture, by kind.
_HINT_KINDS = {
    "share": "share",
    "sharing": "share",
    "social": "share",
    "sharethis": "share",
    "addthis": "share",
    "comment": "comments",
    "comments": "comments",
    "disqus": "comments",
    "newsletter": "newsletter",
    "subscribe": "newsletter",
    "subscription": "newsletter",
    "signup": "newsletter",
    "cookie": "cookie",
    "cookies": "cookie",
    "consent": "cookie",
    "gdpr": "cookie",
    "onetrust": "cookie",
    "banner": "banner",
    "breadcrumb": "navigation",
    "breadcrumbs": "navigation",
    "nav": "navigation",
    "navbar": "navigation",
    "navigation": "navigation",
    "sidebar": "aside",
    "related": "related",
    "advert": "advert",
    "advertisement": "advert",
    "ads": "advert",
    "sponsored": "advert",
    "promo": "advert",
    # Sphinx's and MkDocs' link to a heading ("¶"), written inside the heading's element.
    "headerlink": "permalink",
}
# A box of the site's most read (shared, viewed...) articles, named in one word or two
# ("most-shared", "mostRead", "most_popular", heise's "meistgelesen_tabbox"): its links are other
# pages' headlines, whatever the language of its label ("les plus partagés").
_MOST_WORDS = frozenset({"read", "shared", "viewed", "popular", "commented", "emailed", "watched"})
_MOST_HINTS = frozenset(f"most{word}" for word in _MOST_WORDS) | {
    f"meist{word}" for word in ("gelesen", "gelesene", "gesehen", "kommentiert", "geteilt")
}
_WORD = re.compile(r"[a-z]+")
_W = r"[^\W\d_]+"  # a word of letters, accents kept
# Words that, beside a furniture word, name the content's own box (readability's rescue list).
_CONTENT_WORDS = frozenset({"article", "body", "content", "main", "post", "entry", "story"})
_SLUG_WORDS = 3  # an id of more words is a slug of the text it anchors
# Furniture only on a page that marks its main content, and outside it.
WEAK_KINDS = frozenset({"aside"})
# Content inside the main content: an article's aside (a pull quote) and footer (its author).
KEPT_IN_MAIN = frozenset({"aside", "footer"})

_SITES = r"(?:facebook|twitter|x|linkedin|reddit|whatsapp|pinterest|email|e-mail|telegram)"
_ITEM = rf"(?:share|tweet|copy link)(?: this(?: [a-z]+)?| (?:on|via|to|with) {_SITES})?"
_ANY = rf"(?:{_ITEM}|{_SITES}|print)"
_TEXT_KINDS = (
    # One share button, or a row of them ("Facebook Twitter Email"); "Email" alone is a label.
    (re.compile(rf"{_ITEM}(?: {_ANY})*|{_ANY}(?: {_ANY})+"), "share"),
    (
        re.compile(
            # Not "Comments" alone: a style guide's section is called that.
            r"(?:\d[\d,.]*k? (?:comments?|replies|responses)"
            r"|(?:reader|show|view|hide|leave a|add a|post a) comments?(?: \(\d[\d,]*\))?"
            r"|comments? \(\d[\d,]*\))"
        ),
        "comments",
    ),
    (
        re.compile(
            r"skip to (?:the )?(?:main )?(?:content|navigation|search)"
            # A link past the ads in an article to where its story goes on.
            r"|continue reading (?:the )?main story"
        ),
        "navigation",
    ),
    (
        re.compile(
            r"(?:sign up|subscribe|get|join)(?: now| today)?(?: to| for)?(?: our| the)?"
            r"(?: [a-z]+){0,3} newsletters?(?: [a-z]+){0,4}"
        ),
        "newsletter",
    ),
    (
        re.compile(
            r"(?:accept|reject|allow|decline)(?: all)? cookies|cookie (?:settings|preferences)"
        ),
        "cookie",
    ),
)
_TEXT_MAX = 120  # a block longer than this says more than furniture's words
# A block that is a label and nothing else, as readability's adWords and loadingWords toss it:
# an ad slot's "Advertisement", a widget's "Loading...". Not a heading: a report's section
# "Advertising" heads its prose.
_LABEL_KINDS = (
    (
        re.compile(
            r"(?:ad|ads|advertising|advertisement|publicit[eé]|werbung|anuncio|广告|реклама)"
        ),
        "advert",
    ),
    (re.compile(r"(?:loading|chargement|cargando|正在加载|загрузка)(?:…|\.\.\.)?"), "loading"),
)
# A newspaper's notes about the article, not its story: the print-edition line ("A version of
# this article appears in print on ..., on Page A7 of the New York edition with the headline:
# ..."), which repeats the headline, and the feedback call under it. Read from the block's
# opening words, so the headline and the reprint links after them go with it.
_NOTE_KINDS = (
    (
        re.compile(
            r"(?:a version of )?this (?:article|story|review|column|essay|editorial|op ed|interview)"
            r" (?:appears|appeared|was published) in (?:print|the (?:[a-z]+ ){0,4}print edition)"
        ),
        "print",
    ),
    (
        re.compile(
            r"(?:we re|we are) interested in your feedback on this (?:page|article)"
            r"|was this (?:page|article) (?:helpful|useful)"
        ),
        "feedback",
    ),
)
_NOTE_MAX = 400  # characters: a note is a sentence and its links, not a paragraph of the story
# A page's own controls alone in a block (not a heading), in the languages of the pages read: a
# link to the article's print version, a pager ("« Vorige | Nächste »"), a link to its comments.
_LETTERS = re.compile(rf"{_W}|\d+")
_PAGER_WORD = (
    r"(?:previous|prev|older|newer|next|vorige|vorherige|nächste|zurück|weiter|précédent|suivant"
    r"|anterior|siguiente)"
)
_PAGED = r"(?:post|posts|article|articles|page|story|entry|artikel|seite)"
_PAGER = rf"{_PAGER_WORD}(?: {_PAGED})?"
_COMMENTS = r"(?:kommentare?|commentaires?|comentarios?)"
_CONTROL_KINDS = (
    (
        re.compile(
            r"version zum drucken|druckversion|druckansicht|printer friendly(?: version| page)?"
            r"|print (?:this )?(?:article|page|story|post)|version imprimable"
            r"|imprimer (?:l article|cet article)|imprimir (?:el )?art[ií]culo"
        ),
        "print",
    ),
    # A pair ("« Vorige | Nächste »") or one that says what it pages through ("Next story"):
    # a lone "Next" can be a button of the page's own tabs.
    (
        re.compile(rf"{_PAGER} {_PAGER}|{_PAGER_WORD} {_PAGED}"),
        "navigation",
    ),
    (
        re.compile(
            rf"\d+ {_COMMENTS}|{_COMMENTS} \d+|{_COMMENTS} (?:lesen|anzeigen)(?: \d+ beitr(?:ag|äge))?"
            rf"|(?:voir les|ver los|ver) {_COMMENTS}"
        ),
        "comments",
    ),
)
# A cookie notice's opening words; the notice is a sentence or two, not a paragraph about cookies.
_COOKIE_NOTICE = re.compile(r"(?:we|this (?:web)?site|our (?:web)?site) uses? cookies\b")
_NOTICE_MAX = 300
# ... and says what a notice says (a recipe's "we use cookies in this recipe" does not).
_NOTICE_WORDS = re.compile(
    r"\b(?:experience|privacy|policy|consent|agree|accept|analytics|personali[sz]e"
    r"|advertising|browsing|settings|preferences|website|site)\b"
)


class Furniture:
    """An element read as furniture: its kind, the furniture it sits in, and whether a content
    signal inside it (main, role="main", h1) or inside furniture within it made it content."""

    __slots__ = ("kind", "parent", "content")

    def __init__(self, kind: str, parent: Furniture | None) -> None:
        self.kind = kind
        self.parent = parent
        self.content = False

    def make_content(self) -> None:
        """This furniture and the furniture it sits in are content after all."""
        furniture: Furniture | None = self
        while furniture is not None and not furniture.content:
            furniture.content = True
            furniture = furniture.parent


def signals(tag: str, attrs: list[tuple[str, str | None]]) -> tuple[str, bool]:
    """What an element says of itself: the furniture it is ("" for none), by its class, id, role
    or element, and whether it marks the page's main content (main, article, role="main")."""
    main = tag in MAIN_TAGS
    # A class or id names the furniture more closely than its element: an aside of class
    # "newsletter" is a newsletter box.
    kind = ""
    if attrs:
        for name, value in attrs:
            if not value:
                continue
            if name == "role":
                role = value.strip().lower()
                if role == "main":
                    main = True
                elif not kind:
                    kind = _ROLE_KINDS.get(role, "")
            elif not kind and (name == "class" or name == "id"):
                kind = _words_kind(value, name == "id")
        if tag in NEVER_FURNITURE:
            kind = ""
    return (kind or _TAG_KINDS.get(tag, "")), main


@lru_cache(maxsize=4_096)
def _words_kind(value: str, is_id: bool) -> str:
    """The furniture a class or id names; a page repeats a few class names many times."""
    words = _WORD.findall(value.lower())
    if is_id and len(words) > _SLUG_WORDS:
        return ""  # a heading's slug ("sharing-with-a-single-developer"), not a box's name
    if _CONTENT_WORDS.intersection(words):
        return ""  # "l-sidebar-fixed l-article-body": a layout that holds the content
    for at, word in enumerate(words):
        kind = _HINT_KINDS.get(word, "")
        if kind:
            return kind
        following = words[at + 1] if at + 1 < len(words) else ""
        if word in _MOST_HINTS or (word == "most" and following in _MOST_WORDS):
            return "related"
    return ""


def text_kind(text: str, heading: bool = False) -> str:
    """The furniture a block is by its words alone ("Share on Facebook", "212 comments",
    "Advertisement", "A version of this article appears in print on ..."); a heading's words
    are furniture only as a whole phrase of furniture, never as a label or a note."""
    if len(text) > _NOTE_MAX:
        return ""
    notice = " ".join(_WORD.findall(text.lower()))
    if not heading:
        for pattern, kind in _NOTE_KINDS:
            if pattern.match(notice):
                return kind
        label = text.strip().lower()
        for pattern, kind in _LABEL_KINDS:
            if pattern.fullmatch(label):
                return kind
        if len(text) <= _TEXT_MAX:
            control = " ".join(_LETTERS.findall(text.lower()))
            for pattern, kind in _CONTROL_KINDS:
                if pattern.fullmatch(control):
                    return kind
    if len(text) > _NOTICE_MAX:
        return ""
    if _COOKIE_NOTICE.match(notice) and _NOTICE_WORDS.search(notice):
        return "cookie"
    if len(text) > _TEXT_MAX:
        return ""
    words = " ".join(_WORD_OR_NUMBER.findall(text.lower()))
    for pattern, kind in _TEXT_KINDS:
        if pattern.fullmatch(words):
            return kind
    return ""


def link_dense(links: int, chars: int) -> bool:
    """Whether a block's words are (nearly) all link text: a menu, not prose."""
    return chars > 0 and links * 10 >= chars * 9


class LinkBlock(NamedTuple):
    """What link_lists reads of a block: its type, text, non-space characters, those inside
    links and inside links to the page itself ("#..."), and whether it is free: content so far,
    outside tables and code."""

    type: str
    text: str
    chars: int
    links: int
    anchors: int
    free: bool


# Headings over blocks of links to other pages: the words news, blog and shop pages put there.
# The site's most read (shared, viewed...) stories, in the languages of the pages read: "Most
# Read Business Stories", "Popular", "Les plus partagés", "Vidéos les plus vues", "Meistgelesene
# Artikel", "Las más leídas", "Mais lidas", "I più letti"; matched on the heading's letters
# (accents kept). Never an article's own words, so a short paragraph saying it (a label set as a
# span) heads a run too.
_MOST_HEADING = re.compile(
    rf"(?:{_W} )?(?:most|top) (?:read|popular|viewed|shared|emailed|commented|watched)"
    rf"(?: {_W}){{0,3}}"
    rf"|popular(?: {_W}){{0,3}}"
    rf"|(?:{_W} )?(?:les )?plus (?:lu|partagé|commenté|vu|populaire|consulté)e?s?"
    rf"(?: {_W}){{0,3}}"
    rf"|meist(?:gelesen|gesehen|kommentiert|geteilt)(?:e|en)?(?: {_W}){{0,2}}"
    r"|am meisten (?:gelesen|kommentiert|geteilt)"
    rf"|(?:lo |los |las )?más (?:leíd|vist|compartid|comentad)[oa]s?(?: {_W}){{0,3}}"
    rf"|(?:lo |los |las )?más populares?(?: {_W}){{0,3}}"
    rf"|(?:as |os )?mais (?:lid|vist|compartilhad|comentad)[oa]s(?: {_W}){{0,3}}"
    rf"|(?:i |le )?più (?:lett|vist|condivis|commentat|popolar)[ie](?: {_W}){{0,3}}"
)
# Headings over blocks of links to other pages: the words news, blog and shop pages put there
# ("Related", "You May Like", "Lire aussi", "Das könnte Sie auch interessieren"); not "Voir
# aussi", "Siehe auch": an article's references. Only a heading: "Read more:" in a paragraph
# introduces an article's own further reading.
_LIST_HEADING = re.compile(
    rf"(?:more )?related(?: {_W}){{0,4}}"
    rf"|(?:{_W} )*(?:trending|recommended)(?: {_W}){{0,3}}"
    r"|(?:you|we think you) (?:may|might|will|ll) (?:also )?(?:like|love|enjoy|be interested in)"
    rf"(?: {_W}){{0,2}}"
    r"|(?:other|what other) (?:people|readers|users) are (?:reading|viewing|watching)"
    rf"|more (?:from|on|in|stories|articles|news|posts|to explore|on this story)(?: {_W}){{0,3}}"
    r"|(?:read|up) next|read more|don t miss|in case you missed it|editor s picks"
    r"|(?:latest|recent) (?:news|stories|articles|posts|headlines)"
    r"|(?:à )?lire aussi|sur le même (?:sujet|thème)"
    r"|(?:das )?könnte (?:sie|dich) (?:auch )?interessieren"
    r"|mehr zum thema|(?:ähnliche|weitere) (?:artikel|beiträge|nachrichten)"
    r"|(?:también )?te puede (?:interesar|gustar)|(?:noticias|artículos|notas) relacionad[oa]s"
    r"|(?:leia|veja) também|articoli correlati|potrebbe interessarti"
)
_LIST_HEADING_MAX = 60  # characters: a heading longer than this is a headline or a section's
# Headings of lists of links that are the content's own: a contents list (the page's sections)
# and an article's references.
_CONTENTS_HEADING = re.compile(
    r"(?:(?:table of )?contents|on this page|in this (?:article|page|section|chapter)|index|toc"
    r"|references|sources(?: and links| links)?|bibliography|further reading|see also"
    r"|external links|links|notes|footnotes|citations|works cited)"
    r"(?: edit)?"  # a wiki's section link beside its heading ("References[edit]")
)
_LINKED = 8  # tenths of an item's characters inside links (trafilatura's 0.8)
_LIST_RUN = 3  # items a run needs to be furniture by its links alone
_PROSE_MIN = 400  # characters of prose a page needs elsewhere to have a body beside its lists


def list_heading(text: str) -> bool:
    """Whether a heading says what a block of links to other pages says ("Most Read Business
    Stories", "Related", "You May Like", "Les plus lus"); not "Related work" of a paper, which
    heads prose."""
    if len(text) > _LIST_HEADING_MAX:
        return False
    words = _heading_words(text)
    return bool(_MOST_HEADING.fullmatch(words) or _LIST_HEADING.fullmatch(words))


def most_heading(text: str) -> bool:
    """Whether a heading or label names the site's most read (shared...) stories."""
    return len(text) <= _LIST_HEADING_MAX and bool(_MOST_HEADING.fullmatch(_heading_words(text)))


def _heading_words(text: str) -> str:
    """A heading's words of letters, lowercased, accents kept ("don't" reads "don t")."""
    return " ".join(re.findall(_W, text.lower()))


def _label(block: LinkBlock, linked: bool) -> bool:
    """Whether a paragraph is a most-read list's label set as a span ("les plus partagés" over
    the site's most shared), not itself a link."""
    return block.type == "paragraph" and not linked and most_heading(block.text)


def link_lists(blocks: Sequence[LinkBlock], has_main: bool) -> dict[int, str]:
    """The blocks that are a heading and its run of link items, by index, with their kind."""
    linked = [
        block.free
        and block.type in ("list", "paragraph")
        and block.links > 0
        and block.links * 10 >= block.chars * _LINKED
        for block in blocks
    ]
    prose = sum(
        block.chars - block.links
        for block, link in zip(blocks, linked, strict=True)
        if block.free and not link and block.type in ("list", "paragraph")
    )
    found: dict[int, str] = {}
    for index, heading in enumerate(blocks):
        if not heading.free or not (heading.type == "heading" or _label(heading, linked[index])):
            continue
        end = index + 1
        while end < len(blocks) and linked[end]:
            end += 1
        run = blocks[index + 1 : end]
        if not run:
            continue
        chars = sum(block.chars for block in run)
        if prose < max(_PROSE_MIN, chars):
            continue  # the page's content is its lists: an index, a site map
        if list_heading(heading.text):
            kind = "related"
        elif heading.type != "heading":
            continue  # a label heads a run only as a most-read list's ("les plus partagés")
        elif (
            not has_main
            and len(run) >= _LIST_RUN
            and sum(block.anchors for block in run) * 2 < sum(block.links for block in run)
            and not _CONTENTS_HEADING.fullmatch(" ".join(_WORD.findall(heading.text.lower())))
        ):
            kind = "links"
        else:
            continue
        for at in range(index, end):
            found[at] = kind
    return found


# A news ticker: a label ("Direct", "Live", "Latest news", "Liveticker", "Dernières infos") over
# a run of list items each opening with the time it was posted and holding a link, half of them
# or more (nearly) all link text, a headline: the site's feed of other stories. A live blog's
# own entries say more than their links; a programme's times stand under no ticker's label.
_TICKER_LABEL = re.compile(
    r"(?:en )?(?:direct|continu|vivo|directo)|live(?: news| updates| feed)?|(?:live|news)?ticker"
    r"|(?:latest|breaking) (?:news|updates|headlines)|just in|news feed"
    r"|(?:le )?fil (?:info|d actu|d actualité|de l actu)|dernières? (?:infos?|nouvelles|minutes?)"
    r"|últimas? (?:noticias|hora)|al minuto|eilmeldungen|nachrichtenticker|ultime notizie"
    r"|in diretta"
)
_TICKER_LABEL_MAX = 40  # characters: a label, not a sentence
_POSTED = re.compile(r"\s*(?:[01]?\d|2[0-3])(?::|h)[0-5]\d(?!\d)")
_TICKER_RUN = 3  # items a run needs to be a ticker


def tickers(blocks: Sequence[LinkBlock]) -> dict[int, str]:
    """The blocks that are a ticker's label and its run of timed link items, by index."""
    prose = sum(
        block.chars - block.links
        for block in blocks
        if block.free and block.type in ("list", "paragraph")
    )
    found: dict[int, str] = {}
    for index, label in enumerate(blocks):
        if not _ticker_label(label):
            continue
        end = index + 1
        while (
            end < len(blocks)
            and blocks[end].free
            and blocks[end].type == "list"
            and blocks[end].links > 0
            and _POSTED.match(blocks[end].text)
        ):
            end += 1
        run = blocks[index + 1 : end]
        chars = sum(block.chars for block in run)
        headlines = sum(block.links * 10 >= block.chars * _LINKED for block in run)
        if len(run) < _TICKER_RUN or headlines * 2 < len(run):
            continue  # a live blog's entries: their words are the story's
        if prose - (chars - sum(block.links for block in run)) < _PROSE_MIN:
            continue  # the page's content is its feed (a ticker may outgrow a short story)
        for at in range(index, end):
            found[at] = "ticker"
    return found


def _ticker_label(block: LinkBlock) -> bool:
    """Whether a block is a ticker's label: a short heading or paragraph of a ticker's words."""
    if not block.free or block.type not in ("heading", "paragraph"):
        return False
    if len(block.text) > _TICKER_LABEL_MAX:
        return False
    return _TICKER_LABEL.fullmatch(" ".join(_LETTERS.findall(block.text.lower()))) is not None


_WORD_OR_NUMBER = re.compile(r"[a-z]+(?:-[a-z]+)?|\d[\d,.]*k?|\(\d[\d,]*\)")
