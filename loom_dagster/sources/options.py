"""The extraction options a source sets per glob: parsed, checked, and the JSON a revision's
key and its extraction carry."""

from __future__ import annotations

import codecs
import fnmatch
import json
from collections.abc import Sequence

from loom_dagster.contract.formats import FORMATS
from loom_dagster.display import bounded
from loom_dagster.errors import SourceError
from loom_dagster.sources.model import OPTION_NAMES, SQL_DIALECTS, OptionRule, Source


def parse_option(spec: str) -> OptionRule:
    """`[GLOB:]NAME=VALUE` as a rule; no glob means every file. Raises invalid_option."""
    target, equals, value = spec.partition("=")
    glob, colon, name = target.rpartition(":")
    if not equals or not name:
        raise SourceError(
            f"option {_shown(spec)} is not [GLOB:]NAME=VALUE (e.g. 'legacy/*.txt:encoding=latin-1')",
            code="invalid_option",
        )
    return check_option(OptionRule(glob if colon else "**/*", name.strip(), value.strip()))


def check_option(rule: OptionRule) -> OptionRule:
    """The rule, if the contract defines its option and takes its value; else invalid_option."""
    name, value = rule.name, rule.value
    if not rule.glob:
        raise SourceError(f"option {_shown(rule.spec())} has an empty glob", code="invalid_option")
    if name == "encoding":
        try:
            # A bytes-to-bytes codec (base64, zlib) or `undefined` decodes no text.
            b"a".decode(codecs.lookup(value).name, "ignore")
        except (LookupError, UnicodeError):
            raise SourceError(
                f"encoding {_shown(value)} is not a known text codec", code="invalid_option"
            ) from None
    elif name == "sql_dialect":
        if value not in SQL_DIALECTS:
            raise SourceError(
                f"sql_dialect {_shown(value)} is not a dialect (one of {', '.join(sorted(SQL_DIALECTS))})",
                code="invalid_option",
            )
    elif name == "format":
        if value not in FORMATS:
            raise SourceError(
                f"format {_shown(value)} is not one of {', '.join(FORMATS)}", code="invalid_option"
            )
    else:
        raise SourceError(
            f"unknown option {_shown(name)} (options: {', '.join(OPTION_NAMES)})",
            code="invalid_option",
        )
    return rule


def _shown(text: str) -> str:
    # The user's own input, quoted, with controls escaped and a long value cut.
    return bounded(repr(text), 80)


def options_json(source: Source, relative: str) -> str:
    """The options that apply to `relative`, as canonical JSON: a later rule wins over an earlier."""
    chosen: dict[str, str] = {}
    for rule in source.options:
        if _included(relative, (rule.glob,)):
            chosen[rule.name] = rule.value
    return json.dumps(chosen, sort_keys=True, separators=(",", ":"))


def _included(relative: str, globs: Sequence[str]) -> bool:
    return any(
        fnmatch.fnmatch(relative, g) or fnmatch.fnmatch(relative, g.removeprefix("**/"))
        for g in globs
    )
