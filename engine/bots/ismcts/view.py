"""What one seat knows at a turn, read from the turn message alone: the hard facts about the
hidden hands, and the deal's public actions in order (to rebuild an engine state).

Invariant: every field is a function of the message (the seat's own hand and public records);
nothing here ever reads a hidden card.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.actions import POLITAINE, SLIDE, TAP, parse_action
from engine.cards import RANK_MASKS, SUIT_MASKS, TNA_MASKS, mask_from_codes, parse_card
from engine.rules import LowLead, RuleSet

#: The cards of a rank weaker than each rank index (T 9 A K Q J 8 7: index 7 is the weakest).
WEAKER_RANKS = tuple(sum((RANK_MASKS[r] for r in range(rank + 1, 8)), 0) for rank in range(8))
_FLAGS = {"politaine": POLITAINE, "tap": TAP, "slide": SLIDE}

#: One public action of the deal: ``(seat, action int)``.
Step = tuple[int, int]


@dataclass(frozen=True)
class View:
    """One seat's knowledge. Invariant: for every other seat ``s``, its hand now holds exactly
    ``counts[s]`` cards of ``unknown``, none of ``forbidden[s]``, all of ``must[s]``, and its
    hand as dealt (hand now plus ``played[s]``) holds at least ``poules[s]`` complete T-9-A suits.
    """

    seat: int
    hand: int
    unknown: int
    played: tuple[int, int, int, int]
    counts: tuple[int, int, int, int]
    forbidden: tuple[int, int, int, int]
    must: tuple[int, int, int, int]
    poules: tuple[int, int, int, int]
    script: tuple[Step, ...]
    deal: int
    dealer: int
    score: tuple[int, int]


def read_view(rules: RuleSet, message: dict[str, Any]) -> View:
    """The ``View`` of a turn message's ``state``."""
    state = message["state"]
    seat = state["seat"]
    hand = mask_from_codes(state["hand"])
    tricks = _tricks(state)
    played = _played(tricks)
    unknown = ((1 << 32) - 1) & ~hand & ~(played[0] | played[1] | played[2] | played[3])
    forbidden = [0, 0, 0, 0]
    _voids(tricks, forbidden)
    _low_leads(rules, tricks, forbidden)
    must = [0, 0, 0, 0]
    poules = [0, 0, 0, 0]
    _announcements(state["said"], must, forbidden, poules)
    counts = tuple(8 - played[s].bit_count() for s in range(4))
    return View(
        seat=seat,
        hand=hand,
        unknown=unknown,
        played=played,
        counts=counts,  # type: ignore[arg-type]
        forbidden=tuple(f & unknown for f in forbidden),  # type: ignore[arg-type]
        must=tuple(m & unknown for m in must),  # type: ignore[arg-type]
        poules=tuple(poules),  # type: ignore[arg-type]
        script=_script(state, tricks),
        deal=state["deal"],
        dealer=state["dealer"],
        score=tuple(state["score"]),  # type: ignore[arg-type]
    )


#: A trick as ``(leader, cards, thirds)``; the trick in progress has thirds -1.
_Trick = tuple[int, tuple[int, ...], int]


def _tricks(state: dict[str, Any]) -> list[_Trick]:
    """The finished tricks, then the trick in progress (even when empty)."""
    out = [(t["leader"], tuple(map(parse_card, t["cards"])), t["thirds"]) for t in state["tricks"]]
    current = state["trick"]
    out.append((current["leader"], tuple(map(parse_card, current["cards"])), -1))
    return out


def _played(tricks: list[_Trick]) -> tuple[int, int, int, int]:
    """The cards each seat has played this deal."""
    played = [0, 0, 0, 0]
    for leader, cards, _ in tricks:
        for i, card in enumerate(cards):
            played[(leader + i) & 3] |= 1 << card
    return tuple(played)  # type: ignore[return-value]


def _voids(tricks: list[_Trick], forbidden: list[int]) -> None:
    """A seat that did not follow the suit led holds none of that suit for the rest of the deal."""
    for leader, cards, _ in tricks:
        if not cards:
            continue
        suit = cards[0] >> 3
        for i in range(1, len(cards)):
            if cards[i] >> 3 != suit:
                forbidden[(leader + i) & 3] |= SUIT_MASKS[suit]


def _low_leads(rules: RuleSet, tricks: list[_Trick], forbidden: list[int]) -> None:
    """A leader bound by the low lead led his lowest rank: he holds no weaker rank since."""
    rule = rules.low_lead
    if rule is LowLead.OFF:
        return
    for j in range(1, len(tricks)):
        leader, cards, _ = tricks[j]
        previous = tricks[j - 1]
        card_thirds = previous[2]  # never the last trick, so no last-trick bonus in it
        bound = card_thirds < 3 and (rule is LowLead.EVERY_TRICK or j == 1)
        if bound and cards:
            forbidden[leader] |= WEAKER_RANKS[cards[0] & 7]


def _announcements(
    said: list[dict[str, Any]], must: list[int], forbidden: list[int], poules: list[int]
) -> None:
    """Melds and politaine announcements show cards held then; poules show complete suits."""
    for entry in said:
        seat, words = entry["seat"], entry["say"].split()
        if words[0] == "politaine":
            must[seat] |= TNA_MASKS[parse_card(entry["card"]) >> 3]
        elif words[0] == "poules":
            poules[seat] = int(words[1])
        elif words[0] == "meld":
            held, missing = _meld_cards(words[1:])
            must[seat] |= held
            forbidden[seat] |= missing


def _meld_cards(words: list[str]) -> tuple[int, int]:
    """``(cards held, card known not held)`` of a meld: ``pollack H``, ``four A``, ``three 9 D``."""
    if words[0] == "pollack":
        return TNA_MASKS["CDHS".index(words[1])], 0
    rank = RANK_MASKS["T9A".index(words[1])]
    if words[0] == "four":
        return rank, 0
    missing = rank & SUIT_MASKS["CDHS".index(words[2])]
    return rank & ~missing, missing


def _script(state: dict[str, Any], tricks: list[_Trick]) -> tuple[Step, ...]:
    """The deal's public actions in order: poules, then per trick each seat's melds and card
    (with its politaine and signal flags); the melds said at this turn close it."""
    by_trick: dict[tuple[int, int], list[dict[str, Any]]] = {}
    steps: list[Step] = []
    for entry in state["said"]:
        if entry["trick"] == 0:
            steps.append((entry["seat"], parse_action(entry["say"])))
        else:
            by_trick.setdefault((entry["trick"], entry["seat"]), []).append(entry)
    for number, (leader, cards, _) in enumerate(tricks, start=1):
        for i, card in enumerate(cards):
            seat = (leader + i) & 3
            steps.extend(_card_steps(seat, card, by_trick.get((number, seat), [])))
    turn = (tricks[-1][0] + len(tricks[-1][1])) & 3
    mine = by_trick.get((len(tricks), turn), [])
    steps.extend((turn, parse_action(e["say"])) for e in mine if e["say"].startswith("meld"))
    return tuple(steps)


def _card_steps(seat: int, card: int, said: list[dict[str, Any]]) -> list[Step]:
    """A seat's melds of one trick, then its card with the flags said with it."""
    steps = [(seat, parse_action(e["say"])) for e in said if e["say"].startswith("meld")]
    flags = 0
    for entry in said:
        if entry["say"] in _FLAGS and entry.get("card") and parse_card(entry["card"]) == card:
            flags |= _FLAGS[entry["say"]]
    steps.append((seat, card | flags))
    return steps
