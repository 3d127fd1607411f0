"""The API's JSON parser: DRF's, with a body nested too deeply for Python's parser (a few
thousand ``[``) refused as a bad request (400) instead of escaping as a server error (500)."""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


class NestingSafeJSONParser(JSONParser):
    """``JSONParser`` whose only failure is ``ParseError``, however deep the body nests."""

    def parse(self, stream: Any, media_type: str | None = None,
              parser_context: dict[str, Any] | None = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deeply") from None
