"""Signals (``engine/optional/signals.py``): ``tap`` and ``slide`` with a card, public, no score."""

from __future__ import annotations

import pytest

from engine.actions import SLIDE, TAP
from engine.observe import observe
from engine.optional.signals import with_signals
from tests.engine.helpers import deal, finish_deal, run
from tests.engine.test_politaine import HANDS, RUN_HEARTS, quatre_sept


def test_signals_tap_and_slide_with_any_card_and_with_a_politaine():
    state = run(deal(quatre_sept(signals=True), HANDS), "KH/tap")
    legal = set(state.legal_strings())
    for card in ("TH", "9H", "AH"):
        for extra in ("", " tap", " slide", " politaine", " politaine tap", " politaine slide"):
            assert f"play {card}{extra}" in legal
    assert {"play JH", "play JH tap", "play JH slide", "play 8H slide"} <= legal
    assert "play JH politaine" not in legal
    assert "play KD" not in legal and "play TH tap slide" not in legal
    state = run(state, "TH/politaine/tap 7H/slide 7S")
    said = [(s.seat, s.trick, s.say) for s in state.said]
    assert said == [
        (0, 1, "tap"), (1, 1, "politaine"), (1, 1, "tap"), (2, 1, "slide"),
    ]
    seen = observe(state, 3)["said"]
    assert [{k: s[k] for k in ("seat", "trick", "say")} for s in seen] == [
        {"seat": 0, "trick": 1, "say": "tap"},
        {"seat": 1, "trick": 1, "say": "politaine"},
        {"seat": 1, "trick": 1, "say": "tap"},
        {"seat": 2, "trick": 1, "say": "slide"},
    ]
    for seat in range(4):
        assert observe(state, seat)["said"] == seen, "every player sees the signals"


def test_signals_change_nothing_in_the_score():
    plain = finish_deal(run(deal(quatre_sept(signals=True), HANDS), RUN_HEARTS))
    signalled = RUN_HEARTS.replace("KH", "KH/slide").replace("9H", "9H/tap")
    signalled = finish_deal(run(deal(quatre_sept(signals=True), HANDS), signalled))
    assert plain.history[0].score == signalled.history[0].score
    assert signalled.history[0].bonus == (0, 11)


def test_signals_off_offers_no_signal():
    state = deal(quatre_sept(), HANDS)
    assert not any(a.endswith((" tap", " slide")) for a in state.legal_strings())
    with pytest.raises(ValueError):
        state.step("play KH tap")


def test_signals_alone_on_quatre_sept():
    state = deal(quatre_sept(signals=True), HANDS)
    assert "play KH tap" in state.legal_strings()
    assert "play KH slide" in state.legal_strings()


def test_with_signals_offers_each_play_bare_then_tap_then_slide():
    assert with_signals((3, 40)) == (3, 3 | TAP, 3 | SLIDE, 40, 40 | TAP, 40 | SLIDE)


@pytest.mark.parametrize("flag, say", [(TAP, "tap"), (SLIDE, "slide")])
def test_a_signal_is_said_with_its_card(flag, say):
    state = run(deal(quatre_sept(signals=True), HANDS), f"KH/{say}")
    assert [(s.seat, s.say, s.card) for s in state.said] == [(0, say, state.trick[0])]
    assert state.history == () and flag & 224
