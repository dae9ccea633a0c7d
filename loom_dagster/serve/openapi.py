"""The JSON API's OpenAPI document (GET /v1/openapi.json)."""

from __future__ import annotations

from typing import Any

from loom_dagster.serve import bounds

_ERROR = {
    "description": "an error: {error: {code, message}}",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
}
_OK = {"description": "the answer", "content": {"application/json": {"schema": {"type": "object"}}}}


def _operation(
    summary: str, body: dict[str, Any] | None = None, path_param: str = ""
) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "summary": summary,
        "security": [{"bearer": []}],
        "responses": {
            "200": _OK,
            "400": _ERROR,
            "401": _ERROR,
            "404": _ERROR,
            "413": _ERROR,
            "504": _ERROR,
        },
    }
    if path_param:
        operation["parameters"] = [
            {"name": path_param, "in": "path", "required": True, "schema": {"type": "string"}}
        ]
    if body is not None:
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": body}},
        }
    return operation


def document() -> dict[str, Any]:
    strings = {"type": "array", "items": {"type": "string"}, "maxItems": bounds.MAX_FILTER_VALUES}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Loom",
            "version": "1",
            "description": "Read-only; scoped by bearer token.",
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Error": {
                    "type": "object",
                    "properties": {
                        "error": {
                            "type": "object",
                            "properties": {
                                "code": {"type": "string"},
                                "message": {"type": "string"},
                            },
                        }
                    },
                }
            },
        },
        "paths": {
            "/v1/search": {
                "post": _operation(
                    "hybrid search, each hit with its passage and citation",
                    {
                        "type": "object",
                        "required": ["query"],
                        "additionalProperties": False,
                        "properties": {
                            "query": {"type": "string", "maxLength": bounds.MAX_QUERY_CHARS},
                            "k": {"type": "integer", "minimum": 1, "maximum": bounds.MAX_K},
                            "filters": {
                                "type": "object",
                                "additionalProperties": False,
                                "properties": {
                                    "sources": strings,
                                    "formats": strings,
                                    "block_types": strings,
                                    "tags": strings,
                                    "path_prefix": {"type": "string"},
                                },
                            },
                        },
                    },
                )
            },
            "/v1/passages/{id}": {
                "get": _operation("a passage with its neighbours", path_param="id")
            },
            "/v1/documents/{target}": {
                "get": _operation("a document (SOURCE:PATH or revision key)", path_param="target")
            },
            "/v1/datasets": {"get": _operation("the served datasets")},
            "/v1/datasets/{name}": {"get": _operation("one dataset", path_param="name")},
            "/v1/query": {
                "post": _operation(
                    "a typed plan",
                    {
                        "type": "object",
                        "required": ["plan"],
                        "properties": {"plan": {"type": "object"}},
                    },
                )
            },
            "/v1/sql": {
                "post": _operation(
                    "one allowlisted SELECT",
                    {
                        "type": "object",
                        "required": ["statement"],
                        "properties": {
                            "statement": {"type": "string", "maxLength": bounds.MAX_SQL_CHARS}
                        },
                    },
                )
            },
            "/v1/formats": {"get": _operation("the formats the extractors take")},
        },
    }
