"""The search of one home with its index and legs kept open between requests: the resident
searcher (cli/resident_server.py) and `loom serve` (serve/) share it. Each search prepares the
home as every command does and re-reads the index (the lexical reader reloads, a rebuilt search
folder is opened afresh, the vector manifest is checked), so a revision published or retired
since the last request is in, or gone from, the next answer."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loom_dagster.search.legs import Leg, SearchFilter
    from loom_dagster.search.lexical import LexicalIndex
    from loom_dagster.search.service import SearchHit
    from loom_dagster.settings import LoomSettings


class HomeSearcher:
    """The search of one home with its index and legs kept open between requests."""

    def __init__(self, settings: LoomSettings) -> None:
        self.settings = settings
        self._index: LexicalIndex | None = None
        self._index_identity: tuple[int, int] | None = None
        self._vectors: Leg | None = None

    def find(self, text: str, search_filter: SearchFilter, limit: int) -> list[SearchHit]:
        from loom_dagster.search.service import default_legs, search

        self.settings.prepare()  # as open_index() does for an in-process search
        index = self._current_index()
        return search(
            index, text, search_filter, limit=limit, legs=default_legs(index, self._leg(index))
        )

    def _current_index(self) -> LexicalIndex:
        from loom_dagster.search.lexical import LexicalIndex

        status = os.stat(self.settings.search_dir)
        identity = (status.st_dev, status.st_ino)
        if self._index is None or identity != self._index_identity:
            # A search folder removed and rebuilt is a new index: open it afresh.
            self._index, self._index_identity, self._vectors = (
                LexicalIndex(self.settings.search_dir),
                identity,
                None,
            )
        return self._index

    def _leg(self, index: LexicalIndex) -> Leg | None:
        from loom_dagster.search.service import open_vector_leg
        from loom_dagster.search.vector_files import MANIFEST as VECTOR_MANIFEST

        # No manifest, no vector leg: what an in-process search runs when nothing is embedded.
        if not (self.settings.vectors_dir / VECTOR_MANIFEST).is_file():
            return None
        if self._vectors is None:
            self._vectors = open_vector_leg(index)
        return self._vectors

    def index(self) -> LexicalIndex:
        """The current index (reopened when its folder was rebuilt), the home prepared once:
        a long-lived server checks only the search folder's identity per request, and
        prepares the home again only when that folder is gone."""
        if self._index is None:
            self.settings.prepare()
        try:
            return self._current_index()
        except FileNotFoundError:
            self.settings.prepare()
            return self._current_index()
