"""Built-in bots: legal play across presets, and the JSON-lines program."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.bots import BUILTIN_BOTS, LOCAL_BOTS, BotSeat, make_bot
from engine.observe import observe
from engine.referee import referee_match
from engine.rules import rules_for
from engine.state import new_match

ROOT = Path(__file__).resolve().parents[2]
PRESETS = ["quatre-sept", "politaine", "la-poule", "pollack"]
VARIANTS = [rules_for(p) for p in PRESETS] + [
    rules_for("quatre-sept", claim_out="any-turn", melds=True, signals=True),
    rules_for("la-poule", low_lead="first-trick", redeal=True),
    rules_for("pollack", politaine="before-play", claim_out="any-turn"),
]


def test_builtins():
    levels = {f"expert-{n}" for n in range(1, 5)}
    assert set(BUILTIN_BOTS) == {"random", "greedy", "expert", *levels}
    assert set(LOCAL_BOTS) == set(BUILTIN_BOTS) | {"expert-v1", "tracker", "rollout", "ismcts"}
    with pytest.raises(ValueError, match="random"):
        make_bot("nobody")


@pytest.mark.parametrize("name", ["random", "greedy"])
@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: f"{r.preset}-{r.changed_options()}")
def test_bots_only_play_legal_actions(name, rules):
    for seed in range(40):
        seats = [BotSeat(make_bot(name)) for _ in range(4)]
        outcome = referee_match(rules, seats, seed=seed, match_id=f"b{seed}")
        assert outcome.replay["result"]["fault"] is None, outcome.replay["result"]


def test_greedy_against_random_mixed_seats_stays_legal():
    for seed in range(60):
        seats = [BotSeat(make_bot("greedy" if s % 2 else "random")) for s in range(4)]
        outcome = referee_match(rules_for(PRESETS[seed % 4]), seats, seed=seed, match_id=str(seed))
        assert outcome.replay["result"]["fault"] is None


@pytest.mark.parametrize("name", ["random", "greedy"])
def test_bot_answers_from_the_legal_list(name):
    bot = make_bot(name)
    rules = rules_for("politaine", redeal=False)
    bot.hello({"type": "hello", "seat": 0, "rules": rules.to_dict(), "match": "x"})
    state = new_match(rules, 3)
    message = {
        "type": "turn",
        "id": 1,
        "decision": state.decision,
        "state": observe(state, state.to_move),
        "legal": state.legal_strings(),
    }
    assert bot.act(message) in message["legal"]


def test_random_bot_replays_by_match_and_seat():
    def replay(seed):
        seats = [BotSeat(make_bot("random")) for _ in range(4)]
        r = referee_match(rules_for("quatre-sept"), seats, seed=seed, match_id="same").replay
        r.pop("moves_ms")
        return r

    assert replay(4) == replay(4)


@pytest.mark.parametrize("name", ["random", "greedy"])
def test_bot_program_over_stdin_stdout(name):
    rules = rules_for("quatre-sept", four_sevens=False)
    state = new_match(rules, 5)
    hello = {
        "type": "hello",
        "protocol": 1,
        "seat": state.to_move,
        "team": state.to_move % 2,
        "match": "m-1",
        "rules": rules.to_dict(),
        "clock": {"hello_ms": 10000, "move_ms": 1000, "bank_ms": 60000},
        "players": ["a", "b", "c", "d"],
    }
    turn = {
        "type": "turn",
        "id": 17,
        "decision": state.decision,
        "state": observe(state, state.to_move),
        "legal": state.legal_strings(),
    }
    match_end = {"type": "match_end", "score": [33, 22], "winner": 0, "reason": "target"}
    lines = "".join(json.dumps(m) + "\n" for m in (hello, turn, match_end))
    done = subprocess.run(
        [sys.executable, "-m", "engine.bots", name],
        input=lines,
        capture_output=True,
        text=True,
        timeout=30,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(replies) == 2, "a reply to hello and to the turn, none to match_end"
    assert replies[0] == {"type": "ready", "name": name}
    assert replies[1]["id"] == 17 and replies[1]["action"] in turn["legal"]
    assert set(replies[1]) == {"id", "action"}


def test_bot_program_usage():
    done = subprocess.run(
        [sys.executable, "-m", "engine.bots"],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode != 0


def test_a_light_bot_process_imports_neither_the_rules_nor_numpy():
    """The platform starts ``python -m engine.bots random`` afresh for every match it plays: the
    engine's names load on first use, so that process pays for none of the rules, the expert's
    search, numpy or typing."""
    import subprocess
    import sys
    from pathlib import Path

    probe = (
        "import sys, runpy\n"
        "sys.argv = ['engine.bots', 'random']\n"
        "sys.stdin = open('/dev/null')\n"
        "try:\n"
        "    runpy.run_module('engine.bots', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in ('engine.state', 'engine.rules', 'engine.bots.expert', 'numpy',"
        " 'typing') if m in sys.modules))\n"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == "[]"


def test_every_name_the_engine_exports_resolves():
    import engine
    import engine.bots

    for module in (engine, engine.bots):
        for name in module.__all__:
            assert getattr(module, name) is not None, name
    assert engine.bots.RandomBot is BUILTIN_BOTS["random"]


def test_the_bot_program_says_how_to_call_it():
    """``python -m engine.bots --help`` lists the names; an unknown name is a one-line error with
    them, not a traceback."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "engine.bots", *args], cwd=root,
                              capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)

    helped = run("--help")
    assert helped.returncode == 0 and "expert-4" in helped.stderr and "NAME" in helped.stderr
    unknown = run("nosuch")
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr
    assert "unknown built-in bot 'nosuch'" in unknown.stderr
