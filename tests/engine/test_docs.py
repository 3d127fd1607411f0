"""The docs say what the engine does: docs/protocol.md's example messages are what the referee
sends, and docs/rules.md's option table is the one ``engine.rules`` describes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from engine.check import check_replay
from engine.rules import options_table
from tests.engine.protocol_examples import examples

DOCS = Path(__file__).resolve().parents[2] / "docs"
EXAMPLE = re.compile(r"<!-- example: (\w+) -->\n```json\n(.*?)\n```", re.S)


def doc_examples() -> dict[str, dict]:
    text = (DOCS / "protocol.md").read_text()
    return {name: json.loads(body) for name, body in EXAMPLE.findall(text)}


def test_protocol_doc_shows_the_four_messages():
    assert set(doc_examples()) == {"hello", "turn", "deal_end", "match_end"}


@pytest.mark.parametrize("name", ["hello", "turn", "deal_end", "match_end"])
def test_protocol_doc_examples_are_what_the_referee_sends(name):
    """If this fails, the engine's messages changed: regenerate the examples with
    ``python -m tests.engine.protocol_examples`` and say what changed in docs/protocol.md."""
    assert doc_examples()[name] == examples()[name]


def test_every_turn_state_field_is_documented():
    text = (DOCS / "protocol.md").read_text()
    table = text[text.index("| field | meaning |") :]
    documented = set(re.findall(r"^\| `(\w+)`(?:, `(\w+)`)?", table, re.M))
    names = {name for pair in documented for name in pair if name}
    assert set(examples()["turn"]["state"]) <= names


def test_the_example_deal_is_a_valid_replay_deal():
    """The deal_end body is a replay's deal entry; a replay of the example match checks."""
    from engine import FunctionSeat, referee_match, rules_for

    outcome = referee_match(
        rules_for("la-poule"), [FunctionSeat(lambda m: m["legal"][0])] * 4, seed=163
    )
    check_replay(outcome.replay)
    first = dict(examples()["deal_end"])
    first.pop("type")
    assert set(first) == set(outcome.replay["deals"][0])


def test_rules_doc_carries_the_option_table():
    text = (DOCS / "rules.md").read_text()
    start = text.index("<!-- options table: engine.rules.options_table() -->\n")
    end = text.index("<!-- end of options table -->")
    table = text[start:end].split("\n", 1)[1].strip()
    assert table == options_table(), "regenerate the table from engine.rules.options_table()"


def test_protocol_doc_names_every_fault_decision_and_end():
    from engine.faults import FAULT_KINDS
    from engine.position import DECISIONS

    text = (DOCS / "protocol.md").read_text()
    for kind in FAULT_KINDS:
        assert f"| `{kind}` |" in text, kind
    for decision in filter(None, DECISIONS):
        assert f"| `{decision}` |" in text, decision
    for reason in ("target", "four-sevens", "four-eights", "capot", "eighteen-four", "claim"):
        assert f"`{reason}`" in text, reason
    assert "`forfeit`" in text and "`limit`" in text
