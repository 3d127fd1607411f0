"""The game as an immutable value: ``State.apply(action)`` returns the next state.

One ``State`` covers a whole match: the deal in progress plus the record of finished deals.
Chance is explicit: every deck comes from ``(seed, deal, redeal)`` (see ``deck.py``), so a state
never draws a random number. Actions are ints (``actions.py``); ``legal()`` lists them and
``apply()`` trusts that it is given one of them (``step()`` checks and takes protocol strings).

This module keeps the hot path (legal plays, a card, a trick, the end of a deal) and sequences a
deal; each optional rule lives in its own module of ``engine/optional`` and is called only where
the rule set switches it on. The records and the ``Table`` are in ``position.py``.
Imports nothing of Django or the sandbox.
"""

from __future__ import annotations

from typing import NamedTuple

from engine.actions import (
    CLAIM,
    DONE,
    KEEP,
    MELD,
    PLAY_LIMIT,
    POLITAINE,
    POULES,
    REDEAL,
    SLIDE,
    TAP,
    action_to_str,
    parse_action,
)
from engine.cards import BYTE_CARDS as _BYTE_CARDS
from engine.cards import CARD_THIRDS, FULL_DECK, LAST_TRICK_THIRDS, cards_of
from engine.cards import TNA_ALL as _TNA_ALL
from engine.deck import seeded_hands
from engine.optional import claim, instant, low_lead, melds, poules, redeal, signals
from engine.optional import politaine as politaine_rule
from engine.optional.low_lead import lowest_rank as _lowest_rank
from engine.optional.politaine import SUIT_LOW_BITS as _SUIT_LOW_BITS
from engine.position import (
    DECISIONS,
    HAND,
    MAX_DEALS,
    MELD_PHASE,
    OVER,
    PLAY_PHASE,
    POULES_PHASE,
    REDEAL_PHASE,
    TRICKS_PER_DEAL,
    DealRecord,
    FaultRecord,
    Result,
    Said,
    Table,
    Trick,
    deal_record,
    evolve,
    match_over,
    pack_hands,
)
from engine.rules import ClaimOut, LowLead, Politaine, RuleSet

__all__ = [
    "DECISIONS",
    "MAX_DEALS",
    "MELD_PHASE",
    "OVER",
    "PLAY_PHASE",
    "POULES_PHASE",
    "REDEAL_PHASE",
    "TRICKS_PER_DEAL",
    "DealRecord",
    "FaultRecord",
    "Result",
    "Said",
    "State",
    "Table",
    "Trick",
    "deal_state",
    "new_match",
    "pack_hands",
]

_B0, _B1, _B2, _B3 = _BYTE_CARDS
_new = tuple.__new__
_HAND = HAND
# Enum members as module globals: ``Politaine.FIRST_CARD`` is a slow class attribute lookup.
_FIRST_CARD = Politaine.FIRST_CARD
_BEFORE_PLAY = Politaine.BEFORE_PLAY
_LOW_OFF = LowLead.OFF
_CLAIM_OFF = ClaimOut.OFF


class State(NamedTuple):
    """A point in a match. Invariant: ``to_move`` is the seat to decide, -1 once it is over.

    Fields are public and read-only. ``packed`` holds the four hands, seat ``s`` in bits
    ``32s..32s+31`` (read them as ``hands`` or ``hand(seat)``: 32-bit masks of ``cards.py``);
    ``trick`` the cards of the trick in progress. The rest lives in ``table`` and reads as
    attributes of the state too: ``dealt`` the hands as dealt this deal; ``leader`` who led the
    trick in progress; ``taken``/``won`` thirds and tricks per team this deal; ``low`` whether the
    leader of the trick in progress must lead his lowest rank; ``run`` a politaine in progress as
    ``(seat, suit, tricks won)``; ``announced`` the ``(seat, card)`` politaine announcements of
    the trick in progress; ``poules`` the poules each seat may still score; ``melded`` a mask of
    meld ids scored this deal; ``history`` the finished deals. (Splitting the value in two keeps
    a mid-trick move to a five-field tuple: search plays millions of them.)
    """

    phase: int
    to_move: int
    packed: int
    trick: tuple[int, ...]
    table: Table

    # -- reading -------------------------------------------------------------------------------

    @property
    def hands(self) -> tuple[int, int, int, int]:
        """The four hands held now, as card masks."""
        p = self[2]
        return (p & _HAND, p >> 32 & _HAND, p >> 64 & _HAND, p >> 96)

    def hand(self, seat: int) -> int:
        return self[2] >> (seat << 5) & _HAND

    @property
    def is_over(self) -> bool:
        return self.phase == OVER

    @property
    def decision(self) -> str | None:
        """The protocol's decision for ``to_move`` (redeal, poules, meld, play); None when over."""
        return DECISIONS[self.phase]

    def legal(self) -> tuple[int, ...]:
        """Every legal action of ``to_move``, in a fixed order; empty once the match is over."""
        phase = self[0]
        if phase == PLAY_PHASE:
            # Hot path, inlined: the cards ``to_move`` may play (follow suit, else the low lead).
            hand = self[2] >> (self[1] << 5) & _HAND
            trick = self[3]
            if trick:
                shift = (trick[0] >> 3) << 3
                follow = hand >> shift & 255
                if follow:
                    playable = follow << shift
                    cards = _BYTE_CARDS[shift >> 3][follow]
                else:
                    playable = hand
                    cards = (
                        _B0[hand & 255]
                        + _B1[hand >> 8 & 255]
                        + _B2[hand >> 16 & 255]
                        + _B3[hand >> 24]
                    )
            else:
                playable = _lowest_rank(hand) if self[4].low else hand
                p = playable
                cards = _B0[p & 255] + _B1[p >> 8 & 255] + _B2[p >> 16 & 255] + _B3[p >> 24]
            rules = self[4][0]
            if rules.plain_play:
                return cards
            if rules.announce_only:
                tna = hand & _TNA_ALL
                if not tna & (tna >> 1) & (tna >> 2) & _SUIT_LOW_BITS:
                    return cards  # no complete T-9-A: nothing to announce
            return _decorated_plays(self, hand, playable)
        if phase == MELD_PHASE:
            found = melds.available_melds(self.hand(self.to_move), self.melded)
            return (*(MELD + m for m in found), DONE)
        if phase == REDEAL_PHASE:
            return (REDEAL, KEEP)
        if phase == POULES_PHASE:
            most = poules.complete_suits(self.hand(self.to_move))
            return tuple(POULES + n for n in range(most + 1))
        return ()

    def legal_strings(self) -> list[str]:
        return [action_to_str(a) for a in self.legal()]

    # -- moving --------------------------------------------------------------------------------

    def apply(self, action: int) -> State:
        """The state after ``to_move`` takes ``action``, which must be one of ``legal()``."""
        if action < PLAY_LIMIT:
            if action < 32 and len(self[3]) < 3 and not self[4][0].melds:
                # Hot path, inlined: a bare card mid-trick changes the first four fields only.
                seat = self[1]
                packed = self[2] ^ (1 << (action + (seat << 5)))
                return _new(
                    State, (PLAY_PHASE, (seat + 1) & 3, packed, (*self[3], action), self[4])
                )
            return _play(self, action)
        if action >= MELD:
            return melds.meld(self, action - MELD)
        if action == DONE:
            return evolve(self, phase=PLAY_PHASE)
        if action == CLAIM:
            return claim.claim(self)
        if action >= POULES:
            return _poules(self, action - POULES)
        if action == REDEAL:
            return _redeal(self)
        return _keep(self)

    def step(self, action: str) -> State:
        """Like ``apply`` for a protocol string, checked: ``ValueError`` if malformed or illegal."""
        code = parse_action(action)
        if code not in self.legal():
            legal = ", ".join(self.legal_strings())
            raise ValueError(f"{action!r} is not legal now; legal: {legal}")
        return self.apply(code)

    def forfeit(self, seat: int, kind: str, detail: str) -> State:
        """The match ended by ``seat``'s fault: its team loses, the scores so far are kept."""
        if self.phase == OVER:
            raise ValueError("the match is already over")
        fault = FaultRecord(seat, kind, detail)
        record = deal_record(self, self.score, "forfeit")
        result = Result(1 - (seat & 1), "forfeit", self.score, fault)
        return match_over(self, record, result)

    def with_hands(self, hands: tuple[int, int, int, int]) -> State:
        """The same position with other hidden cards (for search over sampled deals).

        Invariant: the state that replaying this deal's actions from a deal of ``hands`` plus
        each seat's cards played this deal gives, for hands that replay to this same decision.
        Besides the hands, two fields of the table come from hidden cards: ``dealt`` becomes each
        seat's new hand plus its plays, and under before-play the politaine run is read again
        from the deal's last tricks (whether one is under way depends on its player holding the
        rest of the suit: ``politaine.trailing_run``). The rest is public but for the decision
        itself (whether a meld or a redeal is asked depends on the hands): hands that would not
        reach it are the caller's to leave out.
        """
        phase, to_move, packed, trick, table = self
        d0, d1, d2, d3 = table[6]
        h0, h1, h2, h3 = hands
        dealt = (
            h0 | d0 & ~packed,
            h1 | d1 & ~(packed >> 32),
            h2 | d2 & ~(packed >> 64),
            h3 | d3 & ~(packed >> 96),
        )
        run = table[13]
        if table[0].politaine is _BEFORE_PLAY:
            run = politaine_rule.trailing_run(table[8], trick, hands)
        table = _new(Table, (*table[:6], dealt, *table[7:13], run, *table[14:]))
        return _new(State, (phase, to_move, pack_hands(hands), trick, table))

    def replace(self, **changes: object) -> State:
        """This state with fields changed, those of ``table`` included (for building positions)."""
        return evolve(self, **changes)


# -- a deal, from the cards to the first card played ----------------------------------------------


def new_match(rules: RuleSet, seed: int) -> State:
    """The state before the first decision of a seeded match (the first deal dealt)."""
    return _start_deal(rules, seed, 1, 3, 0, (0, 0), (), ())


def forfeit_at_hello(rules: RuleSet, seed: int, seat: int, kind: str, detail: str) -> State:
    """The match ended by ``seat``'s fault at ``hello``, before the first deal counted: its team
    loses, 0:0, the first deal recorded as dealt with end ``forfeit``.

    Invariant: a fault at ``hello`` always ends the match as a forfeit, even when the first deal
    holds an instant win (four 7s or 8s): the bots are greeted before the deal counts, so a bot
    that never answered cannot win, or pass validation, by what it was dealt."""
    hands = seeded_hands(seed, 1, 0, 3)
    return _dealt(rules, hands, seed, 1, 3, 0, (0, 0), (), ()).forfeit(seat, kind, detail)


def _start_deal(
    rules: RuleSet,
    seed: int,
    deal: int,
    dealer: int,
    redeal_count: int,
    score: tuple[int, int],
    history: tuple[DealRecord, ...],
    redeals: tuple,
) -> State:
    hands = seeded_hands(seed, deal, redeal_count, dealer)
    return _begin_deal(rules, hands, seed, deal, dealer, redeal_count, score, history, redeals)


def deal_state(
    rules: RuleSet,
    hands: tuple[int, int, int, int],
    *,
    dealer: int = 3,
    deal: int = 1,
    score: tuple[int, int] = (0, 0),
    seed: int = 0,
    redeal: int = 0,
    history: tuple[DealRecord, ...] = (),
    redeals: tuple = (),
) -> State:
    """A deal about to start from the given hands: instant wins checked, first decision set.

    Hand-built positions in tests and sampled deals in search start here; ``new_match`` deals
    from the seed and calls it too.
    """
    hands = tuple(hands)
    if len(hands) != 4 or pack_hands(hands).bit_count() != 32 or _union(hands) != FULL_DECK:
        raise ValueError("a deal needs the 32 cards, each in exactly one hand")
    return _begin_deal(rules, hands, seed, deal, dealer, redeal, tuple(score), history, redeals)


def _begin_deal(
    rules: RuleSet,
    hands: tuple[int, int, int, int],
    seed: int,
    deal: int,
    dealer: int,
    redeal_count: int,
    score: tuple[int, int],
    history: tuple[DealRecord, ...],
    redeals: tuple,
) -> State:
    """Dealt: an instant win ends the match; else the redeal, poules or meld decision, or play."""
    state = _dealt(rules, hands, seed, deal, dealer, redeal_count, score, history, redeals)
    if rules.four_sevens or rules.four_eights:
        won = instant.instant_win(rules, hands)
        if won is not None:
            team, reason = won
            record = deal_record(state, score, reason)
            return match_over(state, record, Result(team, reason, score, None))
    if rules.redeal:
        asker = redeal.first_asker(hands, state.leader, redeal_count)
        if asker is not None:
            return evolve(state, phase=REDEAL_PHASE, to_move=asker)
    if rules.politaine is _BEFORE_PLAY or rules.melds:
        return _before_play(state)
    return state  # the leader to play, as built


def _dealt(
    rules: RuleSet,
    hands: tuple[int, int, int, int],
    seed: int,
    deal: int,
    dealer: int,
    redeal_count: int,
    score: tuple[int, int],
    history: tuple[DealRecord, ...],
    redeals: tuple,
) -> State:
    """The deal as dealt, before anything is checked or decided: the leader to play."""
    leader = (dealer + 1) & 3
    # By position, in Table's field order (naming the fields here costs 2.4% of the engine's
    # instructions per decision): leader, then tricks taken won said low run announced poules
    # bonus melds melded empty, then redeals history result.
    table = _new(Table, (
        rules, seed, deal, dealer, redeal_count, score, hands, leader,
        (), (0, 0), (0, 0), (), False, None, (), (0, 0, 0, 0), (0, 0), (0, 0), 0,
        redeals, history, None,
    ))  # fmt: skip
    return _new(State, (PLAY_PHASE, leader, pack_hands(hands), (), table))


def _union(hands: tuple[int, ...]) -> int:
    return hands[0] | hands[1] | hands[2] | hands[3]


def _redeal(state: State) -> State:
    """``to_move`` calls the deal off: the same dealer deals the next deck of the seed."""
    redeals = (*state.redeals, (state.to_move, state.dealt))
    return _start_deal(
        state.rules,
        state.seed,
        state.deal,
        state.dealer,
        state.redeal + 1,
        state.score,
        state.history,
        redeals,
    )


def _keep(state: State) -> State:
    """``to_move`` keeps the deal: the next eligible seat is asked, or play goes on."""
    position = (state.to_move - state.leader) & 3
    asker = redeal.next_asker(state.hands, state.leader, position)
    if asker is not None:
        return evolve(state, to_move=asker)
    return _before_play(state)


def _before_play(state: State) -> State:
    """Poules are announced from the leader (before-play politaine), else the first turn."""
    if state.rules.politaine is _BEFORE_PLAY:
        return evolve(state, phase=POULES_PHASE, to_move=state.leader)
    return _turn(state, state.leader)


def _poules(state: State, count: int) -> State:
    """``to_move`` announces ``count`` poules; after the last seat, the leader's turn."""
    seat = state.to_move
    announced, said = poules.announce(state.poules, state.said, seat, count)
    state = evolve(state, poules=announced, said=said)
    nxt = (seat + 1) & 3
    if nxt == state.leader:
        return _turn(state, state.leader)
    return evolve(state, to_move=nxt)


def _turn(state: State, seat: int) -> State:
    """``seat`` to move: to meld first where the rules and his hand allow, else to play."""
    melding = state.rules.melds
    phase = melds.turn_phase(state, seat, state.packed, state.won) if melding else PLAY_PHASE
    return evolve(state, to_move=seat, phase=phase)


# -- play ------------------------------------------------------------------------------------------


def _decorated_plays(state: State, hand: int, playable: int) -> tuple[int, ...]:
    """Plays with their politaine announcements and signals, and the claim, where the rules say."""
    cards = cards_of(playable)
    rules = state.rules
    if rules.politaine is _FIRST_CARD:
        cards = politaine_rule.with_announcements(cards, hand, playable)
    if rules.signals:
        cards = signals.with_signals(cards)
    if rules.claim_out is not _CLAIM_OFF and claim.offered(rules.claim_out, bool(state.trick)):
        return (*cards, CLAIM)
    return cards


def _play(state: State, action: int) -> State:
    seat = state[1]
    card = action & 31
    packed = state[2] ^ (1 << (card + (seat << 5)))
    trick = (*state[3], card)
    if action & 224:
        state = _announce(state, seat, action)
    if len(trick) < 4:
        # Mid-trick: only phase, to_move, packed hands and trick change (the first four fields).
        nxt = (seat + 1) & 3
        melding = state[4][0].melds
        phase = melds.turn_phase(state, nxt, packed, state.won) if melding else PLAY_PHASE
        return _new(State, (phase, nxt, packed, trick, state[4]))
    return _complete_trick(state, packed, trick)


def _announce(state: State, seat: int, action: int) -> State:
    """Record the politaine announcement and the signal that go with a play."""
    number = len(state.tricks) + 1
    said, announced = state.said, state.announced
    if action & POLITAINE:
        said, announced = politaine_rule.announce(said, announced, seat, number, action & 31)
    if action & (TAP | SLIDE):
        said = signals.signal(said, seat, number, action)
    return evolve(state, said=said, announced=announced)


def _complete_trick(state: State, packed: int, trick: tuple[int, ...]) -> State:
    """The fourth card is down: the trick is scored, the politaine and low lead move on."""
    (rules, seed, deal, dealer, redeal_count, score, dealt, leader, tricks, taken, won, said, _,
     run, announced, poule_counts, bonus, meld_points, melded, redeals, history,
     result) = state[4]  # fmt: skip
    a, b, c, d = trick
    # The strongest card of the suit led has the lowest index within that suit's eight.
    # Any card between the suit's first index and the best so far is of that suit and stronger.
    low = a & ~7
    best, pos = a, 0
    if low <= b < best:
        best, pos = b, 1
    if low <= c < best:
        best, pos = c, 2
    if low <= d < best:
        best, pos = d, 3
    winner = (leader + pos) & 3
    team = winner & 1
    card_thirds = CARD_THIRDS[a] + CARD_THIRDS[b] + CARD_THIRDS[c] + CARD_THIRDS[d]
    last = len(tricks) == TRICKS_PER_DEAL - 1
    thirds = card_thirds + LAST_TRICK_THIRDS if last else card_thirds
    if team:
        taken = (taken[0], taken[1] + thirds)
        won = (won[0], won[1] + 1)
    else:
        taken = (taken[0] + thirds, taken[1])
        won = (won[0] + 1, won[1])
    tricks = (*tricks, _new(Trick, (leader, trick, winner, thirds)))
    mode = rules.politaine
    # A run moves only if one is under way or starts: an announced card (first-card), any trick
    # won with a T, 9 or A (before-play). Inlined: asked once a trick.
    if run is not None or (
        announced if mode is _FIRST_CARD else mode is _BEFORE_PLAY and (best & 7) < 3
    ):
        hand = packed >> (winner << 5) & _HAND
        run, bonus, poule_counts = politaine_rule.advance(
            mode, run, announced, winner, best, hand, bonus, poule_counts
        )
    rule = rules.low_lead
    bound = rule is not _LOW_OFF and low_lead.binds(rule, card_thirds, len(tricks))
    # By position, in Table's field order, as unpacked above (once a trick: see _begin_deal).
    table = _new(Table, (
        rules, seed, deal, dealer, redeal_count, score, dealt, winner, tricks, taken, won, said,
        bound, run, (), poule_counts, bonus, meld_points, melded, redeals, history, result,
    ))  # fmt: skip
    state = _new(State, (PLAY_PHASE, winner, packed, (), table))
    if last:
        return _end_deal(state)
    if rules.melds:
        return evolve(state, phase=melds.turn_phase(state, winner, packed, won))
    return state


def deal_scored(
    rules: RuleSet, before: tuple[int, int], taken: tuple[int, int], bonus: tuple[int, int],
    meld_points: tuple[int, int], won: tuple[int, int], deal: int,
) -> tuple[tuple[int, int], int | None, str | None]:
    """A finished deal's new totals (``before`` plus the points of the thirds ``taken``, the
    politaine ``bonus`` and the melds) and, when the match ends with it, the winning team (None:
    a draw) and why: ``capot``, ``eighteen-four``, ``target`` or ``limit`` (else None, None).
    The one place these rules live (search reads them too: ``engine.bots.expert.ending``)."""
    score = (
        before[0] + taken[0] // 3 + bonus[0] + meld_points[0],
        before[1] + taken[1] // 3 + bonus[1] + meld_points[1],
    )
    if rules.capot and TRICKS_PER_DEAL in won:
        return score, won.index(TRICKS_PER_DEAL), "capot"
    if rules.eighteen_four and score in ((18, 4), (4, 18)):
        return score, (0 if score[0] == 18 else 1), "eighteen-four"
    if max(score) >= rules.target and score[0] != score[1]:
        return score, (0 if score[0] > score[1] else 1), "target"
    if deal >= MAX_DEALS:
        return score, (None if score[0] == score[1] else 0 if score[0] > score[1] else 1), "limit"
    return score, None, None


def _end_deal(state: State) -> State:
    """Eight tricks played: the deal is scored, the match ends or the next deal is dealt."""
    rules = state.rules
    score, winner, reason = deal_scored(
        rules, state.score, state.taken, state.bonus, state.melds, state.won, state.deal
    )
    end = reason if reason in ("capot", "eighteen-four") else None
    record = deal_record(state, score, end)
    if reason is not None:
        return match_over(state, record, Result(winner, reason, score, None))
    return _start_deal(
        rules,
        state.seed,
        state.deal + 1,
        (state.dealer + 1) & 3,
        0,
        score,
        (*state.history, record),
        (),
    )


def _table_field(index: int) -> property:
    return property(lambda state: state[4][index], doc=f"``table.{Table._fields[index]}``")


# Every field of the table reads as an attribute of the state: ``state.score``, ``state.tricks``.
for _index, _name in enumerate(Table._fields):
    setattr(State, _name, _table_field(_index))
