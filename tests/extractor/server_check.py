"""What the server makes of an artifact: every test of a parser checks its output through it."""

from __future__ import annotations

import json
from typing import Any

from loom_dagster.contract.validate import parse_artifact


def validated(artifact: dict[str, Any], original: bytes | str) -> dict[str, Any]:
    """The artifact, once parse_artifact (the server's check of contract v1) has accepted it."""
    size = len(original.encode("utf-8") if isinstance(original, str) else original)
    raw = json.dumps(artifact, ensure_ascii=False, allow_nan=False).encode("utf-8")
    parse_artifact(raw, expected_format=artifact["format"], original_size=size)
    return artifact
