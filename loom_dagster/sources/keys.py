"""Names and keys: source names, tags, document ids, and the revision key the Dagster UI can
select and backfill (`<path trace>~<10 hex>@<first 16 hex of the sha256>`)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from loom_dagster.display import printable
from loom_dagster.errors import SourceError

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
KEY_PATTERN = re.compile(r"^[A-Za-z0-9._~@-]+$")


def source_name_for(folder: Path) -> str:
    """A default source name: the folder's own name, made key-safe."""
    return _UNSAFE.sub("-", folder.name).strip("-") or "source"


def validate_source_name(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", name):
        raise SourceError(
            f"source name {name!r} must be 1-64 letters, digits, '.', '_' or '-'",
            code="invalid_source",
        )
    return name


_TAG = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")


def validate_tag(tag: str) -> str:
    """A tag as stored and matched: lowercase, so `--tag Finance` and `--tag finance` agree."""
    folded = tag.strip().lower()
    if not _TAG.fullmatch(folded):
        raise SourceError(
            f"tag {printable(tag)!r} must be 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit",
            code="invalid_tag",
        )
    return folded


def document_digest(source: str, path: str) -> str:
    """10 hex of (source, path): what a document's id and each of its revision keys end in."""
    return hashlib.sha256(f"{source}\0{path}".encode()).hexdigest()[:10]


def document_id(source: str, path: str) -> str:
    slug = _UNSAFE.sub("-", posixpath_name(path)).strip("-")[:40] or "file"
    return f"{slug}~{document_digest(source, path)}"


# The readable part of a revision key: the file's name first, then its folders, so the UI, which
# cuts a long key in its middle, still shows which file a partition is (`disk-full.md__runbooks~…
# …3ad11cfbdc946383`), and its partition filter finds a file by its name or its folder; the digest
# after it tells apart two paths that read the same here. Keys made before (issue 28: the path in
# order, its end kept) stay valid: they are only ever read back from the catalog, and a file
# scanned again with the same bytes keeps the key it was registered under.
PATH_TRACE_CHARS = 80


def path_trace(path: str) -> str:
    """`runbooks/disk full.md` -> `disk-full.md__runbooks`: the name, then its folders in order,
    key-safe, its start kept."""
    parts = [_UNSAFE.sub("-", part).strip("-") or "-" for part in path.split("/")]
    trace = "__".join([parts[-1], *parts[:-1]])
    return trace[:PATH_TRACE_CHARS].strip("_-.") or "file"


def posixpath_name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def revision_key(source: str, path: str, sha256: str, options: str = "{}") -> str:
    """`<path trace>~<10 hex of (source, path)>@<16 hex of the sha256>`, then `~<10 hex of the
    options>` if any apply.

    The options are part of the key because a revision is what was extracted: the same bytes
    read with another encoding or as another format are another artifact, so a change of
    the options that apply to a file makes a new revision (and a new partition) of it, and a
    file no option applies to keeps the key it always had.
    """
    key = f"{path_trace(path)}~{document_digest(source, path)}@{sha256[:16]}"
    if options != "{}":
        key += "~" + hashlib.sha256(options.encode()).hexdigest()[:10]
    assert KEY_PATTERN.match(key), key
    return key


_REVISION_KEY = re.compile(r"^[A-Za-z0-9._-]+~([0-9a-f]{10})@[0-9a-f]{16}(?:~[0-9a-f]{10})?$")


def key_document_digest(key: str) -> str | None:
    """The digest of (source, path) a revision key carries, the part after `~` in its
    document's id; None for a string no `revision_key` could have made."""
    found = _REVISION_KEY.match(key)
    return found.group(1) if found else None
