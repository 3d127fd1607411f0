"""The card faces the project draws: 32 faces and a back per deck, well-formed SVG, the French
and German names and indices of docs/rules.md."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from arena.web.cards import CODES, card_name, card_sprite, card_svg, index_label
from arena.web.charts import Point, Series, rating_chart

NS = "{http://www.w3.org/2000/svg}"


@pytest.mark.parametrize("deck,prefix", [("french", "fr"), ("german", "de")])
def test_a_sprite_holds_every_card_and_the_back(deck, prefix):
    root = ET.fromstring(card_sprite(deck))
    ids = {s.get("id") for s in root.iter(f"{NS}symbol")}
    assert {f"{prefix}-{code}" for code in CODES} | {f"{prefix}-back"} <= ids
    assert {f"{prefix}-suit-{suit}" for suit in "CDHS"} <= ids
    assert len(CODES) == len(set(CODES)) == 32


def test_french_and_german_names_and_indices():
    assert card_name("TH", "french") == "ten of hearts"
    assert [index_label(c, "french") for c in ("AS", "KS", "QS", "JS")] == ["1", "R", "D", "V"]
    assert card_name("AC", "german") == "Eichel Daus"
    assert card_name("QS", "german") == "Grün Ober"
    assert card_name("JD", "german") == "Schellen Unter"
    assert card_name("KH", "german") == "Rot König"
    assert [index_label(c, "german") for c in ("AC", "QC", "JC")] == ["D", "O", "U"]


def test_a_standalone_card_is_well_formed():
    ET.fromstring(card_svg("9D", "german"))
    ET.fromstring(card_svg("back", "french"))


def test_rating_chart_draws_a_line_and_band_per_series():
    from datetime import UTC, datetime, timedelta

    start = datetime(2026, 1, 1, tzinfo=UTC)
    series = [
        Series("v1", [Point(start + timedelta(hours=h), 1500 + 10 * h, 80) for h in range(5)]),
        Series("v2", [Point(start + timedelta(hours=3), 1450, 120)]),
    ]
    root = ET.fromstring(rating_chart(series, title="history"))
    assert len(root.findall(f".//{NS}polyline")) == 2
    assert len(root.findall(f".//{NS}polygon")) == 2
    assert root.find(f"{NS}title").text == "history"
    assert rating_chart([], title="nothing") == ""
