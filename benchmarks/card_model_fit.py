"""Fit ``engine/bots/expert/model.py``'s weights to the expert's own card play, and score them.

    nice -n 19 python benchmarks/card_model_fit.py --rules pollack --matches 300 --procs 2

Four experts (the bot and options of ``--bot``, the full expert by default) play seeded matches;
at every card a seat chooses among two or more, the position is recorded with
the hands as dealt (``seeded_hands``), exactly as a sampled deal presents them to the reading.
Then a conditional logit (softmax over the legal cards, one set of weights for leads and one for
the cards that follow, a little L2) is fitted on every other decision and scored on the rest, in
nats per card, beside two references in the same run: the uniform choice, and the shipped
reading's model ("the policy's card with chance p, any other alike", p fitted), and the two
sets of weights ``model.py`` ships (fitted where melds count, and where they do not). Prints the
weights as Python to paste into ``model.py``. With ``--positions FILE`` the positions played are
kept in the file, or read back from it where it exists: another feature set (``card_features``
changed) is then scored in seconds, without playing again.
"""

from __future__ import annotations

import argparse
import multiprocessing
import pickle
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bot_strength import parse_bot

from engine.actions import PLAY_LIMIT, parse_action
from engine.bots import BotSeat
from engine.bots.expert import ExpertBot
from engine.bots.expert.model import (
    FEATURES,
    MELD_WEIGHTS,
    PLAIN_WEIGHTS,
    card_features,
    legal_cards,
)
from engine.bots.expert.view import read_view
from engine.bots.expert.world import replay_world
from engine.deck import seeded_hands
from engine.referee import AnnouncedClock, referee_match
from engine.rules import rules_for
from engine.state import State

#: One decision: (lead?, the features of each legal card, the index of the card played).
Row = tuple[bool, list[list[float]], int]
#: One decision as played: (the sampled-deal state, the public voids, the legal cards, the card).
Position = tuple[State, list[int], list[int], int]


class Recorder(ExpertBot):
    """The expert, recording each card it chooses among two or more as a ``Position``."""

    positions: list[Position]
    match_seed = 0

    def act(self, message: dict[str, Any]) -> str:
        action = super().act(message)
        if message["decision"] == "play":
            try:
                self._record(message, action)
            except Exception as error:  # a position it cannot replay is left out
                print(f"skipped: {type(error).__name__}: {error}", file=sys.stderr)
        return action

    def _record(self, message: dict[str, Any], action: str) -> None:
        rules = self.rules
        assert rules is not None
        code = parse_action(action)
        if code >= PLAY_LIMIT:
            return
        view = read_view(message["state"], rules.low_lead)
        dealt = seeded_hands(self.match_seed, view.deal, view.redeals, view.dealer)
        hands = tuple(dealt[s] & ~view.by_seat[s] for s in range(4))
        state, _ = replay_world(rules, view, hands, "play")
        cards = legal_cards(state)
        if len(cards) < 2:
            return
        self.positions.append((state, list(view.voids), cards, code & 31))


def _rows(positions: list[Position]) -> list[Row]:
    """The features of each position's legal cards (``model.card_features`` as it is now)."""
    return [
        (not state.trick, card_features(state, voids, cards), cards.index(card))
        for state, voids, cards, card in positions
    ]


def _play(job: tuple[str, str, int, int]) -> list[Position]:
    rules_name, bot, first, count = job
    rules = rules_for(rules_name)
    _, options = parse_bot(bot)
    clock = AnnouncedClock(move_ms=600_000, bank_ms=60_000_000)
    positions: list[Position] = []
    for seed in range(first, first + count):
        seats = []
        for _ in range(4):
            player = Recorder(**options)
            player.positions, player.match_seed = positions, seed
            seats.append(BotSeat(player))
        referee_match(rules, seats, seed=seed, match_id=f"model-{seed}", clock=clock)
    return positions


def _logit(rows: list[Row], weights: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Negative log likelihood, its gradient and Hessian over ``rows``."""
    loss, grad = 0.0, np.zeros_like(weights)
    hess = np.zeros((len(weights), len(weights)))
    for _, features, chosen in rows:
        x = np.asarray(features)
        s = x @ weights
        s -= s.max()
        p = np.exp(s)
        p /= p.sum()
        loss -= float(np.log(p[chosen]))
        mean = p @ x
        grad += mean - x[chosen]
        centred = x - mean
        hess += (centred * p[:, None]).T @ centred
    return loss, grad, hess


def fit(rows: list[Row], l2: float = 1.0, steps: int = 25) -> np.ndarray:
    """The conditional logit's weights (Newton's method with an L2 penalty)."""
    weights = np.zeros(len(FEATURES))
    for _ in range(steps):
        _, grad, hess = _logit(rows, weights)
        grad += l2 * weights
        hess += l2 * np.eye(len(weights))
        step = np.linalg.solve(hess, grad)
        weights -= step
        if np.abs(step).max() < 1e-6:
            break
    return weights


def _policy_loss(train: list[Row], test: list[Row]) -> float:
    """Nats per card of "the policy's card with chance p, any other alike", p fitted."""
    agree = [features[chosen][0] for _, features, chosen in train]
    p = min(0.99, max(0.01, sum(agree) / len(agree)))
    loss = 0.0
    for _, features, chosen in test:
        n = len(features)
        has = any(row[0] for row in features)
        if not has:
            loss -= np.log(1 / n)
        elif features[chosen][0]:
            loss -= np.log(p)
        else:
            loss -= np.log((1 - p) / (n - 1))
    return loss / len(test)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="pollack")
    parser.add_argument("--matches", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--procs", type=int, default=1)
    parser.add_argument("--bot", default="expert", help="the players, bot_strength's form")
    parser.add_argument(
        "--positions", type=Path, help="keep the positions played in this file, or read them"
    )
    args = parser.parse_args(argv)
    if args.positions and args.positions.exists():
        positions = pickle.loads(args.positions.read_bytes())
    else:
        share = -(-args.matches // args.procs)
        jobs = [
            (args.rules, args.bot, args.seed + i * share, min(share, args.matches - i * share))
            for i in range(args.procs)
            if args.matches > i * share
        ]
        with multiprocessing.Pool(len(jobs)) as pool:
            parts = pool.map(_play, jobs)
        positions = [position for part in parts for position in part]
        if args.positions:
            args.positions.write_bytes(pickle.dumps(positions))
    rows = _rows(positions)
    print(f"{args.rules}: {len(rows)} cards chosen among two or more")
    lines = []
    for lead in (True, False):
        mine = [r for r in rows if r[0] == lead]
        train, test = mine[0::2], mine[1::2]
        weights = fit(train)
        loss, _, _ = _logit(test, weights)
        uniform = float(np.mean([np.log(len(f)) for _, f, _ in test]))
        kind = "leads" if lead else "follows"
        shipped = [
            _logit(test, np.asarray(pair[0 if lead else 1]))[0] / len(test)
            for pair in (MELD_WEIGHTS, PLAIN_WEIGHTS)
        ]
        print(
            f"{kind}: {len(test)} held out; nats a card: model {loss / len(test):.4f}, "
            f"shipped weights where melds count {shipped[0]:.4f} and where they do not "
            f"{shipped[1]:.4f}, policy-or-not {_policy_loss(train, test):.4f}, "
            f"uniform {uniform:.4f}"
        )
        full = fit(mine)
        name = ("" if rules_for(args.rules).melds else "PLAIN_") + (
            "LEAD_WEIGHTS" if lead else "FOLLOW_WEIGHTS"
        )
        lines.append(f"{name} = ({', '.join(f'{w:.3f}' for w in full)})")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
