"""The REST API as the command-line client uses it: a server, a token kept between runs, and one
method per call. Errors come back as ``ApiError`` with the server's message."""

from __future__ import annotations

import io
import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

DEFAULT_SERVER = "http://127.0.0.1:8000"


class NotTheApi(ValueError):
    """The server answered, but not as the arena's API does (JSON): most likely ``--server``
    names another site, or a path under the arena's address."""

    def __init__(self, server: str, status: int, response: requests.Response) -> None:
        kind = response.headers.get("Content-Type", "no content type").split(";")[0]
        why = (
            "the server, or a proxy in front of it, is failing: try again later"
            if status >= 500 or status == 413 else
            "is --server the arena's address (e.g. http://127.0.0.1:8000, no path)?"
        )
        super().__init__(
            f"the server at {server} answered {status} with {kind}, not the arena API's JSON: "
            + why
        )


class ApiError(Exception):
    """The server refused a call; ``str()`` is its message, field by field."""

    def __init__(self, status: int, body: Any) -> None:
        self.status = status
        self.body = body
        super().__init__(_describe(status, body))


def _describe(status: int, body: Any) -> str:
    if isinstance(body, dict) and set(body) == {"detail"}:
        return f"{status}: {body['detail']}"
    if isinstance(body, dict):
        parts = []
        for name, messages in body.items():
            text = " ".join(messages) if isinstance(messages, list) else str(messages)
            parts.append(text if name in ("detail", "non_field_errors") else f"{name}: {text}")
        return f"{status}: " + "; ".join(parts)
    return f"{status}: {body}"


def config_dir() -> Path:
    """Where tokens are kept: ``$ARENA_CLI_CONFIG``, else ``~/.config/quatresept-arena``."""
    found = os.environ.get("ARENA_CLI_CONFIG")
    if found:
        return Path(found)
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "quatresept-arena"


def _tokens_file() -> Path:
    return config_dir() / "tokens.json"


def saved_tokens() -> dict[str, str]:
    try:
        return json.loads(_tokens_file().read_text())
    except (OSError, ValueError):
        return {}


def save_token(server: str, token: str) -> Path:
    """Keep ``token`` for ``server``, in a file readable by this user alone from the moment it
    exists (created 0600 in a 0700 folder, then renamed into place)."""
    path = _tokens_file()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.parent.chmod(0o700)  # a folder made before, by hand or by an older client
    tokens = saved_tokens()
    tokens[server] = token
    scratch = path.with_name(f".{path.name}.{os.getpid()}")
    descriptor = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(json.dumps(tokens, indent=2))
    os.replace(scratch, path)
    return path


def package_bytes(path: Path) -> tuple[str, bytes]:
    """A bot file as it is, or a folder zipped as a package (``bot.json`` or ``main.py`` /
    ``main.js`` at its top: docs/bots.md); hidden files and ``__pycache__`` left out."""
    if path.is_file():
        return path.name, path.read_bytes()
    if not path.is_dir():
        raise FileNotFoundError(f"{path} is neither a bot file nor a folder")
    def hidden(entry: Path) -> bool:
        return any(p.startswith(".") or p == "__pycache__" for p in entry.relative_to(path).parts)

    entries = sorted(p for p in path.rglob("*") if not hidden(p))
    links = [str(p.relative_to(path)) for p in entries if p.is_symlink()]
    if links:  # the platform refuses them too, and a link may point at files outside the folder
        raise ValueError(
            f"{path} holds symbolic links, which a bot package may not: {', '.join(links[:5])}; "
            "copy the files in instead"
        )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in (p for p in entries if p.is_file()):
            archive.write(file, "/".join(file.relative_to(path).parts))
    return f"{path.resolve().name}.zip", buffer.getvalue()


@dataclass
class Api:
    """Calls to one server, with its saved token when there is one."""

    server: str
    token: str | None = None
    timeout: float = 30

    @classmethod
    def for_server(cls, server: str) -> Api:
        server = server.rstrip("/")
        return cls(server=server, token=saved_tokens().get(server))

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Token {self.token}"
        response = requests.request(method, self.server + path, headers=headers,
                                    timeout=self.timeout, **kwargs)
        if not response.content and response.status_code < 400:
            return None  # 204
        try:
            body = response.json()
        except ValueError:
            raise NotTheApi(self.server, response.status_code, response) from None
        if response.status_code >= 400:
            raise ApiError(response.status_code, body)
        return body

    def login(self, username: str, password: str) -> str:
        body = self._call("POST", "/api/token/", json={"username": username,
                                                        "password": password})
        self.token = body["token"]
        return self.token

    def upload_bot(self, name: str, filename: str, data: bytes) -> dict[str, Any]:
        return self._call("POST", "/api/bots/", data={"name": name},
                          files={"file": (filename, data)})

    def upload_version(self, bot: int, filename: str, data: bytes) -> dict[str, Any]:
        return self._call("POST", f"/api/bots/{bot}/versions/", files={"file": (filename, data)})

    def version(self, version: int) -> dict[str, Any]:
        return self._call("GET", f"/api/versions/{version}/")

    def create_tournament(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._call("POST", "/api/tournaments/", json=body)

    def tournament(self, tournament: int) -> dict[str, Any]:
        return self._call("GET", f"/api/tournaments/{tournament}/")

    def match(self, match: int) -> dict[str, Any]:
        return self._call("GET", f"/api/matches/{match}/")

    def replay(self, match: int) -> dict[str, Any]:
        return self._call("GET", f"/api/matches/{match}/replay/")
