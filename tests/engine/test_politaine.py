"""The politaine run and its bonus (``engine/optional/politaine.py``): first-card announcements."""

from __future__ import annotations

import pytest

from engine.cards import mask_from_codes, parse_card
from engine.optional.politaine import POLITAINE_POINTS, advance, announceable
from engine.rules import Politaine, rules_for
from tests.engine.helpers import deal, finish_deal, hands_from, run

# Seat 1 holds T, 9 and A of hearts and of diamonds; seat 0 leads (dealer 3).
HANDS = [
    "KH QH TC 9C AC KC QC JC",
    "TH 9H AH JH 8H TD 9D AD",
    "7H KD QD JD 8D 7D 8C 7C",
    "TS 9S AS KS QS JS 8S 7S",
]

# Seat 1 wins trick 1 as a follower with TH, then leads AH and 9H.
RUN_HEARTS = "KH TH/politaine 7H 7S   AH 7D 8S QH   9H 7C JS TC"
RUN_DIAMONDS = "TD/politaine KD QS 9C   AD QD KS AC   9D JD AS KC"


def quatre_sept(**options):
    return rules_for("quatre-sept", **options)


def test_announcement_offered_with_t_9_a_while_holding_all_three():
    state = run(deal(quatre_sept(), HANDS), "KH")
    assert set(state.legal_strings()) == {
        "play TH", "play TH politaine", "play 9H", "play 9H politaine",
        "play AH", "play AH politaine", "play JH", "play 8H",
    }


def test_politaine_won_as_follower():
    state = run(deal(quatre_sept(), HANDS), RUN_HEARTS)
    assert state.to_move == 1
    assert [t.winner for t in state.tricks] == [1, 1, 1]
    record = finish_deal(state).history[0]
    assert record.bonus == (0, 11)
    assert record.score == (record.points[0], record.points[1] + 11), "added whole"
    politaine = [s for s in record.said if s.say == "politaine"]
    assert [(s.seat, s.trick) for s in politaine] == [(1, 1)]


def test_politaine_lost_to_an_unrelated_trick_in_between():
    # TH wins trick 1 (announced), TD wins trick 2, then AH and 9H: not three consecutive.
    state = run(
        deal(quatre_sept(), HANDS),
        "KH TH/politaine 7H 7S   TD 7D 8S JC   AH 7C JS QH   9H 8C QS TC",
    )
    assert [t.winner for t in state.tricks] == [1, 1, 1, 1]
    assert finish_deal(state).history[0].bonus == (0, 0)


def test_politaine_lost_when_another_player_wins_in_between():
    # Seat 0 announces with AC and wins trick 1, loses the lead, wins tricks 7 and 8 with TC, 9C.
    hands = [
        "TC 9C AC KH QH 7D 8D JS",
        "KC QC JC TH 9H AH 8H 7H",
        "8C 7C TD 9D AD KD QD JD",
        "TS 9S AS KS QS JH 8S 7S",
    ]
    state = run(
        deal(quatre_sept(), hands),
        "AC/politaine KC 8C TS   KH TH TD JH   9H 9D 9S QH   AH AD AS 7D "
        "8H KD KS 8D   7H QD QS JS   QC 7C 8S TC   9C JC JD 7S",
    )
    record = state.history[0]
    assert [t.winner for t in record.tricks] == [0, 1, 1, 1, 1, 1, 0, 0]
    assert record.bonus == (0, 0)


def test_two_politaines_in_one_deal():
    state = run(deal(quatre_sept(), HANDS), RUN_HEARTS + " " + RUN_DIAMONDS)
    assert [t.winner for t in state.tricks] == [1] * 6
    record = finish_deal(state).history[0]
    assert record.bonus == (0, 22)
    assert record.score[1] == record.points[1] + 22


def test_the_run_needs_an_announcement_with_its_first_card():
    plain = RUN_HEARTS.replace("TH/politaine", "TH")
    assert finish_deal(run(deal(quatre_sept(), HANDS), plain)).history[0].bonus == (0, 0)


def test_announcement_with_the_second_card_is_no_longer_legal():
    state = run(deal(quatre_sept(), HANDS), "KH TH 7H 7S")
    assert state.to_move == 1
    legal = state.legal_strings()
    assert "play AH" in legal and "play 9H" in legal
    assert "play AH politaine" not in legal and "play 9H politaine" not in legal
    with pytest.raises(ValueError):
        state.step("play AH politaine")
    # The diamonds are still complete: an announcement there is legal.
    assert "play TD politaine" in legal


def test_failed_announcement_costs_nothing():
    # Seat 0 announces with TC as a discard, holding TC 9C AC: it cannot win the trick.
    base = "KH TH 7H 7S   TD 7D 8S {tc}"
    with_call = finish_deal(run(deal(quatre_sept(), HANDS), base.format(tc="TC/politaine")))
    without = finish_deal(run(deal(quatre_sept(), HANDS), base.format(tc="TC")))
    a, b = with_call.history[0], without.history[0]
    assert [s.say for s in a.said] == ["politaine"]
    assert a.bonus == b.bonus == (0, 0)
    assert a.score == b.score and a.thirds == b.thirds


def test_politaine_off_offers_no_announcement():
    state = run(deal(quatre_sept(politaine="off"), HANDS), "KH")
    assert all("politaine" not in a for a in state.legal_strings())
    state = run(state, RUN_HEARTS.replace("TH/politaine", "TH").split(maxsplit=1)[1])
    assert finish_deal(state).history[0].bonus == (0, 0)


def test_politaine_points_count_toward_the_target():
    # 20 + card points + 11 reaches 33 in the politaine preset's target.
    state = finish_deal(run(deal(quatre_sept(), HANDS, score=(0, 20)), RUN_HEARTS))
    record = state.history[0]
    assert record.score[1] == 20 + record.points[1] + 11
    assert state.is_over and state.result.winner == 1 and state.result.reason == "target"


def test_announceable_needs_the_whole_suit():
    hands = hands_from(HANDS)
    assert announceable(hands[1]) == mask_from_codes(["TH", "9H", "AH", "TD", "9D", "AD"])
    assert announceable(hands[2]) == 0


def test_a_run_advances_pays_and_breaks():
    th, ah, kh = (parse_card(c) for c in ("TH", "AH", "KH"))
    first = Politaine.FIRST_CARD
    run1, bonus, poules = advance(first, None, ((1, th),), 1, th, 0, (0, 0), (0,) * 4)
    assert run1 == (1, 2, 1) and bonus == (0, 0)
    run2, bonus, _ = advance(first, run1, (), 1, ah, 0, bonus, poules)
    assert run2 == (1, 2, 2)
    done, bonus, _ = advance(first, run2, (), 1, parse_card("9H"), 0, bonus, poules)
    assert done is None and bonus == (0, POLITAINE_POINTS)
    broken, bonus, _ = advance(first, run2, (), 1, kh, 0, (0, 0), poules)
    assert broken is None and bonus == (0, 0)
