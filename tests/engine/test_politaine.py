"""The politaine (poule) bonus: first-card announcements, before-play poules, signals."""

from __future__ import annotations

import pytest

from engine.observe import observe
from engine.rules import rules_for
from tests.engine.helpers import cards_in, deal, finish_deal, run

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


# -- before-play (la poule) ----------------------------------------------------------------------


def before_play(**options):
    return rules_for("quatre-sept", politaine="before-play", **options)


def test_poules_are_asked_of_everyone_in_play_order_from_the_leader():
    state = deal(before_play(), HANDS, dealer=0)  # seat 1 leads
    order = []
    for _ in range(4):
        assert state.decision == "poules"
        order.append(state.to_move)
        legal = state.legal_strings()
        complete = {0: 1, 1: 2, 2: 0, 3: 1}[state.to_move]  # complete T-9-A suits held
        assert legal == [f"poules {n}" for n in range(complete + 1)]
        state = state.step(legal[0])
    assert order == [1, 2, 3, 0]
    assert state.decision == "play" and state.to_move == 1
    assert [(s.seat, s.trick, s.say) for s in state.said] == [
        (1, 0, "poules 0"), (2, 0, "poules 0"), (3, 0, "poules 0"), (0, 0, "poules 0"),
    ]


def test_before_play_offers_no_announcement_with_a_card():
    state = run(deal(before_play(), HANDS), "poules_0 poules_2 poules_0 poules_0 KH")
    assert cards_in(state.legal_strings()) == {"TH", "9H", "AH", "JH", "8H"}
    assert all("politaine" not in a for a in state.legal_strings())


@pytest.mark.parametrize("announced, bonus", [(0, 0), (1, 11), (2, 22)])
def test_before_play_runs_count_up_to_the_number_announced(announced, bonus):
    plain = (RUN_HEARTS + " " + RUN_DIAMONDS).replace("/politaine", "")
    state = deal(before_play(), HANDS)
    state = run(state, f"poules_0 poules_{announced} poules_0 poules_0 {plain}")
    assert finish_deal(state).history[0].bonus == (0, bonus)


def test_before_play_a_run_broken_in_between_does_not_count():
    state = deal(before_play(), HANDS)
    state = run(
        state,
        "poules_0 poules_2 poules_0 poules_0 "
        "KH TH 7H 7S   TD 7D 8S JC   AH 7C JS QH   9H 8C QS TC",
    )
    assert finish_deal(state).history[0].bonus == (0, 0)


# -- signals --------------------------------------------------------------------------------------


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
