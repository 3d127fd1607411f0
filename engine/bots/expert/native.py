"""The expert's rollouts and exact solver in C (``native.c``), where a C compiler is at hand.

``NativeValues.values`` packs a sampled world into the ints ``native.c`` reads and returns
the value of each candidate action, bit for bit what ``Evaluator.value`` computes in Python
(``tests/engine/test_native.py`` holds them equal on random positions), several times faster.
Scope: the play phase of every rule set, rollouts without random moves (``eps``) or ``smooth``
values (the bot keeps those in Python); ``native_for`` returns ``None`` where no C compiler is
at hand or ``EXPERT_NATIVE=0`` is set, and search stays in Python.

The library is built once per host and source with the C compiler (``$CC``, ``cc`` or ``gcc``)
into a private cache folder (``EXPERT_NATIVE_DIR``, else ``$XDG_CACHE_HOME``/``~/.cache``, else
the temporary folder), complete or not at all: a build writes a file of its own and renames it.
The platform image builds it at image build time (``platform/Dockerfile``), named by the same
digest of the source.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from engine.deck import seeded_hands
from engine.optional import instant
from engine.position import MAX_DEALS, TRICKS_PER_DEAL, Table
from engine.rules import ClaimOut, LowLead, Politaine, RuleSet
from engine.state import PLAY_PHASE, State

SOURCE = Path(__file__).with_name("native.c")
#: How many ints ``native.c`` reads (``qs_fields``).
FIELDS = 68
_MODES = {Politaine.OFF: 0, Politaine.FIRST_CARD: 1, Politaine.BEFORE_PLAY: 2}
_LOW_RULES = {LowLead.OFF: 0, LowLead.EVERY_TRICK: 1, LowLead.FIRST_TRICK: 2}
_POLICIES = {"greedy": 0, "careful": 1, "shrewd": 2}
_CLAIM_RULES = {ClaimOut.OFF: 0, ClaimOut.ON_LEAD: 1, ClaimOut.ANY_TURN: 2}
_MASK = (1 << 32) - 1
(_LEADER, _TRICKS, _TAKEN, _WON, _LOW, _RUN, _ANNOUNCED, _POULES, _BONUS, _MELDS, _SCORE,
 _MELDED) = (
    Table._fields.index(name)
    for name in (
        "leader", "tricks", "taken", "won", "low", "run", "announced", "poules", "bonus",
        "melds", "score", "melded",
    )
)  # fmt: skip


def _cache_dir() -> Path:
    chosen = os.environ.get("EXPERT_NATIVE_DIR")
    if chosen:
        return Path(chosen)
    home = os.environ.get("XDG_CACHE_HOME") or (
        str(Path(os.environ["HOME"]) / ".cache") if os.environ.get("HOME") else ""
    )
    if home:
        return Path(home) / "quatresept"
    return Path(tempfile.gettempdir()) / f"quatresept-{os.getuid()}"


def _private(folder: Path) -> bool:
    """``folder`` exists (made if need be), is ours or root's (an image's prebuilt library),
    and no one else may write in it."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = folder.stat()
    except OSError:
        return False
    owner_ok = info.st_uid in (os.getuid(), 0)
    return owner_ok and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


@functools.cache
def library() -> ctypes.CDLL | None:
    """The built library, building it on first use; ``None`` when it cannot be had."""
    if os.environ.get("EXPERT_NATIVE", "1") == "0":
        return None
    source = SOURCE.read_bytes()
    digest = hashlib.sha256(source).hexdigest()[:16]
    folder = _cache_dir()
    if not _private(folder):
        return None
    target = folder / f"expert-native-{digest}.so"
    if not target.is_file():
        if not os.access(folder, os.W_OK):
            return None  # a read-only folder without this source's library (an older image)
        compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
        if not compiler:
            return None
        partial = folder / f".{target.name}.partial-{os.getpid()}"
        try:
            result = subprocess.run(
                [compiler, "-O2", "-shared", "-fPIC", "-o", str(partial), str(SOURCE)],
                capture_output=True, text=True, timeout=120,
            )  # fmt: skip
        except (OSError, subprocess.SubprocessError) as error:
            print(f"expert: no native search ({error})", file=sys.stderr)
            return None
        if result.returncode != 0:
            partial.unlink(missing_ok=True)
            print(f"expert: no native search: {result.stderr.strip()[-300:]}", file=sys.stderr)
            return None
        partial.rename(target)
    try:
        lib = ctypes.CDLL(str(target))
    except OSError:
        return None
    if lib.qs_fields() != FIELDS:
        return None
    lib.qs_values.restype = ctypes.c_int
    lib.qs_values.argtypes = (
        ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
        ctypes.c_void_p,
    )  # fmt: skip
    lib.qs_choice.restype = ctypes.c_int
    lib.qs_choice.argtypes = (ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int)
    lib.qs_imagine.restype = None
    lib.qs_imagine.argtypes = (ctypes.c_char_p, ctypes.c_uint32, ctypes.c_void_p)
    return lib


class NativeValues:
    """``Evaluator.value`` for the candidates of one decision, in C.

    Fixed over the decision: the rules, the searching ``team``, the ``deal``, the solver's size,
    the policy (``greedy``, ``careful`` or ``shrewd``), the public voids and the outlook table.
    """

    def __init__(
        self,
        lib: ctypes.CDLL,
        rules: RuleSet,
        table: np.ndarray,
        team: int,
        exact_cards: int,
        policy: str,
        voids: list[int] | None,
        own: tuple[int, int, int] = (0, 0, 0),
        seed: int = 0,
        patience: int = 0,
        race: int = 0,
        facts: tuple[list[int], list[int]] | None = None,
    ) -> None:
        self.lib = lib
        self.rules = rules
        self.table = np.ascontiguousarray(table, dtype=np.float64)
        self.limit = self.table.shape[0] - 1
        self.team = team
        self.exact_cards = exact_cards
        self.policy = _POLICIES[policy]
        self.voids = list(voids) if voids is not None else [0, 0, 0, 0]
        #: The seats' own searches in rollouts: (deals imagined a move, moves searched, bits:
        #: 1 the searching team's seats only, 2 leads only, 4 times the moves within which leads
        #: are searched as well).
        self.own = own
        #: The shrewd policy's leader with at least this many cards keeps its masters.
        self.patience = patience
        #: The shrewd policy's race bits (``policy.RACE_CLAIMS``, ``RACE_MELDS``, ``RACE_LEAD``).
        self.race = race
        #: What every seat may know of each hand (``View.public_facts``): the cards said to be
        #: held, the cards proved absent beyond the voids; read only by the seats' own searches.
        shown, barred = facts if facts is not None else ([0] * 4, [0] * 4)
        self._facts = [*(m & _MASK for m in shown), *(m & _MASK for m in barred)]
        self._seed = seed & _MASK
        self._tail: list[int] | None = None
        self._out = (ctypes.c_double * 64)()
        #: The candidates of the last call and their packed ints (every world has the same).
        self._actions: list[int] | None = None
        self._moves = b""
        self._pointer = self.table.ctypes.data

    def _rules_tail(self, world: State) -> list[int]:
        """The context ints after the voids (the same for every world of the decision)."""
        if self._tail is None:
            table = world[4]
            rules = self.rules
            instant_team = -1
            if rules.four_sevens or rules.four_eights:
                hands = seeded_hands(table.seed, table.deal + 1, 0, (table.dealer + 1) & 3)
                won = instant.instant_win(rules, hands)
                instant_team = -1 if won is None else won[0]
            self._tail = [
                _MODES[rules.politaine], _LOW_RULES[rules.low_lead], int(rules.capot),
                int(rules.eighteen_four), rules.target, MAX_DEALS, table.deal, instant_team,
                self.team, self.exact_cards, self.policy, *self.own, int(rules.melds),
                _CLAIM_RULES[rules.claim_out],
            ]  # fmt: skip
        return self._tail

    def values(self, world: State, actions: list[int]) -> list[float]:
        """The value of each of ``actions`` (plays of the seat to move) in ``world``."""
        data = self._packed(world)
        if actions is not self._actions:
            self._actions, self._moves = actions, np.array(actions, dtype=np.int32).tobytes()
        out = self._out
        self.lib.qs_values(data, self._moves, len(actions), self._pointer, self.limit, out)
        return out[: len(actions)]

    def choice(self, world: State, voids: list[int], samples: int) -> int:
        """The action the seat to move in ``world`` would take by a small search of its own
        over ``samples`` deals it imagines, the public ``voids`` as given."""
        self.voids = voids
        data = self._packed(world)
        return self.lib.qs_choice(data, self._pointer, self.limit, samples)

    def imagined(self, world: State, seed: int) -> list[int]:
        """The four hands as the seat to move imagines ``world`` in its own search (its hand
        kept, the others' cards dealt anew by what every seat knows): a probe for tests."""
        hands = (ctypes.c_uint32 * 4)()
        self.lib.qs_imagine(self._packed(world, advance=False), seed & _MASK, hands)
        return list(hands)

    def _packed(self, world: State, advance: bool = True) -> bytes:
        """``world`` and the decision's context as the ints ``native.c`` unpacks; ``advance``
        moves the seed on, so the next call's imagined deals are new ones."""
        packed = world[2]
        table = world[4]
        trick = world[3]
        run = table[_RUN]
        announced = table[_ANNOUNCED]
        ann: list[int] = []
        for seat, card in announced:
            ann += (seat, card)
        ann += [0] * (6 - len(ann))
        taken, won, poules, bonus = table[_TAKEN], table[_WON], table[_POULES], table[_BONUS]
        melds, score = table[_MELDS], table[_SCORE]
        ints = [
            packed & _MASK, packed >> 32 & _MASK, packed >> 64 & _MASK, packed >> 96 & _MASK,
            world[1], table[_LEADER], len(trick), *trick, *(0,) * (3 - len(trick)),
            len(table[_TRICKS]), taken[0], taken[1], won[0], won[1], int(table[_LOW]),
            *(run if run is not None else (-1, 0, 0)), len(announced), *ann, *poules,
            bonus[0], bonus[1], melds[0], melds[1], score[0], score[1], *self.voids,
            *self._rules_tail(world), table[_MELDED], self._seed, self.patience,
            self.race, *self._facts,
        ]  # fmt: skip
        if advance:
            self._seed = (self._seed * 0x9E3779B1 + 0x7F4A7C15) & _MASK
        return np.array(ints, dtype=np.int64).astype(np.int32).tobytes()


class SearchJudge:
    """Judges a searching partner's lead by the card its own small search would choose
    (``NativeValues.choice``): a callable (state, public voids) -> action, or ``None`` where
    the search cannot run in C. Built on the first state it is asked about."""

    def __init__(self, rules: RuleSet, table: np.ndarray, samples: int, seed: int) -> None:
        self.rules = rules
        self.table = table
        self.samples = samples
        self.seed = seed
        self._native: NativeValues | None = None

    def __call__(self, state: State, voids: list[int]) -> int | None:
        if self._native is None:
            self._native = native_for(
                state, self.rules, self.table, state[1] & 1, 0, "shrewd", None, seed=self.seed
            )
            if self._native is None:
                return None
        return self._native.choice(state, list(voids), self.samples)


def native_for(world: State, *settings: Any, **named: Any) -> NativeValues | None:
    """The C values for this decision (``NativeValues`` of ``settings`` after the library), or
    ``None`` where they stay in Python; ``world`` is one of the decision's sampled deals."""
    if world[0] != PLAY_PHASE or len(world[4][_TRICKS]) >= TRICKS_PER_DEAL:
        return None
    lib = library()
    if lib is None:
        return None
    return NativeValues(lib, *settings, **named)
