"""The rating-history chart, drawn as SVG on the server: one line per version over refit times,
its 95% interval as a band, the Elo scale on the left. Pure functions, no Django; the output is
escaped and safe to inline.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from html import escape

#: Line colours for versions, distinguishable and dark enough on white (WCAG 3:1 for graphics).
PALETTE = ("#1f5fa8", "#b3400f", "#2a7a3a", "#7a3aa8", "#a8265f", "#0f7a7a", "#6b5a00", "#444")
WIDTH, HEIGHT = 640, 260
LEFT, RIGHT, TOP, BOTTOM = 52, 16, 14, 34


@dataclass(frozen=True)
class Point:
    at: datetime
    elo: float
    ci95: float


@dataclass(frozen=True)
class Series:
    label: str
    points: list[Point]


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high]."""
    span = max(high - low, 1.0)
    raw = span / count
    step = next(s for s in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000) if s >= raw)
    first = (low // step) * step
    ticks, value = [], first
    while value <= high + step / 2:
        ticks.append(value)
        value += step
    return ticks


def rating_chart(series: list[Series], *, title: str) -> str:
    """An SVG line chart of the series (empty string when there is nothing to draw)."""
    points = [p for s in series for p in s.points]
    if not points:
        return ""
    low = min(p.elo - p.ci95 for p in points)
    high = max(p.elo + p.ci95 for p in points)
    ticks = _ticks(low, high)
    low, high = min(low, ticks[0]), max(high, ticks[-1])
    first, last = min(p.at for p in points), max(p.at for p in points)
    start, end = first.timestamp(), last.timestamp()
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(at: datetime) -> float:
        if end == start:
            return LEFT + plot_w / 2
        return LEFT + (at.timestamp() - start) / (end - start) * plot_w

    def y(elo: float) -> float:
        return TOP + (high - elo) / (high - low or 1) * plot_h

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'class="chart" role="img" aria-labelledby="chart-title">'
        f'<title id="chart-title">{escape(title)}</title>'
        f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="#fafafa" '
        f'stroke="#ccc"/>'
    ]
    for tick in ticks:
        ty = y(tick)
        parts.append(
            f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{ty:.1f}" y2="{ty:.1f}" stroke="#e2e2e2"/>'
            f'<text x="{LEFT - 6}" y="{ty + 4:.1f}" text-anchor="end" font-size="11" '
            f'fill="#444">{tick:.0f}</text>'
        )
    parts.append(
        f'<text x="{LEFT}" y="{HEIGHT - 10}" font-size="11" fill="#444">'
        f'{escape(_day(first))}</text>'
        f'<text x="{LEFT + plot_w}" y="{HEIGHT - 10}" font-size="11" fill="#444" '
        f'text-anchor="end">{escape(_day(last))}</text>'
    )
    for index, one in enumerate(series):
        colour = PALETTE[index % len(PALETTE)]
        pts = sorted(one.points, key=lambda p: p.at)
        upper = " ".join(f"{x(p.at):.1f},{y(p.elo + p.ci95):.1f}" for p in pts)
        lower = " ".join(f"{x(p.at):.1f},{y(p.elo - p.ci95):.1f}" for p in reversed(pts))
        line = " ".join(f"{x(p.at):.1f},{y(p.elo):.1f}" for p in pts)
        parts.append(
            f'<g class="series"><title>{escape(one.label)}</title>'
            f'<polygon points="{upper} {lower}" fill="{colour}" fill-opacity="0.12"/>'
            f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2"/>'
        )
        parts += [
            f'<circle cx="{x(p.at):.1f}" cy="{y(p.elo):.1f}" r="2.5" fill="{colour}"/>'
            for p in pts[-30:]
        ]
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


def _day(at: datetime) -> str:
    return at.strftime("%Y-%m-%d %H:%M:%S")


def legend(series: list[Series]) -> list[dict[str, str]]:
    """Label and colour of each series, in the chart's order (the page draws the legend)."""
    return [
        {"label": s.label, "colour": PALETTE[i % len(PALETTE)]} for i, s in enumerate(series)
    ]
