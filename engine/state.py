"""The game as an immutable value: ``State.apply(action)`` returns the next state.

One ``State`` covers a whole match: the deal in progress plus the record of finished deals.
Chance is explicit: every deck comes from ``(seed, deal, redeal)`` (see ``deck.py``), so a state
never draws a random number. Actions are ints (``actions.py``); ``legal()`` lists them and
``apply()`` trusts that it is given one of them (``step()`` checks and takes protocol strings).
Imports nothing of Django or the sandbox.
"""

from __future__ import annotations

from typing import NamedTuple

from engine.actions import (
    CLAIM,
    DONE,
    KEEP,
    MAX_POULES,
    MELD,
    MELD_FOUR,
    MELD_THREE,
    PLAY_LIMIT,
    POLITAINE,
    POULES,
    REDEAL,
    SLIDE,
    TAP,
    action_to_str,
    meld_name,
    meld_points,
    parse_action,
)
from engine.cards import BYTE_CARDS as _BYTE_CARDS
from engine.cards import (
    CARD_THIRDS,
    FULL_DECK,
    LAST_TRICK_THIRDS,
    RANK_7,
    RANK_8,
    RANK_MASKS,
    TNA_MASKS,
    cards_of,
)
from engine.deck import seeded_hands
from engine.rules import RuleSet

REDEAL_PHASE, POULES_PHASE, MELD_PHASE, PLAY_PHASE, OVER = range(5)
DECISIONS = ("redeal", "poules", "meld", "play", None)

#: [ruling] A match that reaches this many deals ends: higher total wins, equal totals draw.
MAX_DEALS = 100
#: [ruling, engine] After this many redeals of one deal nobody is offered another, so every
#: match is finite (the chance of reaching it is below 1e-100).
MAX_REDEALS = 50
TRICKS_PER_DEAL = 8
POLITAINE_POINTS = 11

_B0, _B1, _B2, _B3 = _BYTE_CARDS
_new = tuple.__new__
_HAND = (1 << 32) - 1


def pack_hands(hands: tuple[int, ...]) -> int:
    """Four 32-bit hands in one int, seat ``s`` in bits ``32s..32s+31``."""
    return hands[0] | hands[1] << 32 | hands[2] << 64 | hands[3] << 96


_HIGH = RANK_MASKS[0] | RANK_MASKS[1] | RANK_MASKS[2]  # every T, 9 and A
_SEVENS = RANK_MASKS[RANK_7]
_EIGHTS = RANK_MASKS[RANK_8]


class Trick(NamedTuple):
    """A finished trick: ``cards[i]`` was played by seat ``(leader + i) % 4``.

    ``thirds`` is the trick's worth to its winner, the last-trick bonus included, so the eight
    tricks of a deal add up to 35.
    """

    leader: int
    cards: tuple[int, ...]
    winner: int
    thirds: int


class Said(NamedTuple):
    """Something said in public: ``say`` as in the protocol; ``card`` is -1 when none goes with it.

    ``trick`` is the 1-based trick it was said in, 0 before play.
    """

    seat: int
    trick: int
    say: str
    card: int


class Fault(NamedTuple):
    """A seat's failure that forfeited the match."""

    seat: int
    kind: str
    detail: str


class Result(NamedTuple):
    """How a match ended. ``winner`` is a team, or None for a draw at the safety limit."""

    winner: int | None
    reason: str
    score: tuple[int, int]
    fault: Fault | None


class DealRecord(NamedTuple):
    """A finished (or interrupted) deal, as replay format 1 keeps it."""

    number: int
    dealer: int
    redeals: tuple[tuple[int, tuple[int, int, int, int]], ...]
    hands: tuple[int, int, int, int]
    said: tuple[Said, ...]
    tricks: tuple[Trick, ...]
    thirds: tuple[int, int]
    points: tuple[int, int]
    bonus: tuple[int, int]
    melds: tuple[int, int]
    score: tuple[int, int]
    end: str | None
    trick: tuple[int, tuple[int, ...]] = (0, ())  # (leader, cards) of a trick cut short


class Table(NamedTuple):
    """Everything of a state but the four fields that change with every card (see ``State``)."""

    rules: RuleSet
    seed: int
    deal: int
    dealer: int
    redeal: int
    score: tuple[int, int]
    dealt: tuple[int, int, int, int]
    leader: int
    tricks: tuple[Trick, ...]
    taken: tuple[int, int]
    won: tuple[int, int]
    said: tuple[Said, ...]
    low: bool
    run: tuple[int, int, int] | None
    announced: tuple[tuple[int, int], ...]
    poules: tuple[int, int, int, int]
    bonus: tuple[int, int]
    melds: tuple[int, int]
    melded: int
    redeals: tuple[tuple[int, tuple[int, int, int, int]], ...]
    history: tuple[DealRecord, ...]
    result: Result | None


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
            melds = available_melds(self.hands[self.to_move], self.melded)
            return (*(MELD + m for m in melds), DONE)
        if phase == REDEAL_PHASE:
            return (REDEAL, KEEP)
        if phase == POULES_PHASE:
            return tuple(POULES + n for n in range(_complete_suits(self.hands[self.to_move]) + 1))
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
            return _meld(self, action - MELD)
        if action == DONE:
            return _evolve(self, phase=PLAY_PHASE)
        if action == CLAIM:
            return _claim(self)
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
        fault = Fault(seat, kind, detail)
        record = _record(self, self.score, "forfeit")
        result = Result(1 - (seat & 1), "forfeit", self.score, fault)
        return _over(self, record, result)

    def with_hands(self, hands: tuple[int, int, int, int]) -> State:
        """The same position with other hidden cards (for search over sampled deals)."""
        return _evolve(self, packed=pack_hands(hands))

    def replace(self, **changes: object) -> State:
        """This state with fields changed, those of ``table`` included (for building positions)."""
        return _evolve(self, **changes)


# -- starting -------------------------------------------------------------------------------------


def new_match(rules: RuleSet, seed: int) -> State:
    """The state before the first decision of a seeded match (the first deal dealt)."""
    return _start_deal(rules, seed, 1, 3, 0, (0, 0), (), ())


def _start_deal(
    rules: RuleSet,
    seed: int,
    deal: int,
    dealer: int,
    redeal: int,
    score: tuple[int, int],
    history: tuple[DealRecord, ...],
    redeals: tuple,
) -> State:
    hands = seeded_hands(seed, deal, redeal, dealer)
    return _begin_deal(rules, hands, seed, deal, dealer, redeal, score, history, redeals)


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
    redeal: int,
    score: tuple[int, int],
    history: tuple[DealRecord, ...],
    redeals: tuple,
) -> State:
    leader = (dealer + 1) & 3
    table = _new(Table, (
        rules, seed, deal, dealer, redeal, score, hands, leader, (), (0, 0), (0, 0), (), False,
        None, (), (0, 0, 0, 0), (0, 0), (0, 0), 0, redeals, history, None,
    ))  # fmt: skip
    state = _new(State, (PLAY_PHASE, leader, pack_hands(hands), (), table))
    if rules.four_sevens or rules.four_eights:
        instant = _instant_win(rules, hands)
        if instant is not None:
            team, reason = instant
            record = _record(state, score, reason)
            return _over(state, record, Result(team, reason, score, None))
    if rules.redeal and redeal < MAX_REDEALS:
        asker = _next_redeal_seat(hands, leader, -1)
        if asker is not None:
            return _evolve(state, phase=REDEAL_PHASE, to_move=asker)
    if rules.politaine == "before-play" or rules.melds:
        return _before_play(state)
    return state


def _union(hands: tuple[int, ...]) -> int:
    return hands[0] | hands[1] | hands[2] | hands[3]


def _instant_win(rules: RuleSet, hands: tuple[int, ...]) -> tuple[int, str] | None:
    """Four 7s, then four 8s (four 7s beat four 8s in another hand)."""
    h0, h1, h2, h3 = hands
    if rules.four_sevens:
        held = (h0 & _SEVENS, h1 & _SEVENS, h2 & _SEVENS, h3 & _SEVENS)
        if _SEVENS in held:
            return held.index(_SEVENS) & 1, "four-sevens"
    if rules.four_eights:
        held = (h0 & _EIGHTS, h1 & _EIGHTS, h2 & _EIGHTS, h3 & _EIGHTS)
        if _EIGHTS in held:
            return held.index(_EIGHTS) & 1, "four-eights"
    return None


def _next_redeal_seat(hands: tuple[int, ...], leader: int, after: int) -> int | None:
    """The next seat in play order from the leader, after position ``after``, holding no T/9/A."""
    for pos in range(after + 1, 4):
        seat = (leader + pos) & 3
        if not hands[seat] & _HIGH:
            return seat
    return None


def _before_play(state: State) -> State:
    if state.rules.politaine == "before-play":
        return _evolve(state, phase=POULES_PHASE, to_move=state.leader)
    return _turn(state, state.leader)


def _turn(state: State, seat: int) -> State:
    return _evolve(state, to_move=seat, phase=_turn_phase(state, seat, state.packed, state.won))


def _turn_phase(state: State, seat: int, packed: int, won: tuple[int, int]) -> int:
    """MELD if ``seat`` may and can meld now, else PLAY."""
    if not state.rules.melds:
        return PLAY_PHASE
    first_lead = not state.tricks and not state.trick and seat == state.leader
    hand = packed >> (seat << 5) & _HAND
    if (first_lead or won[seat & 1]) and available_melds(hand, state.melded):
        return MELD_PHASE
    return PLAY_PHASE


# -- legal actions --------------------------------------------------------------------------------


def _decorated_plays(state: State, hand: int, playable: int) -> tuple[int, ...]:
    """Plays with their politaine announcements and signals, and the claim, where the rules say."""
    cards = cards_of(playable)
    rules = state.rules
    if rules.politaine == "first-card" and _announceable(hand) & playable:
        announce = _announceable(hand)
        cards = tuple(a for c in cards for a in ((c, c | POLITAINE) if announce >> c & 1 else (c,)))
    if rules.signals:
        cards = tuple(a | flag for a in cards for flag in (0, TAP, SLIDE))
    claim = rules.claim_out
    if claim != "off" and (claim == "any-turn" or not state.trick):
        return (*cards, CLAIM)
    return cards


_TNA_ALL = TNA_MASKS[0] | TNA_MASKS[1] | TNA_MASKS[2] | TNA_MASKS[3]
_SUIT_LOW_BITS = 0x01010101


def _announceable(hand: int) -> int:
    """Cards a politaine may be announced with: T, 9 and A of a suit all held (RULES.md)."""
    tna = hand & _TNA_ALL
    if not tna & (tna >> 1) & (tna >> 2) & _SUIT_LOW_BITS:
        return 0
    return sum(m for m in TNA_MASKS if tna & m == m)


def _lowest_rank(hand: int) -> int:
    """The cards of the lowest rank held, in any suit (the low-lead rule)."""
    for rank in range(7, -1, -1):
        cards = hand & RANK_MASKS[rank]
        if cards:
            return cards
    return 0


def _complete_suits(hand: int) -> int:
    return min(MAX_POULES, sum(1 for m in TNA_MASKS if hand & m == m))


def available_melds(hand: int, melded: int) -> tuple[int, ...]:
    """Meld ids ``hand`` could meld now; each meld once a deal, four of a rank instead of three."""
    found = []
    for suit in range(4):
        if hand & TNA_MASKS[suit] == TNA_MASKS[suit] and not melded >> suit & 1:
            found.append(suit)
    for rank in range(3):
        if melded & ((1 << (MELD_FOUR + rank)) | (0xF << (MELD_THREE + 4 * rank))):
            continue
        held = hand & RANK_MASKS[rank]
        count = bin(held).count("1")
        if count == 4:
            found.append(MELD_FOUR + rank)
        elif count == 3:
            missing = next(s for s in range(4) if not held >> (8 * s + rank) & 1)
            found.append(MELD_THREE + 4 * rank + missing)
    return tuple(found)


# -- transitions ----------------------------------------------------------------------------------


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
        phase = _turn_phase(state, nxt, packed, state.won) if state[4][0].melds else PLAY_PHASE
        return _new(State, (phase, nxt, packed, trick, state[4]))
    return _complete_trick(state, packed, trick)


def _announce(state: State, seat: int, action: int) -> State:
    """Record the politaine announcement and signal that go with a play."""
    card = action & 31
    number = len(state.tricks) + 1
    said = state.said
    announced = state.announced
    if action & POLITAINE:
        said = (*said, Said(seat, number, "politaine", card))
        announced = (*announced, (seat, card))
    if action & TAP:
        said = (*said, Said(seat, number, "tap", card))
    elif action & SLIDE:
        said = (*said, Said(seat, number, "slide", card))
    return _evolve(state, said=said, announced=announced)


def _complete_trick(state: State, packed: int, trick: tuple[int, ...]) -> State:
    (rules, seed, deal, dealer, redeal, score, dealt, leader, tricks, taken, won, said, _, run,
     announced, poules, bonus, melds, melded, redeals, history, result) = state[4]  # fmt: skip
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
    # A run moves only if one is under way, or starts (announced, or any T/9/A before-play).
    if run is not None or (
        announced if mode == "first-card" else mode == "before-play" and (best & 7) < 3
    ):
        hand = packed >> (winner << 5) & _HAND
        run, bonus, poules = _politaine(mode, run, announced, winner, best, hand, bonus, poules)
    low_lead = rules.low_lead
    low = card_thirds < 3 and (
        low_lead == "every-trick" or (low_lead == "first-trick" and len(tricks) == 1)
    )
    table = _new(Table, (
        rules, seed, deal, dealer, redeal, score, dealt, winner, tricks, taken, won, said, low, run,
        (), poules, bonus, melds, melded, redeals, history, result,
    ))  # fmt: skip
    state = _new(State, (PLAY_PHASE, winner, packed, (), table))
    if last:
        return _end_deal(state)
    if rules.melds:
        return _evolve(state, phase=_turn_phase(state, winner, packed, won))
    return state


def _politaine(
    mode: str,
    run: tuple[int, int, int] | None,
    announced: tuple[tuple[int, int], ...],
    winner: int,
    best: int,
    hand: int,
    bonus: tuple[int, int],
    poules: tuple[int, int, int, int],
) -> tuple[tuple[int, int, int] | None, tuple[int, int], tuple[int, int, int, int]]:
    """Advance, complete, break or start a politaine run once ``winner`` took a trick with ``best``.

    A run is three consecutive tricks of the deal won by one player with the T, 9 and A of one
    suit. ``first-card``: it starts only with an announced card and always pays. ``before-play``:
    any run counts, paying while the player still has announced poules left.
    """
    suit = best >> 3
    tna = (best & 7) < 3
    if run is not None and run[0] == winner and run[1] == suit and tna:
        count = run[2] + 1
        if count < 3:
            return (winner, suit, count), bonus, poules
        team = winner & 1
        if mode == "first-card":
            paid = True
        else:
            paid = poules[winner] > 0
            if paid:
                poules = (*poules[:winner], poules[winner] - 1, *poules[winner + 1 :])
        if paid:
            bonus = _add(bonus, team, POLITAINE_POINTS)
        return None, bonus, poules
    run = None
    if tna:
        if mode == "first-card":
            if (winner, best) in announced:
                run = (winner, suit, 1)
        elif (hand | (1 << best)) & TNA_MASKS[suit] == TNA_MASKS[suit]:
            run = (winner, suit, 1)
    return run, bonus, poules


def _end_deal(state: State) -> State:
    rules = state.rules
    taken, bonus, melds = state.taken, state.bonus, state.melds
    before = state.score
    score = (
        before[0] + taken[0] // 3 + bonus[0] + melds[0],
        before[1] + taken[1] // 3 + bonus[1] + melds[1],
    )
    winner: int | None = None
    reason = None
    if rules.capot and TRICKS_PER_DEAL in state.won:
        winner, reason = state.won.index(TRICKS_PER_DEAL), "capot"
    elif rules.eighteen_four and score in ((18, 4), (4, 18)):
        winner, reason = (0 if score[0] == 18 else 1), "eighteen-four"
    elif max(score) >= rules.target and score[0] != score[1]:
        winner, reason = (0 if score[0] > score[1] else 1), "target"
    elif state.deal >= MAX_DEALS:
        winner = None if score[0] == score[1] else (0 if score[0] > score[1] else 1)
        reason = "limit"
    end = reason if reason in ("capot", "eighteen-four") else None
    record = _record(state, score, end)
    if reason is not None:
        return _over(state, record, Result(winner, reason, score, None))
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


def _record(state: State, score: tuple[int, ...], end: str | None) -> DealRecord:
    taken = state.taken
    return DealRecord(
        state.deal,
        state.dealer,
        state.redeals,
        state.dealt,
        state.said,
        state.tricks,
        taken,
        (taken[0] // 3, taken[1] // 3),
        state.bonus,
        state.melds,
        tuple(score),
        end,
        (state.leader, state.trick),
    )


def _over(state: State, record: DealRecord, result: Result) -> State:
    return _evolve(
        state,
        phase=OVER,
        to_move=-1,
        history=(*state.history, record),
        result=result,
        score=result.score,
    )


def _claim(state: State) -> State:
    """Claim the target: this deal's card points so far and melds count, the last trick does not."""
    seat = state.to_move
    team = seat & 1
    said = (*state.said, Said(seat, len(state.tricks) + 1, "claim", -1))
    state = _evolve(state, said=said)
    counted = tuple(state.score[t] + state.taken[t] // 3 + state.melds[t] for t in (0, 1))
    winner = team if counted[team] >= state.rules.target else 1 - team
    return _over(state, _record(state, counted, "claim"), Result(winner, "claim", counted, None))


def _meld(state: State, meld: int) -> State:
    seat = state.to_move
    team = seat & 1
    points = meld_points(meld)
    melds = _add(state.melds, team, points)
    melded = state.melded | (1 << meld)
    said = (*state.said, Said(seat, len(state.tricks) + 1, "meld " + meld_name(meld), -1))
    phase = MELD_PHASE if available_melds(state.hands[seat], melded) else PLAY_PHASE
    return _evolve(state, melds=melds, melded=melded, said=said, phase=phase)


def _poules(state: State, count: int) -> State:
    seat = state.to_move
    poules = (*state.poules[:seat], count, *state.poules[seat + 1 :])
    said = (*state.said, Said(seat, 0, f"poules {count}", -1))
    state = _evolve(state, poules=poules, said=said)
    nxt = (seat + 1) & 3
    if nxt == state.leader:
        return _turn(state, state.leader)
    return _evolve(state, to_move=nxt)


def _redeal(state: State) -> State:
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
    position = (state.to_move - state.leader) & 3
    asker = _next_redeal_seat(state.hands, state.leader, position)
    if asker is not None:
        return _evolve(state, to_move=asker)
    return _before_play(state)


def _add(pair: tuple[int, int], team: int, amount: int) -> tuple[int, int]:
    """``pair`` with ``amount`` added to one team's entry."""
    return (pair[0] + amount, pair[1]) if team == 0 else (pair[0], pair[1] + amount)


_HOT = frozenset(("phase", "to_move", "packed", "trick"))


def _evolve(state: State, **changes: object) -> State:
    """``state`` with fields changed, whether they live in the state or in its table."""
    phase, to_move, packed, trick, table = state
    cold = {name: value for name, value in changes.items() if name not in _HOT}
    if cold:
        table = table._replace(**cold)
    return _new(
        State,
        (
            changes.get("phase", phase),
            changes.get("to_move", to_move),
            changes.get("packed", packed),
            changes.get("trick", trick),
            table,
        ),
    )


def _table_field(index: int) -> property:
    return property(lambda state: state[4][index], doc=f"``table.{Table._fields[index]}``")


# Every field of the table reads as an attribute of the state: ``state.score``, ``state.tricks``.
for _index, _name in enumerate(Table._fields):
    setattr(State, _name, _table_field(_index))
