"""HTML: the standard library's html.parser, read into blocks as the seed's "HTML." says.

reader.py reads a page into blocks (its docstring holds the rules), tables.py places a table's
cells, decoding.py finds the encoding a page declares, furniture.py tells page furniture
(navigation, share buttons, comment counts, newsletter and cookie boxes) from the page's content.
"""

from extractor_sandbox.formats.html.decoding import declared_encoding, page_encoding
from extractor_sandbox.formats.html.reader import (
    PARSER,
    PARSER_VERSION,
    _colspan,
    _Reader,
    _rowspan,
    extract_html,
)

__all__ = [
    "PARSER",
    "PARSER_VERSION",
    "_Reader",
    "_colspan",
    "_rowspan",
    "declared_encoding",
    "page_encoding",
    "extract_html",
]
