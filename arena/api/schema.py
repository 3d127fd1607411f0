"""OpenAPI post-processing: the error responses every operation can give, documented once.

drf-spectacular documents the success responses of each view; the errors come from DRF and the
platform's middleware for any operation: 400 (bad input: field → messages, or ``detail``), 401
(a bad or missing token or session), 403 (not yours, not staff, or no CSRF token), 404, 405, 409
(a state transition that does not apply), 413 (a request over ``ARENA_MAX_REQUEST_BYTES``), 415 (a
body type the operation does not parse), 429 (throttled). Each is JSON: ``{"detail": "..."}``,
or for 400 an object of messages by field.
"""

from __future__ import annotations

from typing import Any

_DETAIL = {
    "type": "object",
    "properties": {"detail": {"type": "string"}},
    "required": ["detail"],
}
_VALIDATION = {
    "type": "object",
    "description": "messages by input field (lists of strings, nested for nested input), or "
                   "``detail``",
    "additionalProperties": True,
}
_ERRORS = {
    "400": ("Bad input: the messages say what to change", "ValidationErrors"),
    "401": ("Not signed in, or a bad token", "Error"),
    "403": ("Not allowed (not the owner, not staff), or no CSRF token", "Error"),
    "404": ("No such object, or no such page", "Error"),
    "405": ("Method not allowed", "Error"),
    "413": ("The request body is too large", "Error"),
    "415": ("Unsupported body type", "Error"),
    "429": ("Throttled: retry after the Retry-After header's seconds", "Error"),
}
_UNSAFE_ONLY = {"409", "413", "415"}


def document_errors(result: dict[str, Any], generator, request, public) -> dict[str, Any]:
    """drf-spectacular ``POSTPROCESSING_HOOKS`` entry: add the error responses to every
    operation (an operation's own documented response for a code wins)."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas.setdefault("Error", _DETAIL)
    schemas.setdefault("ValidationErrors", _VALIDATION)
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            unsafe = method.lower() in ("post", "put", "patch", "delete")
            for code, (description, name) in _ERRORS.items():
                if code in _UNSAFE_ONLY and not unsafe:
                    continue
                operation["responses"].setdefault(code, {
                    "description": description,
                    "content": {"application/json": {
                        "schema": {"$ref": f"#/components/schemas/{name}"}
                    }},
                })
    return result


#: Array properties whose items may be null, by component: drf-spectacular does not mark a list's
#: nullable child (the cross-table's diagonal cell is null).
_NULLABLE_ITEMS = {"CrossRow": ("results",)}


def nullable_items(result: dict[str, Any], generator, request, public) -> dict[str, Any]:
    """drf-spectacular ``POSTPROCESSING_HOOKS`` entry: the items of ``_NULLABLE_ITEMS`` as
    ``nullable`` (a ``$ref`` wrapped in ``allOf``, as OpenAPI 3.0 needs)."""
    schemas = result.get("components", {}).get("schemas", {})
    for component, names in _NULLABLE_ITEMS.items():
        for name in names:
            prop = schemas[component]["properties"][name]
            items = prop["items"]
            if "$ref" in items:
                items = {"allOf": [items]}
            prop["items"] = {**items, "nullable": True}
    return result
