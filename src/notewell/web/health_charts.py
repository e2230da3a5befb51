"""The loop-health charts as small SVGs drawn on the server (no script library, no CDN): bars per day,
horizontal bars for a few named counts, and KEA's funnel (per mode, its stages as bars centred one under the
other, narrowing as the filter and the dedup drop rules). Each chart is an image with a label saying its
numbers; the page's tables repeat them as text. Labels are escaped; the styles are classes of notewell.css (the
CSP allows no inline style)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from markupsafe import Markup, escape

WIDTH: Final = 480
DAY_HEIGHT: Final = 160
ROW_HEIGHT: Final = 26
LABEL_WIDTH: Final = 120
AXIS: Final = 20  # room under the day bars for their dates


def _summary(title: str, bars: Sequence[tuple[str, int]]) -> str:
    return f"{title}: " + ", ".join(f"{label} {value}" for label, value in bars)


def day_bars(title: str, days: Sequence[tuple[str, int]]) -> Markup:
    """One bar per day (oldest left), the first and last days' dates under them, the tallest bar's value."""
    top = max([value for _, value in days] + [1])
    plot = DAY_HEIGHT - AXIS
    step = WIDTH / max(len(days), 1)
    parts = [f'<svg class="chart" viewBox="0 0 {WIDTH} {DAY_HEIGHT}" width="{WIDTH}" height="{DAY_HEIGHT}" '
             f'role="img" aria-label="{escape(_summary(title, days))}">',
             f'<line class="axis" x1="0" y1="{plot}" x2="{WIDTH}" y2="{plot}"/>']
    for i, (day, value) in enumerate(days):
        height = (plot - 14) * value / top
        x = i * step + step * 0.15
        parts.append(f'<rect class="bar" x="{x:.1f}" y="{plot - height:.1f}" width="{step * 0.7:.1f}" '
                     f'height="{height:.1f}"><title>{escape(day)}: {value}</title></rect>')
    if days:
        parts.append(f'<text x="0" y="{DAY_HEIGHT - 4}">{escape(days[0][0])}</text>')
        parts.append(f'<text x="{WIDTH}" y="{DAY_HEIGHT - 4}" text-anchor="end">{escape(days[-1][0])}</text>')
    parts.append(f'<text x="{WIDTH}" y="11" text-anchor="end">max {top}</text></svg>')
    return Markup("".join(parts))


def row_bars(title: str, bars: Sequence[tuple[str, int]]) -> Markup:
    """A horizontal bar per named count, scaled to the largest, each with its label and value."""
    top = max([value for _, value in bars] + [1])
    height = ROW_HEIGHT * max(len(bars), 1)
    room = WIDTH - LABEL_WIDTH - 40
    parts = [f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" '
             f'aria-label="{escape(_summary(title, bars))}">']
    for i, (label, value) in enumerate(bars):
        y = i * ROW_HEIGHT
        length = room * value / top
        parts.append(f'<text x="0" y="{y + 17}">{escape(label)}</text>'
                     f'<rect class="bar" x="{LABEL_WIDTH}" y="{y + 5}" width="{length:.1f}" '
                     f'height="{ROW_HEIGHT - 10}"/>'
                     f'<text x="{LABEL_WIDTH + length + 6:.1f}" y="{y + 17}">{value}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))


def funnel_bars(title: str, modes: Sequence[tuple[str, Sequence[tuple[str, int]]]]) -> Markup:
    """Per mode, a heading and its stages as bars centred on the plot's middle (a funnel), all scaled to the
    largest stage, each with its label and value."""
    top = max([value for _, stages in modes for _, value in stages] + [1])
    rows = sum(len(stages) + 1 for _, stages in modes)
    height = ROW_HEIGHT * max(rows, 1)
    room = WIDTH - LABEL_WIDTH - 40
    middle = LABEL_WIDTH + room / 2
    summary = "; ".join(f"{mode} " + ", ".join(f"{label} {value}" for label, value in stages)
                        for mode, stages in modes)
    parts = [f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" '
             f'aria-label="{escape(title)}: {escape(summary)}">']
    y = 0
    for mode, stages in modes:
        parts.append(f'<text class="heading" x="0" y="{y + 17}">{escape(mode)}</text>')
        y += ROW_HEIGHT
        for label, value in stages:
            length = room * value / top
            parts.append(f'<text x="0" y="{y + 17}">{escape(label)}</text>'
                         f'<rect class="bar" x="{middle - length / 2:.1f}" y="{y + 5}" width="{length:.1f}" '
                         f'height="{ROW_HEIGHT - 10}"><title>{escape(mode)} {escape(label)}: {value}</title></rect>'
                         f'<text x="{WIDTH}" y="{y + 17}" text-anchor="end">{value}</text>')
            y += ROW_HEIGHT
    parts.append("</svg>")
    return Markup("".join(parts))
