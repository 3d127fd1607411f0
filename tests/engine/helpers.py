"""Small helpers for building hands and playing hand-made deals in the engine tests."""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any

from engine.cards import CARD_THIRDS, CODES, RANKS, SUITS, codes, mask_from_codes, parse_card
from engine.rules import RuleSet, rules_for
from engine.state import State, deal_state

SEATS = range(4)


def hands_from(hands: Iterable[str]) -> tuple[int, int, int, int]:
    """Four hands as masks from four strings of card codes, e.g. ``"TH 9H AH 7C ..."``."""
    masks = tuple(mask_from_codes(h.split()) for h in hands)
    assert len(masks) == 4
    return masks  # type: ignore[return-value]


def deal(rules: RuleSet | str, hands: Iterable[str], **kwargs: Any) -> State:
    """A hand-built deal (dealer 3 unless given: seat 0 leads)."""
    if isinstance(rules, str):
        rules = rules_for(rules)
    return deal_state(rules, hands_from(hands), **kwargs)


def action(token: str) -> str:
    """``"TH"`` -> ``"play TH"``; ``"TH/politaine/tap"`` -> ``"play TH politaine tap"``;
    anything else with ``_`` for spaces: ``"meld_pollack_H"`` -> ``"meld pollack H"``."""
    head, *flags = token.split("/")
    if len(head) == 2 and head[0] in RANKS and head[1] in SUITS:
        return " ".join(["play", head, *flags])
    return token.replace("_", " ")


def run(state: State, tokens: str) -> State:
    """Take the actions of ``tokens`` (see ``action``) in order, each checked for legality."""
    for token in tokens.split():
        state = state.step(action(token))
    return state


def first_play(state: State) -> str:
    """The first legal action that is a plain play, else the first legal action."""
    legal = state.legal_strings()
    plain = [a for a in legal if a.startswith("play ") and len(a) == 7]
    return plain[0] if plain else legal[0]


def finish_deal(state: State, choose=first_play) -> State:
    """Play on with ``choose`` until the deal in progress ends (or the match does)."""
    deals = len(state.history)
    while not state.is_over and len(state.history) == deals:
        state = state.step(choose(state))
    return state


def random_match(rules: RuleSet, seed: int, rng: random.Random | None = None) -> State:
    """A whole seeded match with uniformly random legal actions."""
    rng = rng or random.Random(seed)
    state_ = _new(rules, seed)
    while not state_.is_over:
        legal = state_.legal()
        state_ = state_.apply(legal[rng.randrange(len(legal))])
    return state_


def _new(rules: RuleSet, seed: int) -> State:
    from engine.state import new_match

    return new_match(rules, seed)


def hand_codes(state: State, seat: int) -> list[str]:
    return codes(state.hands[seat])


def thirds(card_codes: Iterable[str]) -> int:
    return sum(CARD_THIRDS[parse_card(c)] for c in card_codes)


ALL_CODES = list(CODES)


def cards_in(legal: Iterable[str]) -> set[str]:
    """The card codes of the plays among legal actions."""
    return {a.split()[1] for a in legal if a.startswith("play ")}
