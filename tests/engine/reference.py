"""An independent re-check of a replay against docs/rules.md, written from the rules, not the
engine.

``check_rules(replay)`` raises ``AssertionError`` naming the first rule a replay breaks: cards
conserved, follow suit, trick winners, thirds (35 a deal), card points (11 a deal), low lead,
politaine bonuses, melds (timing, holding, points), claims, instant wins, scores and results.
"""

from __future__ import annotations

from typing import Any

from engine.deck import seeded_hands

SUITS = "CDHS"
RANKS = "T9AKQJ87"  # strongest first
VALUE = {"T": 1, "9": 1, "A": 3, "K": 1, "Q": 1, "J": 1, "8": 0, "7": 0}
ALL = {r + s for r in RANKS for s in SUITS}
MAX_DEALS = 100


def strength(code: str) -> int:
    return -RANKS.index(code[0])


def codes_of(mask: int) -> set[str]:
    return {RANKS[c & 7] + SUITS[c >> 3] for c in range(32) if mask >> c & 1}


def lowest_rank(hand: set[str]) -> str:
    return max((c[0] for c in hand), key=RANKS.index)


def tna(suit: str) -> set[str]:
    return {"T" + suit, "9" + suit, "A" + suit}


def check_rules(replay: dict[str, Any]) -> None:
    rules = replay["rules"]
    result = replay["result"]
    deals = replay["deals"]
    assert deals, "a replay holds at least one deal"
    score = [0, 0]
    for i, d in enumerate(deals):
        last = i == len(deals) - 1
        assert d["number"] == i + 1, f"deal numbers run 1, 2, ...: {d['number']}"
        assert d["dealer"] == (3 + i) % 4, f"deal {i + 1}: the dealer moves one seat left"
        score = _check_deal(replay, rules, d, score, last)
        if not last:
            assert d["end"] is None
            reached = max(score) >= rules["target"]
            assert not reached or score[0] == score[1], (
                f"deal {d['number']}: target reached with unequal totals {score} but play went on"
            )
            assert d["number"] < MAX_DEALS, "the safety limit ends a match after 100 deals"
    _check_result(rules, result, deals[-1], score)


def _check_deal(replay, rules, d, score, last) -> list[int]:
    number, dealer = d["number"], d["dealer"]
    leader0 = (dealer + 1) % 4
    for k, redeal in enumerate(d["redeals"]):
        assert rules["redeal"], "redeals only with option redeal"
        dealt = [codes_of(m) for m in seeded_hands(replay["seed"], number, k, dealer)]
        assert [set(h) for h in redeal["hands"]] == dealt, "redealt hands come from the seed"
        by = redeal["by"]
        assert not any(c[0] in "T9A" for c in dealt[by]), "a redeal needs a hand without T, 9, A"
        # Everyone before him in play order from the leader was eligible or not, and kept.
    hands = [set(h) for h in d["hands"]]
    assert len(d["hands"]) == 4 and all(len(h) == 8 for h in d["hands"]), "8 cards each"
    assert set().union(*hands) == ALL, "the four hands partition the deck"
    seeded = seeded_hands(replay["seed"], number, len(d["redeals"]), dealer)
    expected = [codes_of(m) for m in seeded]
    assert hands == expected, f"deal {number}: hands come from (seed, deal, redeal)"

    instant = None
    instants = (("four_sevens", "7", "four-sevens"), ("four_eights", "8", "four-eights"))
    for flag, rank, name in instants:
        if rules[flag] and instant is None:
            for seat in range(4):
                if all(rank + s in hands[seat] for s in SUITS):
                    instant = (seat % 2, name)
                    break
    if instant is not None:
        assert d["end"] == instant[1] and not d["tricks"], f"deal {number}: {instant[1]} ends it"
        assert d["score"] == score
        return list(score)

    said = d["said"]
    for s in said:
        assert set(s) <= {"seat", "trick", "say", "card"}
        if s["say"] in ("tap", "slide"):
            assert rules["signals"], "signals only with option signals"
        if s["say"] == "politaine":
            assert rules["politaine"] == "first-card"
        if s["say"].startswith("poules"):
            assert rules["politaine"] == "before-play" and s["trick"] == 0
        if s["say"].startswith("meld"):
            assert rules["melds"]
        if s["say"] == "claim":
            assert rules["claim_out"] != "off"

    # Play the tricks again by the rules.
    held = [set(h) for h in hands]
    taken = [0, 0]
    leader = leader0
    tricks = d["tricks"]
    start_hands: list[list[set[str]]] = []
    prev_card_thirds = None
    for t, trick in enumerate(tricks):
        start_hands.append([set(h) for h in held])
        assert trick["leader"] == leader, f"deal {number} trick {t + 1}: the last winner leads"
        cards = trick["cards"]
        assert len(cards) == 4
        if prev_card_thirds is not None and prev_card_thirds < 3 and (
            rules["low_lead"] == "every-trick" or (rules["low_lead"] == "first-trick" and t == 1)
        ):
            assert cards[0][0] == lowest_rank(held[leader]), (
                f"deal {number} trick {t + 1}: low lead: {cards[0]} is not of the lowest rank"
            )
        led = cards[0][1]
        for pos, card in enumerate(cards):
            seat = (leader + pos) % 4
            assert card in held[seat], f"deal {number}: seat {seat} plays {card} it does not hold"
            if card[1] != led:
                assert not any(c[1] == led for c in held[seat]), (
                    f"deal {number} trick {t + 1}: seat {seat} must follow {led}"
                )
            held[seat].discard(card)
        best = max((c for c in cards if c[1] == led), key=strength)
        winner = (leader + cards.index(best)) % 4
        assert trick["winner"] == winner, f"deal {number} trick {t + 1}: winner"
        card_thirds = sum(VALUE[c[0]] for c in cards)
        worth = card_thirds + (3 if t == 7 else 0)
        assert trick["thirds"] == worth, f"deal {number} trick {t + 1}: thirds"
        taken[winner % 2] += worth
        leader = winner
        prev_card_thirds = card_thirds
    assert len(tricks) <= 8
    cut = d.get("trick", {"leader": leader, "cards": []})
    assert cut["leader"] == leader
    for pos, card in enumerate(cut["cards"]):
        seat = (leader + pos) % 4
        assert card in held[seat]
        held[seat].discard(card)

    # Politaine bonus.
    bonus = [0, 0]
    if rules["politaine"] == "first-card":
        for s in said:
            if s["say"] != "politaine":
                continue
            t, seat, card = s["trick"], s["seat"], s["card"]
            trick = tricks[t - 1] if t <= len(tricks) else cut
            assert trick["cards"][(seat - trick["leader"]) % 4] == card
            assert tna(card[1]) <= start_hands[t - 1][seat] if t <= len(tricks) else True, (
                "a politaine is announced only while holding T, 9 and A"
            )
            assert card[0] in "T9A"
            run = tricks[t - 1 : t + 2]
            if len(run) == 3 and all(
                tr["winner"] == seat
                and tr["cards"][(seat - tr["leader"]) % 4] in tna(card[1])
                for tr in run
            ):
                bonus[seat % 2] += 11
    elif rules["politaine"] == "before-play":
        announced = [0, 0, 0, 0]
        for s in said:
            if s["say"].startswith("poules "):
                n = int(s["say"].split()[1])
                complete = sum(1 for suit in SUITS if tna(suit) <= hands[s["seat"]])
                assert 0 <= n <= complete, "poules 0 up to the complete T-9-A suits held"
                announced[s["seat"]] = n
        order = [s["seat"] for s in said if s["say"].startswith("poules ")]
        assert order == [(leader0 + k) % 4 for k in range(len(order))], "poules in play order"
        assert len(order) == 4 or not tricks, "everyone announces poules before play"
        runs = [0, 0, 0, 0]
        run = None  # (seat, suit, count)
        for t, tr in enumerate(tricks):
            w = tr["winner"]
            card = tr["cards"][(w - tr["leader"]) % 4]
            is_tna = card[0] in "T9A"
            if run and run[0] == w and run[1] == card[1] and is_tna:
                run = (w, card[1], run[2] + 1)
                if run[2] == 3:
                    runs[w] += 1
                    run = None
            elif is_tna and tna(card[1]) <= start_hands[t][w]:
                run = (w, card[1], 1)
            else:
                run = None
        for seat in range(4):
            bonus[seat % 2] += 11 * min(runs[seat], announced[seat])

    # Melds.
    melds = [0, 0]
    done: set[str] = set()
    for s in said:
        if not s["say"].startswith("meld "):
            continue
        words = s["say"].split()[1:]
        seat, t = s["seat"], s["trick"]
        assert t >= 1
        hand = start_hands[t - 1][seat] if t <= len(tricks) else _hand_before_cut(held, cut, seat)
        if words[0] == "pollack":
            need, points, key = tna(words[1]), 3, "pollack " + words[1]
        elif words[0] == "four":
            need, points, key = {words[1] + x for x in SUITS}, 4, "rank " + words[1]
        else:
            need = {words[1] + x for x in SUITS if x != words[2]}
            points, key = 3, "rank " + words[1]
            assert words[1] + words[2] not in hand, "four of a rank are melded as four"
        assert need <= hand, f"deal {number}: {s['say']} needs its cards in hand"
        assert key not in done, "each meld counts once per deal"
        done.add(key)
        won_before = any(tr["winner"] % 2 == seat % 2 for tr in tricks[: t - 1])
        first_lead = t == 1 and seat == leader0
        assert first_lead or won_before, (
            f"deal {number}: seat {seat} melds before his side has won a trick"
        )
        melds[seat % 2] += points

    assert d["thirds"] == taken, f"deal {number}: thirds per team"
    assert d["points"] == [taken[0] // 3, taken[1] // 3], "card points are floor(thirds / 3)"
    assert d["bonus"] == bonus, f"deal {number}: politaine bonus {d['bonus']} != {bonus}"
    assert d["melds"] == melds, f"deal {number}: melds {d['melds']} != {melds}"

    if d["end"] == "claim":
        claims = [s for s in said if s["say"] == "claim"]
        assert len(claims) == 1
        if rules["claim_out"] == "on-lead":
            assert not cut["cards"], "a claim is made on lead"
        return [score[x] + taken[x] // 3 + melds[x] for x in (0, 1)]
    if d["end"] == "forfeit":
        assert d["score"] == score
        return list(score)
    assert len(tricks) == 8, f"deal {number}: a deal that was played out has 8 tricks"
    assert sum(taken) == 35, "a deal holds 35 thirds"
    assert sum(d["points"]) == 11, "the two teams get 11 card points between them"
    new = [score[x] + taken[x] // 3 + bonus[x] + melds[x] for x in (0, 1)]
    assert d["score"] == new, f"deal {number}: score {d['score']} != {new}"
    won = [sum(1 for tr in tricks if tr["winner"] % 2 == x) for x in (0, 1)]
    if rules["capot"] and 8 in won:
        assert d["end"] == "capot"
    elif rules["eighteen_four"] and sorted(new) == [4, 18]:
        assert d["end"] == "eighteen-four"
    else:
        assert d["end"] is None
    return new


def _hand_before_cut(held, cut, seat):
    hand = set(held[seat])
    for pos, card in enumerate(cut["cards"]):
        if (cut["leader"] + pos) % 4 == seat:
            hand.add(card)
    return hand


def _check_result(rules, result, d, score) -> None:
    reason, winner = result["reason"], result["winner"]
    if reason == "forfeit":
        fault = result["fault"]
        assert fault and d["end"] == "forfeit"
        assert winner == 1 - fault["seat"] % 2, "a faulting seat's team loses"
        assert result["score"] == d["score"]
        return
    assert result["fault"] is None
    assert result["score"] == d["score"] == score, "the result keeps the final totals"
    if reason in ("four-sevens", "four-eights"):
        assert d["end"] == reason
        rank = "7" if reason == "four-sevens" else "8"
        holder = [s for s in range(4) if all(rank + x in d["hands"][s] for x in SUITS)]
        assert winner == holder[0] % 2
    elif reason == "capot":
        won = [sum(1 for tr in d["tricks"] if tr["winner"] % 2 == x) for x in (0, 1)]
        assert won[winner] == 8
    elif reason == "eighteen-four":
        assert score[winner] == 18 and score[1 - winner] == 4
    elif reason == "claim":
        claim = next(s for s in d["said"] if s["say"] == "claim")
        team = claim["seat"] % 2
        assert winner == (team if score[team] >= rules["target"] else 1 - team)
    elif reason == "target":
        assert max(score) >= rules["target"] and score[0] != score[1]
        assert score[winner] > score[1 - winner]
    elif reason == "limit":
        assert d["number"] == MAX_DEALS
        assert winner == (None if score[0] == score[1] else int(score[1] > score[0]))
    else:
        raise AssertionError(f"unknown reason {reason!r}")
