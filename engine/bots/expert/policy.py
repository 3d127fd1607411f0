"""The rollout policy: ``greedy``'s one-trick heuristic on engine ints, for every seat.

It sees only what the seat to move would see: its own hand and the cards still out (the union
of the other hands in a sampled deal is exactly the unplayed cards it does not hold), so it
leaks nothing of the sample. Melds everything, announces every poule, claims only when the
count is sure, announces a politaine unless that would break its own run under way.
"""

from __future__ import annotations

from engine.actions import CLAIM, POLITAINE, REDEAL
from engine.cards import BYTE_CARDS, CARD_THIRDS, SUIT_MASKS, TNA_MASKS, cards_of
from engine.cards import TNA_ALL as _TNA_ALL
from engine.optional import claim
from engine.optional.low_lead import lowest_rank
from engine.optional.melds import meld_cards
from engine.optional.politaine import SUIT_LOW_BITS as _SUIT_LOW_BITS
from engine.optional.politaine import announceable
from engine.position import TRICKS_PER_DEAL
from engine.rules import ClaimOut, Politaine
from engine.state import MELD_PHASE, PLAY_PHASE, POULES_PHASE, REDEAL_PHASE, State, Table

_HAND = (1 << 32) - 1
_THIRDS = CARD_THIRDS
# Enum members as module globals (class attribute lookups are slow in the rollouts).
_FIRST_CARD, _POLITAINE_OFF = Politaine.FIRST_CARD, Politaine.OFF
_CLAIM_OFF, _ON_LEAD = ClaimOut.OFF, ClaimOut.ON_LEAD
_LAST_TRICK = TRICKS_PER_DEAL - 1  # tricks done when the deal's last trick is in progress
#: ``race`` bits: a follower contests a trick for a claim, for a meld (``race_cards``); a
#: leader keeps the lead from opponents who would claim (``_must_hold_lead``).
RACE_CLAIMS, RACE_MELDS, RACE_LEAD, RACE_FIRST = 1, 2, 4, 8
_BYTE_CARDS = BYTE_CARDS
_B0, _B1, _B2, _B3 = BYTE_CARDS
#: Positions of the table's fields read on every rollout move.
_LOW, _RUN = Table._fields.index("low"), Table._fields.index("run")


def claim_is_sure(state: State, seat: int) -> bool:
    """The team's count (total + card points so far + melds this deal) reaches the target."""
    table = state[4]
    team = seat & 1
    return table.score[team] + table.taken[team] // 3 + table.melds[team] >= table.rules.target


def policy_action(
    state: State,
    voids: list[int] | None = None,
    shrewd: bool = False,
    patience: int = 0,
    race: int = 0,
) -> int:
    """The policy's action in ``state`` (which must not be over).

    ``voids``: the suits (card masks) each seat is publicly known to lack; with them the policy
    plays like a careful player (``choose_card``), without them like ``greedy``. ``shrewd``
    (with ``voids``): ``tracker``'s finer discards and feeds (``shrewd_card``). ``patience``
    (shrewd only): a leader holding at least that many cards keeps its masters (0: never).
    ``race`` (shrewd only): a follower contests a trick for a claim (``RACE_CLAIMS``), a meld
    (``RACE_MELDS``) or, before its team has won a trick where melds count, the partner's melds
    (``RACE_FIRST``), whatever the trick is worth (``race_cards``); with ``RACE_LEAD`` a leader
    whom the opponents would claim against leads the card likeliest to keep the lead.
    """
    phase = state[0]
    if phase == PLAY_PHASE:
        return play_action(state, voids, shrewd, patience, race)
    legal = state.legal()
    if len(legal) == 1 or phase == MELD_PHASE:
        return legal[0]
    if phase == POULES_PHASE:
        return legal[-1]
    return REDEAL if phase == REDEAL_PHASE else legal[0]


def play_action(
    state: State,
    voids: list[int] | None = None,
    shrewd: bool = False,
    patience: int = 0,
    race: int = 0,
) -> int:
    """``policy_action`` in the play phase, read from the hand without listing every legal
    action (``State.legal``'s decorated plays): the card ``legal`` would offer, with the
    announcement ``with_flags`` would add, or the claim."""
    seat = state[1]
    packed = state[2]
    hand = packed >> (seat << 5) & _HAND
    trick = state[3]
    table = state[4]
    if trick:
        shift = trick[0] & 24
        follow = hand >> shift & 255
        if follow:
            cards = _BYTE_CARDS[shift >> 3][follow]
        else:
            cards = _B0[hand & 255] + _B1[hand >> 8 & 255] + _B2[hand >> 16 & 255] + _B3[hand >> 24]
    else:
        p = lowest_rank(hand) if table[_LOW] else hand
        cards = _B0[p & 255] + _B1[p >> 8 & 255] + _B2[p >> 16 & 255] + _B3[p >> 24]
    rules = table[0]
    if rules.plain_play:
        if len(cards) == 1:
            return cards[0]
    elif (
        rules.claim_out is not _CLAIM_OFF
        and claim.offered(rules.claim_out, bool(trick))
        and claim_is_sure(state, seat)
    ):
        return CLAIM
    if len(cards) == 1:
        card = cards[0]
    else:
        others = (packed | packed >> 32 | packed >> 64 | packed >> 96) & _HAND & ~hand
        if voids is None:
            card = _greedy(state, cards, hand, others)
        elif shrewd:
            card = _shrewd(state, cards, voids, hand, others, patience, race)
        else:
            card = _careful(state, cards, voids, hand, others)
    if rules.politaine is _FIRST_CARD and announceable(hand) >> card & 1:
        run = table[_RUN]
        if run is None or run[0] != seat:
            return card | POLITAINE
    return card


def solver_moves(state: State) -> list[int]:
    """The actions the exact solver tries in the play phase, ``greedy``'s choice first: one per
    playable card, announced where ``with_flags`` would; only the claim where the count is sure;
    one action where the card is forced (its decorations do not change the deal's value)."""
    seat = state[1]
    packed = state[2]
    hand = packed >> (seat << 5) & _HAND
    trick = state[3]
    table = state[4]
    if trick:
        shift = trick[0] & 24
        follow = hand >> shift & 255
        playable = follow << shift if follow else hand
    else:
        playable = lowest_rank(hand) if table.low else hand
    cards = cards_of(playable)
    rules = table[0]
    if (
        not rules.plain_play
        and rules.claim_out is not _CLAIM_OFF
        and claim.offered(rules.claim_out, bool(trick))
        and claim_is_sure(state, seat)
    ):
        return [CLAIM]
    announce = 0
    if rules.politaine is _FIRST_CARD:
        run = table.run
        if run is None or run[0] != seat:
            announce = announceable(hand)
    if len(cards) == 1:
        card = cards[0]
        return [card | POLITAINE if announce >> card & 1 else card]
    others = (packed | packed >> 32 | packed >> 64 | packed >> 96) & _HAND & ~hand
    first = _greedy(state, cards, hand, others)
    moves = [first | POLITAINE if announce >> first & 1 else first]
    for c in cards:
        if c != first:
            moves.append(c | POLITAINE if announce >> c & 1 else c)
    return moves


def with_flags(state: State, card: int, legal: tuple[int, ...]) -> int:
    """``card`` with a politaine announcement where legal and harmless; never a signal."""
    flagged = card | POLITAINE
    if flagged in legal:
        run = state[4].run
        if run is None or run[0] != state[1]:
            return flagged
    return card


def choose_card(state: State, cards: tuple[int, ...], voids: list[int] | None = None) -> int:
    """Win cheap, feed a partner's sure trick, lead masters and politaines, else throw cheap.

    With ``voids`` a trick is *sure* when no opponent still to play may hold a stronger card of
    the suit led (a void opponent cannot); without, when no stronger card is out at all.
    """
    hand, others = _reading(state)
    if voids is not None:
        return _careful(state, cards, voids, hand, others)
    return _greedy(state, cards, hand, others)


def _reading(state: State) -> tuple[int, int]:
    """The hand of the seat to move and the cards out in the other hands."""
    packed = state[2]
    hand = packed >> (state[1] << 5) & _HAND
    return hand, (packed | packed >> 32 | packed >> 64 | packed >> 96) & _HAND & ~hand


def _greedy(state: State, cards: tuple[int, ...], hand: int, others: int) -> int:
    """``choose_card`` without voids (``hand`` and ``others`` read from ``state``)."""
    trick = state[3]
    runs = state[4][0].politaine is not _POLITAINE_OFF
    if not trick:
        lead = _lead_run_or_master(state, hand, others, cards, runs)
        return lead if lead >= 0 else _cheapest(cards)
    low, best, partner_wins = _trick_so_far(trick)
    last = len(trick) == 3
    if partner_wins and (last or not _STRONGER[best] & others):
        return max(cards, key=_feed_key)
    beating = [c for c in cards if low <= c < best]
    if beating:
        if runs:
            run = _politaine_card(hand, beating)
            if run >= 0:
                return run
        if last or sum(_THIRDS[c] for c in trick) >= 3:
            return max(beating)
        masters = [c for c in beating if not _STRONGER[c] & others]
        if masters:
            return min(masters, key=_THIRDS.__getitem__)
    return _cheapest(cards)


def _careful(state: State, cards: tuple[int, ...], voids: list[int], hand: int, others: int) -> int:
    """``choose_card`` with the public voids (see there)."""
    seat = state[1]
    trick = state[3]
    runs = state[4][0].politaine is not _POLITAINE_OFF
    left, right = (seat + 1) & 3, (seat + 3) & 3
    if not trick:
        lead = _lead_run_or_master(state, hand, others, cards, runs)
        if lead >= 0:
            return lead
        # A suit both opponents lack and the partner may hold: our cheapest card there wins.
        both = voids[left] & voids[right] & ~voids[(seat + 2) & 3]
        free = [c for c in cards if both >> c & 1]
        return _cheapest(free) if free else _cheapest(cards)
    low, best, partner_wins = _trick_so_far(trick)
    last = len(trick) == 3
    # Following, the one opponent still to play (if any) is the left one: what may it hold?
    threat = 0 if last else others & ~voids[left]
    if partner_wins and (last or not _STRONGER[best] & threat):
        return max(cards, key=_feed_key)
    beating = [c for c in cards if low <= c < best]
    if beating:
        if runs:
            run = _politaine_card(hand, beating)
            if run >= 0:
                return run
        if last:
            return max(beating)
        sure = [c for c in beating if not _STRONGER[c] & threat]
        if sure:
            return max(sure)  # the weakest card that surely wins
        if sum(_THIRDS[c] for c in trick) >= 3:
            return max(beating)
    return _cheapest(cards)


def _lead_run_or_master(
    state: State, hand: int, others: int, cards: tuple[int, ...], runs: bool
) -> int:
    """A politaine run from the top, else the master worth most (lowest card code); -1 if none."""
    if runs:
        run = _politaine_card(hand, cards, state)
        if run >= 0:
            return run
    best = -1
    best_key = (-1, 0)
    for c in cards:
        if not _STRONGER[c] & others:
            key = (_THIRDS[c], -c)
            if key > best_key:
                best, best_key = c, key
    return best


def shrewd_card(state: State, cards: tuple[int, ...], voids: list[int]) -> int:
    """``tracker``'s card on engine ints: the careful policy with finer discards and feeds.

    Leads a run, else the master worth most (drawing a suit the opponents still hold first),
    else low into a suit both opponents lack; following, feeds a partner's sure trick its most
    points but not a master, wins with the weakest sure card, contests an opponent's trick
    worth a point, else discards the card that gives away least (``_spare``).
    """
    hand, others = _reading(state)
    return _shrewd(state, cards, voids, hand, others)


def _shrewd(
    state: State,
    cards: tuple[int, ...],
    voids: list[int],
    hand: int,
    others: int,
    patience: int = 0,
    race: int = 0,
) -> int:
    """``shrewd_card`` (``hand`` and ``others`` read from ``state``); with ``patience``, a
    leader holding at least that many cards keeps its masters (they win whenever led, and
    held they may still catch a card worth more) and leads as without one, from a suit whose
    master it does not hold where it can; with ``race``, a follower contests the trick with
    ``race_cards`` where there are any: the weakest sure winner, else the strongest."""
    seat = state[1]
    trick = state[3]
    runs = state[4][0].politaine is not _POLITAINE_OFF
    left, right = (seat + 1) & 3, (seat + 3) & 3
    if not trick:
        if runs:
            run = _politaine_card(hand, cards, state, True)
            if run >= 0:
                return run
        masters = [c for c in cards if not _STRONGER[c] & others]
        if masters and patience and hand.bit_count() >= patience:
            held = 0
            for c in masters:
                held |= SUIT_MASKS[c >> 3]
            away = [c for c in cards if not held >> c & 1]
            cards = away or cards
            masters = []
        if not masters and race & RACE_LEAD and _must_hold_lead(state):
            threat = others & ~(voids[left] & voids[right])
            return min(cards, key=lambda c: ((_STRONGER[c] & threat).bit_count(), c))
        if masters:
            open_left, open_right = others & ~voids[left], others & ~voids[right]

            def drawn(c: int) -> tuple[int, int, int]:
                suit = SUIT_MASKS[c >> 3]
                return (_THIRDS[c], bool(open_left & suit) + bool(open_right & suit), -c)

            return max(masters, key=drawn)
        both = voids[left] & voids[right] & ~voids[(seat + 2) & 3]
        free = [c for c in cards if both >> c & 1]
        return _spare(free if free else cards, hand, others)
    low, best, partner_wins = _trick_so_far(trick)
    last = len(trick) == 3
    threat = 0 if last else others & ~voids[left]
    if partner_wins and not _STRONGER[best] & threat:
        return max(cards, key=lambda c: (_THIRDS[c], bool(_STRONGER[c] & others), c & 7))
    beating = [c for c in cards if low <= c < best]
    if beating:
        if runs:
            run = _politaine_card(hand, beating)
            if run >= 0:
                return run
        if race:
            wanted = race_cards(state, hand, beating, race, partner_wins)
            if wanted:
                sure = [c for c in wanted if not _STRONGER[c] & threat]
                return max(sure) if sure else min(wanted)
        sure = [c for c in beating if not _STRONGER[c] & threat]
        if sure:
            return max(sure)  # the weakest card that surely wins
        if not partner_wins and sum(_THIRDS[c] for c in trick) >= 3:
            return max(beating)
    return _spare(cards, hand, others)


def _must_hold_lead(state: State) -> bool:
    """A leader whose opponents would claim on the next lead (their count reaches the target)
    and whose deal goes on after this trick: it must keep the lead."""
    table = state[4]
    rules = table[0]
    return (
        rules.claim_out is _ON_LEAD
        and len(table.tricks) < _LAST_TRICK
        and claim.count(state, 1 - (state[1] & 1)) >= rules.target
    )


def race_cards(
    state: State, hand: int, beating: list[int], race: int, partner_wins: bool
) -> list[int]:
    """Of a follower's ``beating`` cards, those worth contesting the trick with whatever it is
    worth ([]: no such reason). ``RACE_CLAIMS``: where a claim is offered on the lead and the
    deal goes on after this trick, winning it gives the team the lead with a count that claims
    (its strongest beating card's thirds counted), or keeps the lead from opponents whose count
    with the trick's thirds so far would claim. ``RACE_MELDS``: where the team has won no trick
    yet and the seat holds a meld, winning lets it meld; only cards outside its melds then.
    ``RACE_FIRST``: where melds count, the team has won no trick yet and an opponent holds the
    trick, winning lets the partner meld too; cards outside the seat's own melds."""
    table = state[4]
    rules = table[0]
    team = state[1] & 1
    if race & RACE_CLAIMS and rules.claim_out is _ON_LEAD and len(table.tricks) < _LAST_TRICK:
        thirds = sum(_THIRDS[c] for c in state[3])
        score, taken, melds = table.score, table.taken, table.melds
        ours = score[team] + (taken[team] + thirds + _THIRDS[min(beating)]) // 3 + melds[team]
        theirs = score[1 - team] + (taken[1 - team] + thirds) // 3 + melds[1 - team]
        if ours >= rules.target or theirs >= rules.target:
            return beating
    if race & (RACE_MELDS | RACE_FIRST) and rules.melds and not table.won[team]:
        melding = meld_cards(hand, table.melded) if (hand & _TNA_ALL).bit_count() >= 3 else 0
        outside = [c for c in beating if not melding >> c & 1]
        if race & RACE_MELDS and melding:
            return outside
        if race & RACE_FIRST and not partner_wins and outside:
            return outside
    return []


def _spare(cards: tuple[int, ...] | list[int], hand: int, others: int) -> int:
    """The card that gives away least: no points, not a master, the weakest rank, then from
    the longest suit (short suits become voids to discard on)."""

    # The tuple (thirds, not a master, -rank, -suit length) packed in one int, same order.
    def key(c: int) -> int:
        master = 0 if _STRONGER[c] & others else 128
        return _SPARE_KEY[c] | master | (8 - (hand & SUIT_MASKS[c >> 3]).bit_count())

    return min(cards, key=key)


#: For each card, the mask of the stronger cards of its suit.
_STRONGER = tuple(((1 << c) - 1) & ~((1 << (c & ~7)) - 1) for c in range(32))
#: ``_spare``'s key of each card before the master and suit length bits: thirds, then rank.
_SPARE_KEY = tuple(_THIRDS[c] << 8 | (7 - (c & 7)) << 4 for c in range(32))


def _feed_key(c: int) -> tuple[int, int, int]:
    return (_THIRDS[c], -(c & 7), -c)


def _cheapest(cards: tuple[int, ...] | list[int]) -> int:
    """The card that gives away least: lowest value, then lowest rank."""
    return min(cards, key=_cheap_key)


def _cheap_key(c: int) -> tuple[int, int]:
    return (_THIRDS[c], -(c & 7))


def _politaine_card(
    hand: int, cards: tuple[int, ...] | list[int], state: State | None = None, go_on: bool = False
) -> int:
    """Start a run from the top (A, then T, then 9) in a suit of T, 9 and A; -1 if none.

    ``go_on`` (leading, with ``state``): first go on with the seat's own run under way.
    """
    if go_on and state is not None:
        run = state[4].run
        if run is not None and run[0] == state[1]:
            base = run[1] << 3
            for card in (base + 2, base, base + 1):
                if card in cards:
                    return card
    tna = hand & _TNA_ALL
    if not tna & (tna >> 1) & (tna >> 2) & _SUIT_LOW_BITS:
        return -1  # no complete T-9-A in hand
    for suit in range(4):
        if hand & TNA_MASKS[suit] == TNA_MASKS[suit]:
            base = suit << 3
            for card in (base + 2, base, base + 1):
                if card in cards:
                    return card
    return -1


def _trick_so_far(trick: list[int]) -> tuple[int, int, bool]:
    """Of a trick begun (its cards in play order): the lowest card code of the led suit, the card
    winning it so far (the led suit's lowest code: its strongest card), and whether that card is
    the partner's of the seat to play next."""
    low = (trick[0] >> 3) << 3
    best = trick[0]
    pos = 0
    for i in range(1, len(trick)):
        c = trick[i]
        if low <= c < best:
            best, pos = c, i
    return low, best, (len(trick) - pos) & 1 == 0
