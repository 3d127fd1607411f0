"""The starter kits play a whole fake match through the sandbox: uploaded as a single file and
as a zip with a manifest, under each confined backend, with random legal actions."""

from __future__ import annotations

import io
import random
import zipfile
from pathlib import Path

import pytest

from sandbox import BotSession, install_package, open_session
from tests.sandbox.helpers import FAST, assert_left_nothing, hello

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DECK = [f"play {rank}{suit}" for rank in "789TJQKA" for suit in "SHDC"]
KITS = [("python/bot.py", "python3 bot.py"), ("javascript/bot.js", "node bot.js")]


def fake_match(session: BotSession, seed: int, deals: int = 3, turns_per_deal: int = 8) -> int:
    """Hello, then deals of turns with random legal lists; every action must be legal."""
    rng = random.Random(seed)
    assert session.hello(hello())["type"] == "ready"
    turn_id = 0
    for deal in range(deals):
        for _ in range(turns_per_deal):
            turn_id += 1
            legal = rng.sample(DECK, rng.randint(1, 8))
            message = {"type": "turn", "id": turn_id, "decision": "play",
                       "state": {"deal": deal + 1, "hand": [a[5:] for a in legal]}, "legal": legal}
            assert session.turn(message) in legal
        session.notify({"type": "deal_end", "score": [deal, 0]})
    session.notify({"type": "match_end", "score": [31, 0], "winner": 0, "reason": "target"})
    return turn_id


@pytest.mark.parametrize(("path", "command"), KITS, ids=["python", "javascript"])
@pytest.mark.parametrize("as_zip", [False, True], ids=["file", "zip"])
def test_starter_kit_plays_sandboxed(boxed, bots_root, path: str, command: str, as_zip: bool):
    source = (EXAMPLES / path).read_bytes()
    name = Path(path).name
    if as_zip:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("bot.json", f'{{"command": "{command}"}}')
            archive.writestr(name, source)
        data, filename = buffer.getvalue(), "kit.zip"
    else:
        data, filename = source, name
    bot = install_package(data, filename, bots_root / f"kit-{type(boxed).__name__}-{name}-{as_zip}")
    with open_session(boxed, bot, FAST) as session:
        assert fake_match(session, seed=len(name)) == 24
    assert session.process.poll() == 0  # it left on end of input, by itself
    assert "deal over" in session.stderr_tail
    assert_left_nothing(session)
