"""Ladder pairing maths: information, placement spread, the runaway guard, waits, variety and
the owners' fair share (``arena.rating.pairing``)."""

from __future__ import annotations

from collections import Counter

import numpy as np

from arena.rating import fit_ratings
from arena.rating.pairing import (
    NEWCOMER_SD,
    Belief,
    Entrant,
    History,
    belief_from_fit,
    choose_pairings,
    play,
)
from arena.rating.simulate import duplicate_pairs


def belief(means, sds) -> Belief:
    return Belief(tuple(range(len(means))), np.array(means, float), np.diag(np.square(sds)))


def placed(k, owner=None) -> Entrant:
    return Entrant(k, k if owner is None else owner, provisional=False)


def test_a_close_pair_of_wide_intervals_teaches_most():
    # 0 and 1: close and uncertain; 2: far away; 3: certain.
    b = belief([1500, 1520, 1900, 1510], [150, 150, 150, 10])
    chosen = choose_pairings(b, [placed(k) for k in range(4)], 1)
    assert {chosen[0].a, chosen[0].b} == {0, 1}
    assert chosen[0].reason == "information"


def test_a_duplicate_pair_shrinks_both_variances():
    cov = np.diag([100.0**2, 80.0**2, 50.0**2])
    after = play(cov, 0, 1, 2 * 0.25 / (400 / np.log(10)) ** 2)
    assert after[0, 0] < cov[0, 0] and after[1, 1] < cov[1, 1]
    assert after[2, 2] == cov[2, 2]
    assert np.allclose(after, after.T)


def test_a_newcomer_is_placed_against_a_spread_of_rated_opponents():
    rng = np.random.default_rng(1)
    truth = np.linspace(1200, 1800, 12)
    a, b = np.triu_indices(12, 1)
    results = duplicate_pairs(truth, np.repeat(a, 3), np.repeat(b, 3), rng)
    fit = fit_ratings(results)
    ids = [*range(12), 99]
    pool = [placed(k) for k in range(12)] + [Entrant(99, "new", provisional=True)]
    history = History()
    met = Counter()
    for _ in range(6):
        chosen = choose_pairings(belief_from_fit(fit, ids), pool, 1, history=history)
        (p,) = chosen
        assert 99 in (p.a, p.b) and p.reason == "placement"
        other = p.b if p.a == 99 else p.a
        met[other] += 1
        history.add(p.a, p.b, "new" if p.a == 99 else p.a, "new" if p.b == 99 else p.b)
    assert len(met) == 6  # six distinct opponents in six placement pairs


def test_newcomers_get_the_wide_prior_and_the_fit_keeps_the_rest():
    rng = np.random.default_rng(2)
    results = duplicate_pairs(np.array([1400.0, 1600.0]), np.zeros(20, int), np.ones(20, int), rng)
    fit = fit_ratings(results)
    b = belief_from_fit(fit, [0, 1, 7])
    assert b.cov[2, 2] == NEWCOMER_SD**2 and b.cov[0, 2] == 0
    assert b.mean[0] < b.mean[1]
    assert b.cov[0, 0] < NEWCOMER_SD**2


def test_unconnected_groups_are_joined_before_anything_else():
    rng = np.random.default_rng(3)
    truth = np.array([1500.0, 1500.0, 1500.0, 1500.0])
    results = duplicate_pairs(truth, np.array([0] * 20 + [2] * 20), np.array([1] * 20 + [3] * 20),
                              rng)
    fit = fit_ratings(results)
    assert len(set(fit.group.tolist())) == 2
    chosen = choose_pairings(belief_from_fit(fit, [0, 1, 2, 3]), [placed(k) for k in range(4)], 1)
    assert fit.group[fit.index(chosen[0].a)] != fit.group[fit.index(chosen[0].b)]


def test_a_placed_all_losing_version_never_attracts_matches():
    # 3 lost everything: its interval is the widest, yet it is not worth a match.
    b = belief([1500, 1510, 1490, 900], [60, 60, 60, 400])
    pool = [placed(0), placed(1), placed(2), Entrant(3, 3, provisional=False, runaway=True)]
    for p in choose_pairings(b, pool, 6):
        assert 3 not in (p.a, p.b)
    # Without the guard it would have been chosen first.
    unguarded = [placed(k) for k in range(4)]
    assert 3 in {choose_pairings(b, unguarded, 1)[0].a, choose_pairings(b, unguarded, 1)[0].b}


def test_two_runaway_versions_are_never_paired_together_even_when_nothing_else_is_left():
    """The guard held only while another pair had some gain: with two runaway entrants alone (or
    one of them waiting past the longest wait) it paired them on every tick."""
    b = belief([1800, 900], [400, 400])
    pool = [Entrant(0, 0, provisional=False, runaway=True, waited=10.0),
            Entrant(1, 1, provisional=False, runaway=True, waited=5000.0)]
    assert choose_pairings(b, pool, 3) == []
    assert choose_pairings(b, pool, 3, max_wait=3600) == []
    b = belief([1800, 900, 1500], [400, 400, 60])
    with_other = [*pool, placed(2)]
    for p in choose_pairings(b, with_other, 4, max_wait=3600):
        assert {p.a, p.b} != {0, 1}

def test_a_version_past_the_longest_wait_is_paired_first():
    b = belief([1500, 1510, 1490, 1500], [200, 200, 200, 5])
    pool = [Entrant(k, k, False, False, 10.0) for k in range(3)] + [
        Entrant(3, 3, False, False, 5000.0)
    ]
    chosen = choose_pairings(b, pool, 1, max_wait=3600)
    assert 3 in (chosen[0].a, chosen[0].b) and chosen[0].reason == "waited"
    assert 3 not in {x for p in choose_pairings(b, pool, 1, max_wait=None) for x in (p.a, p.b)}


def test_variety_floor_no_version_meets_only_one_opponent():
    b = belief([1500, 1505, 1700, 1300, 1500, 1495], [150, 150, 40, 40, 40, 40])
    history = History()
    opponents: dict[int, set] = {k: set() for k in range(6)}
    for _ in range(30):
        (p,) = choose_pairings(b, [placed(k) for k in range(6)], 1, history=history)
        history.add(p.a, p.b, p.a, p.b)
        opponents[p.a].add(p.b)
        opponents[p.b].add(p.a)
    assert all(len(o) >= 2 for o in opponents.values() if o)
    assert history.meetings.most_common(1)[0][1] <= 12  # 30 pairs, not all one pairing


def test_one_owner_with_many_versions_does_not_crowd_out_the_others():
    # Owner "big" has 8 provisional versions; 4 other owners one placed version each.
    n = 12
    b = belief([1500] * n, [300] * 8 + [120] * 4)
    pool = [Entrant(k, "big", provisional=True) for k in range(8)] + [
        Entrant(k, f"o{k}", provisional=False) for k in range(8, n)
    ]
    history = History()
    for _ in range(40):
        (p,) = choose_pairings(b, pool, 1, history=history)
        history.add(p.a, p.b, pool[p.a].owner, pool[p.b].owner)
    slots = history.owner_slots
    fair = sum(slots.values()) / len(slots)
    assert slots["big"] <= 2.0 * fair, slots
    assert all(slots[f"o{k}"] > 0 for k in range(8, n))


def test_in_flight_pairings_count_as_played():
    b = belief([1500, 1500, 1500, 1500], [150, 150, 140, 140])
    first = choose_pairings(b, [placed(k) for k in range(4)], 1)[0]
    again = choose_pairings(b, [placed(k) for k in range(4)], 1,
                            in_flight=[(first.a, first.b)] * 3)[0]
    assert {again.a, again.b} != {first.a, first.b}


def test_a_batch_spreads_over_the_board():
    b = belief([1500 + 10 * k for k in range(10)], [150] * 10)
    chosen = choose_pairings(b, [placed(k) for k in range(10)], 5)
    seen = [x for p in chosen for x in (p.a, p.b)]
    assert len(set(seen)) >= 8
    assert all(p.a != p.b for p in chosen)


def test_information_beats_random_pairing_on_a_small_board():
    """The simulation's claim in miniature: 12 versions, a fixed budget, the widest interval."""
    truth = np.random.default_rng(5).normal(1500, 200, 12)
    widest = {}
    for method in ("information", "random"):
        rng = np.random.default_rng(6)
        results, fit, cluster = [], None, 0
        for _ in range(40):
            if method == "random":
                a = rng.integers(0, 12, 4)
                b = (a + rng.integers(1, 12, 4)) % 12
            else:
                pool = []
                for k in range(12):
                    known = fit is not None and k in fit.ids
                    games = fit.games[fit.index(k)] if known else 0
                    pool.append(Entrant(k, k, provisional=games < 30))
                chosen = choose_pairings(belief_from_fit(fit, list(range(12))), pool, 4)
                a, b = np.array([p.a for p in chosen]), np.array([p.b for p in chosen])
            new = duplicate_pairs(truth, a, b, rng)
            results += [r._replace(cluster=cluster + r.cluster) for r in new]
            cluster += len(a)
            fit = fit_ratings(results)
        widest[method] = fit.ci95.max() if len(fit.ids) == 12 else np.inf
    assert widest["information"] < widest["random"]
