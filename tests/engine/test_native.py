"""The expert's search in C (``engine/bots/expert/native.c``) values every candidate exactly as
the Python search does: same rollouts, same solver, same deal end, in every rule set."""

from __future__ import annotations

import os
import random

import pytest

from engine.bots import BotSeat, make_bot
from engine.bots.expert import ExpertBot
from engine.bots.expert.native import SearchJudge, library, native_for
from engine.bots.expert.outlook import Outlook
from engine.bots.expert.search import Evaluator
from engine.cards import SUIT_MASKS
from engine.referee import AnnouncedClock, referee_match
from engine.rules import rules_for
from engine.state import OVER, PLAY_PHASE, new_match

NATIVE_RULES = [
    rules_for("quatre-sept"),
    rules_for("politaine"),
    rules_for("la-poule"),
    rules_for("la-poule", low_lead="first-trick", redeal=True),
    rules_for("quatre-sept", capot=True, eighteen_four=True, four_eights=True, target=21),
    rules_for("politaine", politaine="before-play", signals=False),
    rules_for("quatre-sept", politaine="off", low_lead="every-trick"),
    rules_for("pollack"),
    rules_for("pollack", politaine="before-play", claim_out="any-turn"),
    rules_for("quatre-sept", claim_out="any-turn", melds=True, signals=True),
]
#: (policy, careful, shrewd, patience, race)
POLICIES = [
    ("shrewd", True, True, 0, 0),
    ("shrewd", True, True, 6, 0),
    ("shrewd", True, True, 0, 3),
    ("careful", True, False, 0, 0),
    ("greedy", False, False, 0, 0),
]

needs_native = pytest.mark.skipif(
    library() is None and not os.environ.get("CI"), reason="no C compiler for the native search"
)


def _positions(rules, seed: int, count: int):
    """Play-phase states of a random match with a choice to make, with random public voids."""
    rng = random.Random(seed)
    state = new_match(rules, seed)
    found = []
    while state.phase != OVER and len(found) < count:
        legal = state.legal()
        if state.phase == PLAY_PHASE and len(legal) > 1 and rng.random() < 0.3:
            voids = [rng.choice((0, SUIT_MASKS[rng.randrange(4)])) for _ in range(4)]
            found.append((state, voids))
        state = state.apply(legal[rng.randrange(len(legal))])
    return found


@needs_native
@pytest.mark.parametrize("rules", NATIVE_RULES, ids=lambda r: f"{r.preset}-{r.changed_options()}")
@pytest.mark.parametrize("exact", [0, 12, 16])
def test_native_values_are_the_pythons(rules, exact):
    assert library() is not None, "CI has a C compiler: the native search must build"
    outlook = Outlook(rules)
    compared = 0
    for seed in range(40):
        if compared >= 200:
            break
        for state, voids in _positions(rules, seed, 12):
            for policy, careful, shrewd, patience, race in POLICIES:
                team = random.Random(seed).randrange(2)
                evaluator = Evaluator(
                    outlook, team, state.deal, exact, voids if careful else None,
                    shrewd=shrewd, patience=patience, race=race,
                )  # fmt: skip
                actions = list(state.legal())
                expected = [evaluator.value(state, a) for a in actions]
                native = native_for(
                    state, rules, outlook.table, team, exact, policy, evaluator.voids,
                    patience=patience, race=race,
                )  # fmt: skip
                assert native is not None
                assert native.values(state, actions) == expected, (policy, state)
                compared += len(actions)
    assert compared >= 200


@needs_native
@pytest.mark.parametrize("claim_out", ["on-lead", "any-turn"])
def test_native_racing_rollouts_are_the_pythons(claim_out):
    """Where the race rule changes a rollout (``race_cards``), C and Python still agree."""
    rules = rules_for("pollack", claim_out=claim_out)
    outlook = Outlook(rules)
    changed = 0
    for seed in range(60):
        for state, voids in _positions(rules, seed, 12):
            actions = list(state.legal())
            team = seed & 1
            values = {}
            for race in (0, 15):
                evaluator = Evaluator(outlook, team, state.deal, 0, voids, shrewd=True, race=race)
                values[race] = [evaluator.value(state, a) for a in actions]
            if values[0] == values[15]:
                continue
            changed += 1
            native = native_for(state, rules, outlook.table, team, 0, "shrewd", voids, race=15)
            assert native is not None
            assert native.values(state, actions) == values[15], state
        if changed >= 4:
            break
    assert changed >= 4


@needs_native
@pytest.mark.parametrize("preset", ["quatre-sept", "la-poule", "pollack"])
def test_the_expert_plays_the_same_match_with_and_without_c(preset):
    rules = rules_for(preset)
    if rules.target > 100:
        rules = rules.with_options(target=60)
    clock = AnnouncedClock(move_ms=600_000, bank_ms=60_000_000)

    def play(native: bool) -> list:
        seats = [
            BotSeat(ExpertBot(worlds=12, move_ms=60_000, native=native)),
            BotSeat(make_bot("tracker")),
            BotSeat(ExpertBot(worlds=12, move_ms=60_000, native=native, shrewd=False)),
            BotSeat(make_bot("tracker")),
        ]
        outcome = referee_match(rules, seats, seed=5, match_id="native", clock=clock)
        return outcome.replay["deals"]

    assert play(True) == play(False)


@needs_native
def test_the_library_is_built_once_into_a_private_folder(tmp_path, monkeypatch):
    folder = tmp_path / "native"
    monkeypatch.setenv("EXPERT_NATIVE_DIR", str(folder))
    library.cache_clear()
    try:
        assert library() is not None
        built = list(folder.iterdir())
        assert [p.name.startswith("expert-native-") and p.suffix == ".so" for p in built] == [True]
        assert folder.stat().st_mode & 0o077 == 0  # nobody else may write (or read) there
        stamp = built[0].stat().st_mtime_ns
        library.cache_clear()
        assert library() is not None and built[0].stat().st_mtime_ns == stamp  # not rebuilt
    finally:
        library.cache_clear()


def test_a_folder_others_may_write_in_is_never_loaded_from(tmp_path, monkeypatch):
    """A library in a folder another user can write could be swapped for any code: refused, and
    the expert searches in Python."""
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o777)
    monkeypatch.setenv("EXPERT_NATIVE_DIR", str(folder))
    library.cache_clear()
    try:
        assert library() is None
        assert list(folder.iterdir()) == []
    finally:
        library.cache_clear()


def test_expert_native_0_keeps_the_search_in_python(monkeypatch):
    monkeypatch.setenv("EXPERT_NATIVE", "0")
    library.cache_clear()
    try:
        assert library() is None
    finally:
        library.cache_clear()


@needs_native
@pytest.mark.parametrize("preset", ["quatre-sept", "pollack"])
def test_the_seats_own_searches_play_legal_replayable_matches(preset, capsys):
    rules = rules_for(preset)
    clock = AnnouncedClock(move_ms=600_000, bank_ms=60_000_000)

    def play() -> list:
        seats = [
            BotSeat(ExpertBot(worlds=4, move_ms=60_000, own=4, own_team=True, partner_search=4))
            if s == 0
            else BotSeat(
                ExpertBot(
                    worlds=4, move_ms=60_000, own=3, own_plies=4, own_leads=True, own_lead_plies=12
                )
            )
            if s == 2
            else BotSeat(make_bot("tracker"))
            for s in range(4)
        ]
        outcome = referee_match(rules, seats, seed=9, match_id="own", clock=clock)
        assert outcome.replay["result"]["fault"] is None
        return outcome.replay["deals"]

    assert play() == play()
    assert "expert:" not in capsys.readouterr().err  # no decision fell back


@needs_native
def test_a_seat_imagines_the_hidden_hands_by_what_every_seat_knows():
    """The seats' own searches (``own``) imagine the others' hands: sizes kept, the cards said to
    be held (melds, politaines) kept where they are, no card in a hand proved not to hold it."""
    rules = rules_for("pollack")
    outlook = Outlook(rules)
    state, _ = _positions(rules, 7, 1)[0]
    hands = [state.hands[s] for s in range(4)]
    me = state.to_move
    left, across, right = ((me + 1) & 3, (me + 2) & 3, (me + 3) & 3)
    shown = [0, 0, 0, 0]
    shown[left] = _lowest(hands[left], 3)  # as if melded
    voids = [0, 0, 0, 0]
    lacking = [s for s in range(4) if not hands[across] & SUIT_MASKS[s]]
    if lacking:
        voids[across] = SUIT_MASKS[lacking[0]]
    barred = [0, 0, 0, 0]
    barred[right] = _lowest(hands[across], 1)  # as if the missing card of a three
    native = native_for(
        state, rules, outlook.table, me & 1, 0, "shrewd", voids, facts=(shown, barred)
    )
    assert native is not None
    moved = 0
    for seed in range(200):
        imagined = native.imagined(state, seed)
        assert imagined[me] == hands[me]
        assert imagined[left] & shown[left] == shown[left]
        assert not imagined[across] & voids[across]
        assert not imagined[right] & barred[right]
        assert [bin(h).count("1") for h in imagined] == [bin(h).count("1") for h in hands]
        assert imagined[left] | imagined[across] | imagined[right] == (
            hands[left] | hands[across] | hands[right]
        )
        moved += imagined != hands
    assert moved > 150  # the cards not known are dealt anew


def _lowest(hand: int, count: int) -> int:
    """The ``count`` lowest-indexed cards of ``hand``."""
    out = 0
    for card in range(32):
        if hand >> card & 1 and bin(out).count("1") < count:
            out |= 1 << card
    return out


@needs_native
def test_a_seats_own_search_chooses_one_of_its_legal_cards():
    """``SearchJudge`` (a searching partner's lead judged by a search of its own) names a card
    the seat to move may play, and the same card for the same seed."""
    rules = rules_for("pollack")
    outlook = Outlook(rules)
    checked = 0
    for seed in range(10):
        for state, voids in _positions(rules, seed, 6):
            legal = {a & 31 for a in state.legal() if a < 256}
            chosen = [SearchJudge(rules, outlook.table, 6, 11)(state, voids) for _ in range(2)]
            assert chosen[0] == chosen[1]
            assert chosen[0] & 31 in legal, state
            checked += 1
    assert checked > 20


@needs_native
def test_the_seats_own_searches_run_only_early_in_the_deal_where_asked(monkeypatch):
    """``own_early=N``: the seats' own searches run in the decisions taken while at most N
    cards of the deal have been played, and in no later one."""
    import engine.bots.expert as expert_module
    from engine.bots.expert.native import _TRICKS

    seen: list[tuple[int, int]] = []

    def recording(world, *settings, **named):
        played = 4 * len(world[4][_TRICKS]) + len(world[3])
        seen.append((played, settings[6][0]))
        return native_for(world, *settings, **named)

    monkeypatch.setattr(expert_module, "native_for", recording)
    seats = [
        BotSeat(ExpertBot(worlds=4, move_ms=60_000, own=2, own_plies=2, own_early=4))
        if s == 0
        else BotSeat(make_bot("tracker"))
        for s in range(4)
    ]
    clock = AnnouncedClock(move_ms=600_000, bank_ms=60_000_000)
    outcome = referee_match(rules_for("pollack"), seats, seed=3, match_id="early", clock=clock)
    assert outcome.replay["result"]["fault"] is None
    assert {own for played, own in seen if played <= 4} == {2}
    assert {own for played, own in seen if played > 4} == {0}


@needs_native
def test_own_worlds_sets_the_roots_budget_only_where_the_own_searches_run(monkeypatch):
    """``own_worlds=N``: the decisions whose rollouts run the seats' own searches search N
    deals at the root; every other decision keeps the expert's budget."""
    import engine.bots.expert as expert_module

    budgets: list[tuple[int, int]] = []
    owns: list[int] = []

    def recording_native(world, *settings, **named):
        owns.append(settings[6][0])
        return native_for(world, *settings, **named)

    def recording_pimc(candidates, draw, evaluator, **named):
        # A decision searched in Python runs no own searches: it counts with the others.
        budgets.append((owns[-1] if evaluator.native else 0, named["max_worlds"]))
        return pimc(candidates, draw, evaluator, **named)

    pimc = expert_module.pimc
    monkeypatch.setattr(expert_module, "native_for", recording_native)
    monkeypatch.setattr(expert_module, "pimc", recording_pimc)
    bot = ExpertBot(worlds=6, move_ms=60_000, own=2, own_plies=1, own_early=4, own_worlds=3)
    seats = [BotSeat(bot) if s == 0 else BotSeat(make_bot("tracker")) for s in range(4)]
    clock = AnnouncedClock(move_ms=600_000, bank_ms=60_000_000)
    outcome = referee_match(rules_for("pollack"), seats, seed=3, match_id="ow", clock=clock)
    assert outcome.replay["result"]["fault"] is None
    assert {worlds for own, worlds in budgets if own} == {3}
    assert {worlds for own, worlds in budgets if not own} == {6}


@needs_native
def test_the_seats_own_searches_are_the_default_only_where_melds_count_and_no_budget_is_asked(
    monkeypatch,
):
    """Where melds count and the search runs in C, the expert's rollouts run the seats' own
    searches at the start of the deal (``NATIVE_MELD_OWN``, round 38); not where melds do not
    count, not for a level with a budget in deals; a setting asked for replaces its own."""
    from engine.bots.expert import NATIVE_MELD_OWN
    from engine.bots.levels import LEVELS

    for name in ("OWN", "OWN_PLIES", "OWN_LEAD_PLIES", "OWN_EARLY", "WORLDS", "NATIVE"):
        monkeypatch.delenv(f"EXPERT_{name}", raising=False)

    def own_after_hello(bot: ExpertBot, preset: str) -> tuple[int, int, int, int]:
        bot.hello({"seat": 0, "rules": rules_for(preset).to_dict(), "match": "m"})
        return (bot.own, bot.own_plies, bot.own_lead_plies, bot.own_early)

    assert NATIVE_MELD_OWN == (4, 1, 8, 8)
    bot = ExpertBot()
    assert own_after_hello(bot, "pollack") == NATIVE_MELD_OWN
    assert own_after_hello(bot, "quatre-sept")[0] == 0  # the same bot in another match
    assert own_after_hello(bot, "pollack") == NATIVE_MELD_OWN
    assert own_after_hello(LEVELS["expert-4"](), "pollack") == NATIVE_MELD_OWN
    for level in ("expert-1", "expert-2", "expert-3"):
        assert own_after_hello(LEVELS[level](), "pollack")[0] == 0, level
    assert own_after_hello(ExpertBot(worlds=64), "pollack")[0] == 0
    assert own_after_hello(ExpertBot(own_early=3), "pollack") == (4, 1, 8, 3)
    assert own_after_hello(ExpertBot(own_early=3), "quatre-sept") == (0, 4, 0, 3)
    assert own_after_hello(ExpertBot(own=0), "pollack")[0] == 0
    assert own_after_hello(ExpertBot(native=False), "pollack")[0] == 0
    monkeypatch.setenv("EXPERT_OWN", "0")
    assert own_after_hello(ExpertBot(), "pollack")[0] == 0
    monkeypatch.setenv("EXPERT_OWN_PLIES", "2")
    monkeypatch.delenv("EXPERT_OWN")
    assert own_after_hello(ExpertBot(), "pollack") == (4, 2, 8, 8)
