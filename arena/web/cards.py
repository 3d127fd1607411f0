"""Card faces drawn as SVG by the project: French faces (the Canadian presets) and German faces
(pollack), as one sprite of ``<symbol>`` elements per deck that a page inlines once and every card
``<use>``s.

French-Canadian indices: 10, 9, 1 (ace), R (roi), D (dame), V (valet), 8, 7; suits ♣ ♦ ♥ ♠.
German: Eichel (C), Schellen (D), Rot (H), Grün (S); Daus (A, drawn with two pips as on real
decks), Ober (Q), Unter (J), König (K). Card codes never change (``docs/rules.md``); only the
art does.
Pure functions, no Django.
"""

from __future__ import annotations

from functools import cache
from typing import Literal

Deck = Literal["french", "german"]

RANKS = "T9AKQJ87"
SUITS = "CDHS"
CODES = tuple(r + s for s in SUITS for r in RANKS)
WIDTH, HEIGHT = 60, 90

_INDEX = {
    "french": {"T": "10", "9": "9", "A": "1", "K": "R", "Q": "D", "J": "V", "8": "8", "7": "7"},
    "german": {"T": "10", "9": "9", "A": "D", "K": "K", "Q": "O", "J": "U", "8": "8", "7": "7"},
}
_RANK_NAMES = {
    "french": {"T": "ten", "9": "nine", "A": "ace", "K": "king", "Q": "queen", "J": "jack",
               "8": "eight", "7": "seven"},
    "german": {"T": "Zehn", "9": "Neun", "A": "Daus", "K": "König", "Q": "Ober", "J": "Unter",
               "8": "Acht", "7": "Sieben"},
}
_SUIT_NAMES = {
    "french": {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"},
    "german": {"C": "Eichel", "D": "Schellen", "H": "Rot", "S": "Grün"},
}
_SUIT_COLOURS = {
    "french": {"C": "#1a1a1a", "D": "#c8102e", "H": "#c8102e", "S": "#1a1a1a"},
    "german": {"C": "#6b3e12", "D": "#a86a00", "H": "#c8102e", "S": "#1f7a1f"},
}
_PREFIX = {"french": "fr", "german": "de"}

# Suit signs in a 100 x 100 box.
_HEART = '<path d="M50 92C12 62 2 40 16 22 30 6 46 14 50 30 54 14 70 6 84 22 98 40 88 62 50 92Z"/>'
_SUIT_SHAPES = {
    "french": {
        "H": _HEART,
        "D": '<path d="M50 4 86 50 50 96 14 50Z"/>',
        "S": '<path d="M50 4C84 36 100 54 86 70 74 82 58 76 54 66L62 96H38L46 66C42 76 26 82 14 '
             '70 0 54 16 36 50 4Z"/>',
        "C": '<circle cx="50" cy="28" r="20"/><circle cx="27" cy="58" r="20"/>'
             '<circle cx="73" cy="58" r="20"/><path d="M45 52 38 96H62L55 52Z"/>',
    },
    "german": {
        "H": _HEART,
        "D": '<circle cx="50" cy="12" r="7" fill="none" stroke="currentColor" stroke-width="5"/>'
             '<circle cx="50" cy="56" r="36"/>'
             '<path d="M16 50H84" stroke="#fff" stroke-width="5"/>'
             '<circle cx="50" cy="74" r="7" fill="#fff"/><path d="M50 80V92" stroke="#fff" '
             'stroke-width="4"/>',
        "S": '<path d="M50 4C86 30 92 64 50 88 8 64 14 30 50 4Z"/>'
             '<path d="M50 14V98" stroke="#fff" stroke-width="4" fill="none"/>'
             '<path d="M50 40 30 28M50 56 28 46M50 40 70 28M50 56 72 46" stroke="#fff" '
             'stroke-width="3" fill="none"/>',
        "C": '<path d="M46 0H54V18H46Z"/>'
             '<ellipse cx="50" cy="62" rx="30" ry="35" fill="#c58a3e"/>'
             '<path d="M14 52C14 14 86 14 86 52Z"/>'
             '<path d="M24 34H76M18 44H82M38 22 32 52M50 20V52M62 22 68 52" stroke="#fff" '
             'stroke-width="3" fill="none"/>',
    },
}

# Pip centres on the 60 x 90 card, by number of pips.
_COLUMNS = (21, 39)
_PIPS = {
    7: [(x, y) for x in _COLUMNS for y in (22, 45, 68)] + [(30, 33)],
    8: [(x, y) for x in _COLUMNS for y in (22, 45, 68)] + [(30, 33), (30, 57)],
    9: [(x, y) for x in _COLUMNS for y in (20, 36, 54, 70)] + [(30, 45)],
    10: [(x, y) for x in _COLUMNS for y in (20, 36, 54, 70)] + [(30, 28), (30, 62)],
}
_COUNT = {"T": 10, "9": 9, "8": 8, "7": 7}
_COURT_WORDS = {
    "french": {"K": "ROI", "Q": "DAME", "J": "VALET"},
    "german": {"K": "KÖNIG", "Q": "OBER", "J": "UNTER"},
}


def card_name(code: str, deck: Deck) -> str:
    """A card's spoken name: ``"ten of hearts"`` (French), ``"Rot Ober"`` (German)."""
    rank, suit = code[0], code[1]
    if deck == "german":
        return f"{_SUIT_NAMES[deck][suit]} {_RANK_NAMES[deck][rank]}"
    return f"{_RANK_NAMES[deck][rank]} of {_SUIT_NAMES[deck][suit]}"


def index_label(code: str, deck: Deck) -> str:
    """The corner index of a card: ``"10"``, ``"R"``, ``"U"``..."""
    return _INDEX[deck][code[0]]


def symbol_id(code: str, deck: Deck) -> str:
    """The sprite's id for a card (``"fr-TH"``), or ``"fr-back"`` for the back."""
    return f"{_PREFIX[deck]}-{code}"


def _pip(deck: Deck, suit: str, x: float, y: float, size: float, flip: bool = False) -> str:
    turn = f' transform="rotate(180 {x} {y})"' if flip else ""
    return (
        f'<use href="#{_PREFIX[deck]}-suit-{suit}" x="{x - size / 2:g}" y="{y - size / 2:g}" '
        f'width="{size:g}" height="{size:g}"{turn}/>'
    )


def _corners(code: str, deck: Deck) -> str:
    index = index_label(code, deck)
    size = 9 if len(index) == 2 else 11
    top = (
        f'<text x="7" y="13" font-size="{size}" text-anchor="middle">{index}</text>'
        + _pip(deck, code[1], 7, 20, 8)
    )
    return top + f'<g transform="rotate(180 30 45)">{top}</g>'


def _face(code: str, deck: Deck) -> str:
    rank, suit = code[0], code[1]
    if rank in _COUNT:
        count = _COUNT[rank]
        return "".join(_pip(deck, suit, x, y, 12, flip=y > 45) for x, y in _PIPS[count])
    if rank == "A":
        if deck == "german":  # the Daus carries two pips
            return _pip(deck, suit, 30, 32, 22) + _pip(deck, suit, 30, 58, 22)
        return _pip(deck, suit, 30, 45, 30)
    word = _COURT_WORDS[deck][rank]
    letter = index_label(code, deck)
    pip_y = {"K": 30, "Q": 26, "J": 60}[rank] if deck == "german" else 28
    text_y = 66 if pip_y < 45 else 38
    return (
        '<rect x="14" y="12" width="32" height="66" rx="3" fill="#fbf3dc" '
        'stroke="currentColor" stroke-width="1.2"/>'
        + _pip(deck, suit, 30, pip_y, 16)
        + f'<text x="30" y="{text_y}" font-size="17" text-anchor="middle">{letter}</text>'
        + f'<text x="30" y="{text_y + 9}" font-size="6" text-anchor="middle" '
        f'letter-spacing="0.3">{word}</text>'
    )


def card_symbol(code: str, deck: Deck) -> str:
    """One card as an SVG ``<symbol>``: the face, coloured by its suit, with corner indices."""
    colour = _SUIT_COLOURS[deck][code[1]]
    return (
        f'<symbol id="{symbol_id(code, deck)}" viewBox="0 0 {WIDTH} {HEIGHT}">'
        f'<rect x="0.5" y="0.5" width="{WIDTH - 1}" height="{HEIGHT - 1}" rx="5" fill="#fff" '
        f'stroke="#7a7a7a"/>'
        f'<g fill="{colour}" color="{colour}" font-family="Georgia, \'DejaVu Serif\', serif" '
        f'font-weight="700">{_corners(code, deck)}{_face(code, deck)}</g></symbol>'
    )


def back_symbol(deck: Deck) -> str:
    """The back of a card: a lattice in the deck's colour."""
    colour = "#23467a" if deck == "french" else "#6b2a1a"
    pattern = f"{_PREFIX[deck]}-lattice"
    return (
        f'<pattern id="{pattern}" width="8" height="8" patternUnits="userSpaceOnUse">'
        f'<path d="M0 0 8 8M8 0 0 8" stroke="#fff" stroke-opacity="0.35" stroke-width="1"/>'
        f"</pattern>"
        f'<symbol id="{symbol_id("back", deck)}" viewBox="0 0 {WIDTH} {HEIGHT}">'
        f'<rect x="0.5" y="0.5" width="{WIDTH - 1}" height="{HEIGHT - 1}" rx="5" fill="#fff" '
        f'stroke="#7a7a7a"/><rect x="4" y="4" width="{WIDTH - 8}" height="{HEIGHT - 8}" rx="3" '
        f'fill="{colour}"/><rect x="4" y="4" width="{WIDTH - 8}" height="{HEIGHT - 8}" rx="3" '
        f'fill="url(#{pattern})"/></symbol>'
    )


def suit_symbols(deck: Deck) -> str:
    """The four suit signs as symbols (``fr-suit-H``), usable alone (e.g. in text) too."""
    return "".join(
        f'<symbol id="{_PREFIX[deck]}-suit-{suit}" viewBox="0 0 100 100">'
        f'<g fill="{_SUIT_COLOURS[deck][suit]}" color="{_SUIT_COLOURS[deck][suit]}">{shape}</g>'
        "</symbol>"
        for suit, shape in _SUIT_SHAPES[deck].items()
    )


@cache
def card_sprite(deck: Deck) -> str:
    """The whole deck as one hidden inline ``<svg>``: suit signs, the 32 faces and the back."""
    if deck not in _PREFIX:
        raise ValueError(f"unknown deck {deck!r}: french or german")
    body = suit_symbols(deck) + "".join(card_symbol(c, deck) for c in CODES) + back_symbol(deck)
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" width="0" height="0" aria-hidden="true" '
        f'focusable="false" style="position:absolute" class="card-sprite"><defs>{body}</defs>'
        "</svg>"
    )


def card_svg(code: str, deck: Deck) -> str:
    """A standalone SVG document of one card (sprite included), e.g. to save or preview."""
    name = "back" if code == "back" else card_name(code, deck)
    sprite = card_sprite(deck).replace(' width="0" height="0"', "")
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH * 2}" height="{HEIGHT * 2}" role="img" aria-label="{name}">'
        f"{sprite}<use href=\"#{symbol_id(code, deck)}\"/></svg>"
    )
