"""Hostile uploads through the API, to a new bot and to a new version of an existing one: each is
a 4xx whose message says what is wrong, and nothing is stored (no blob, bot, version or match row,
nothing in the bot cache). Fast: part of ``make test``."""

from __future__ import annotations

import io
import os
import stat
import zipfile

import pytest
from django.conf import settings

from arena.models import Bot, BotVersion, Match, PackageBlob
from tests.arena.conftest import RANDOM_BOT, uploaded, zip_of

pytestmark = pytest.mark.django_db


def _zip_entries(entries: list[tuple[zipfile.ZipInfo | str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for info, body in entries:
            archive.writestr(info, body)
    return buffer.getvalue()


def _symlink_zip() -> bytes:
    link = zipfile.ZipInfo("main.py")
    link.create_system = 3
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    return _zip_entries([(link, b"/etc/passwd")])


def _bomb(megabytes: int) -> bytes:
    """Zeros, deflated about 1000:1."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("main.py", RANDOM_BOT)
        with archive.open("data.bin", "w", force_zip64=True) as stream:
            chunk = bytes(1 << 20)
            for _ in range(megabytes):
                stream.write(chunk)
    return buffer.getvalue()


def _lying_sizes() -> bytes:
    """A zip whose directory claims a 10-byte file that really inflates to 50 MB."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("main.py", RANDOM_BOT)
        archive.writestr("data.bin", bytes(50 << 20))
    data = bytearray(buffer.getvalue())
    real = (50 << 20).to_bytes(4, "little")
    data = data.replace(real, (10).to_bytes(4, "little"))  # local header and central directory
    return bytes(data)


def _non_utf8_name() -> bytes:
    """An entry name of raw bytes that are not UTF-8, without the zip's UTF-8 flag."""
    data = zip_of({"main.py": RANDOM_BOT, "XXXX.py": b"x = 1\n"})
    return data.replace(b"XXXX.py", b"\xff\xfe\xfd\xfc.py")


CASES = [
    # (what, filename, data, status, words the message must contain)
    ("zip bomb", "bot.zip", _bomb(20), 400, "zip bomb"),
    ("zip bomb over the unpacked cap", "bot.zip", _bomb(200), 400, "unpacks to more than"),
    ("zip lying about its sizes", "bot.zip", _lying_sizes(), 400, "'data.bin' cannot be unpacked"),
    ("path traversal", "bot.zip", zip_of({"main.py": RANDOM_BOT, "../../evil.py": b"x"}), 400,
     "'..'"),
    ("path traversal in a folder", "bot.zip",
     zip_of({"main.py": RANDOM_BOT, "lib/../../x.py": b"x"}), 400, "'..'"),
    ("symbolic link", "bot.zip", _symlink_zip(), 400, "symbolic link"),
    ("absolute path", "bot.zip", zip_of({"main.py": RANDOM_BOT, "/etc/cron.d/x": b"x"}), 400,
     "absolute path"),
    ("windows drive path", "bot.zip", zip_of({"C:/x.py": RANDOM_BOT}), 400, "absolute path"),
    ("empty file", "bot.py", b"", 400, "empty"),
    ("blank source", "bot.py", b"\n\n   \n", 400, "empty"),
    ("empty zip", "bot.zip", _zip_entries([]), 400, "zip"),
    ("random bytes as a zip", "bot.zip", os.urandom(4096), 400, "not a zip archive"),
    ("random bytes after PK", "bot.zip", b"PK" + os.urandom(4096), 400, "cannot be read"),
    ("random bytes as python", "bot.py", b"\xff\xfe" + os.urandom(4096), 400, "not UTF-8"),
    ("binary with NUL bytes", "bot.py", b"print(1)\x00\x00", 400, "NUL"),
    ("unknown type", "bot.exe", b"MZ\x90\x00", 400, "unsupported file type"),
    ("manifest pointing outside", "bot.zip",
     zip_of({"bot.json": b'{"command": "python3 ../../../etc/passwd"}', "main.py": RANDOM_BOT}),
     400, "not in the zip"),
    ("manifest with an absolute entry", "bot.zip",
     zip_of({"bot.json": b'{"command": "python3 /etc/passwd"}', "main.py": RANDOM_BOT}),
     400, "not in the zip"),
    ("manifest running a shell", "bot.zip",
     zip_of({"bot.json": b'{"command": "sh -c id"}', "main.py": RANDOM_BOT}), 400,
     "unknown runtime"),
    ("manifest passing interpreter options", "bot.zip",
     zip_of({"bot.json": b'{"command": "python3 -c print(1)"}', "main.py": RANDOM_BOT}), 400,
     "options"),
    ("manifest not JSON", "bot.zip", zip_of({"bot.json": b"\xff{", "main.py": RANDOM_BOT}), 400,
     "not valid JSON"),
    ("manifest nested too deeply", "bot.zip", zip_of({"bot.json": b"[" * 4000, "main.py":
     RANDOM_BOT}), 400, "nested too deeply"),
    ("name not UTF-8 in the zip", "bot.zip", _non_utf8_name(), 400, "not valid UTF-8"),
    ("no entry point", "bot.zip", zip_of({"readme.txt": b"hi"}), 400, "bot.json"),
]


def _state() -> tuple:
    cache = settings.ARENA_BOT_CACHE
    cached = sorted(p.name for p in cache.iterdir()) if cache.exists() else []
    return (Bot.objects.count(), BotVersion.objects.count(), PackageBlob.objects.count(),
            Match.objects.count(), cached)


@pytest.fixture
def existing_bot(alice, client_for) -> int:
    """Alice's bot (its validation is not run: not needed here)."""
    response = client_for(alice).post(
        "/api/bots/", {"name": "mine", "file": uploaded(RANDOM_BOT)}, format="multipart"
    )
    assert response.status_code == 201
    return response.json()["id"]


@pytest.mark.parametrize("target", ["new bot", "new version"])
@pytest.mark.parametrize(("what", "filename", "data", "status", "words"), CASES,
                         ids=[case[0] for case in CASES])
def test_a_hostile_upload_is_refused_with_a_message_and_nothing_stored(
    alice, client_for, existing_bot, target, what, filename, data, status, words
):
    before = _state()
    client = client_for(alice)
    if target == "new bot":
        response = client.post(
            "/api/bots/", {"name": "hostile", "file": uploaded(data, filename)},
            format="multipart",
        )
    else:
        response = client.post(
            f"/api/bots/{existing_bot}/versions/", {"file": uploaded(data, filename)},
            format="multipart",
        )
    assert response.status_code == status, (what, response.content[:500])
    message = response.json()["file"][0]
    assert words in message, (what, message)
    assert _state() == before


def test_100_mb_is_refused_before_it_is_read(alice, client_for, existing_bot):
    """413 from the request size limit, for an upload and for any other endpoint."""
    before = _state()
    big = b"#" * (100 * 1024 * 1024)
    client = client_for(alice)
    for response in (
        client.post("/api/bots/", {"name": "big", "file": uploaded(big)}, format="multipart"),
        client.post(f"/api/bots/{existing_bot}/versions/", {"file": uploaded(big, "b.zip")},
                    format="multipart"),
        client.generic("POST", "/api/tournaments/", big, content_type="application/json"),
    ):
        assert response.status_code == 413
        assert "at most" in response.json()["detail"]
    assert _state() == before


def test_a_file_name_that_is_not_utf8_is_refused(alice, client_for):
    """The multipart file name itself is raw bytes that are not UTF-8."""
    before = _state()
    boundary = "BoUnDaRy"
    body = (
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nweird\r\n"
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\""
    ).encode() + b"\xff\xfe\x80bot" + (
        b"\"\r\nContent-Type: application/octet-stream\r\n\r\n"
    ) + RANDOM_BOT + f"\r\n--{boundary}--\r\n".encode()
    response = client_for(alice).generic(
        "POST", "/api/bots/", body, content_type=f"multipart/form-data; boundary={boundary}"
    )
    assert response.status_code == 400, response.content
    assert "file" in response.json()
    assert _state() == before


def test_a_bot_name_that_is_not_utf8_is_refused(alice, client_for):
    before = _state()
    boundary = "BoUnDaRy"
    body = (
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\n"
    ).encode() + b"\xff\xfe\x80" + (
        f"\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"b.py\""
        f"\r\nContent-Type: text/x-python\r\n\r\n"
    ).encode() + RANDOM_BOT + f"\r\n--{boundary}--\r\n".encode()
    response = client_for(alice).generic(
        "POST", "/api/bots/", body, content_type=f"multipart/form-data; boundary={boundary}"
    )
    assert response.status_code == 400, response.content
    assert "name" in response.json()
    assert _state() == before


@pytest.mark.parametrize("path", ["/api/token/", "/api/tournaments/", "/api/ladders/"])
def test_a_json_body_nested_too_deeply_is_a_bad_request(alice, client_for, path):
    """Python's JSON parser gives up on deep nesting with ``RecursionError``: a 400 that says
    so, not a 500, signed in or not."""
    body = '{"username": ' + "[" * 100_000 + "]" * 100_000 + "}"
    for user in (None, alice):
        response = client_for(user).generic("POST", path, body, content_type="application/json")
        parsed = path == "/api/token/" or (user is not None and path == "/api/tournaments/")
        assert response.status_code == (400 if parsed else 401 if user is None else 403), path
        if parsed:  # the others refuse the caller before reading the body
            assert "nested too deeply" in response.json()["detail"]
