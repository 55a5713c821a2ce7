"""Small hand-written SVG charts: horizontal (stacked) bars and line charts.

Hand-written rather than matplotlib: the report needs four chart shapes, and writing them directly
keeps the figures a few KB each with selectable, searchable text, adds no heavy dependency (matplotlib
pulls in numpy, pillow, fonttools and a font cache), and lets every label pass through one escaping
function. Each figure carries ``role="img"`` and a ``<title>`` so it is named for screen readers.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
    "#8cd17d",
    "#d37295",
    "#a0cbe8",
    "#ffbe7d",
    "#86bcb6",
    "#f1ce63",
)
PASSED = "#59a14f"
OTHER = "#d4d4d4"


def color_for(name: str, names: Sequence[str]) -> str:
    ordered = sorted(set(names))
    return PALETTE[ordered.index(name) % len(PALETTE)] if name in ordered else OTHER


def _text(x: float, y: float, content: str, *, anchor: str = "start", size: int = 12, weight: str = "normal") -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" font-weight="{weight}">'
        f"{escape(content)}</text>"
    )


def _open(width: int, height: int, title: str, figure_id: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="figure" id="{escape(figure_id)}" role="img" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="system-ui, sans-serif">'
        f"<title>{escape(title)}</title>"
    )


def stacked_bars(
    rows: Sequence[tuple[str, Sequence[tuple[str, float, str]], str]],
    *,
    title: str,
    figure_id: str,
    width: int = 760,
    label_width: int = 110,
) -> str:
    """One horizontal bar per row, split into (name, value, color) segments, with a note at its end."""
    bar_height, gap, top = 22, 10, 30
    height = top + len(rows) * (bar_height + gap) + 10
    plot = width - label_width - 170
    largest = max((sum(v for _, v, _ in segments) for _, segments, _ in rows), default=0) or 1
    parts = [_open(width, height, title, figure_id), _text(0, 16, title, size=14, weight="bold")]
    for index, (label, segments, note) in enumerate(rows):
        y = top + index * (bar_height + gap)
        parts.append(_text(label_width - 8, y + bar_height * 0.7, label, anchor="end"))
        x = float(label_width)
        for name, value, color in segments:
            if value <= 0:
                continue
            span = plot * value / largest
            parts.append(
                f'<rect x="{x:.1f}" y="{y}" width="{span:.1f}" height="{bar_height}" fill="{color}">'
                f"<title>{escape(f'{label}: {name} {value:g}')}</title></rect>"
            )
            x += span
        parts.append(_text(x + 6, y + bar_height * 0.7, note, size=11))
    parts.append("</svg>")
    return "".join(parts)


def rate_bars(rows: Sequence[tuple[str, float | None, str]], *, title: str, figure_id: str, width: int = 760) -> str:
    """Rates in [0, 1] as horizontal bars, each with its annotation (counts)."""
    segments = [
        (label, [("rate", (value or 0.0), "#4e79a7"), ("rest", 1 - (value or 0.0), "#e8e8e8")], note)
        for label, value, note in rows
    ]
    return stacked_bars(segments, title=title, figure_id=figure_id, width=width, label_width=160)


def line_chart(
    series: Sequence[tuple[str, Sequence[tuple[float, float]], str]],
    *,
    title: str,
    figure_id: str,
    x_label: str,
    y_label: str,
    width: int = 640,
    height: int = 300,
) -> str:
    """Lines over integer x with y in [0, 1], points marked and labelled with their value."""
    left, right, top, bottom = 50, 250, 30, 40
    xs = [x for _, points, _ in series for x, _ in points] or [1.0]
    low, high = min(xs), max(xs)
    span = (high - low) or 1.0
    plot_w, plot_h = width - left - right, height - top - bottom

    def px(x: float) -> float:
        return left + plot_w * (x - low) / span

    def py(y: float) -> float:
        return top + plot_h * (1 - y)

    parts = [_open(width, height, title, figure_id), _text(0, 16, title, size=14, weight="bold")]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{py(tick):.1f}" y2="{py(tick):.1f}" stroke="#e4e4e4"/>'
        )
        parts.append(_text(left - 6, py(tick) + 4, f"{tick:.2f}", anchor="end", size=10))
    for x in sorted(set(xs)):
        parts.append(_text(px(x), top + plot_h + 16, f"{x:g}", anchor="middle", size=10))
    parts.append(_text(left + plot_w / 2, height - 4, x_label, anchor="middle", size=11))
    parts.append(
        f'<text transform="translate(12 {top + plot_h / 2:.1f}) rotate(-90)" font-size="11" text-anchor="middle">'
        f"{escape(y_label)}</text>"
    )
    for index, (name, points, color) in enumerate(series):
        if points:
            path = " ".join(f"{'M' if i == 0 else 'L'}{px(x):.1f},{py(y):.1f}" for i, (x, y) in enumerate(points))
            parts.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
            for x, y in points:
                parts.append(
                    f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3.5" fill="{color}">'
                    f"<title>{escape(f'{name}: j={x:g}, {y:.3f}')}</title></circle>"
                )
        legend_y = top + 10 + index * 18
        parts.append(f'<rect x="{left + plot_w + 12}" y="{legend_y - 9}" width="10" height="10" fill="{color}"/>')
        parts.append(_text(left + plot_w + 26, legend_y, name, size=11))
    parts.append("</svg>")
    return "".join(parts)


def legend(names: Sequence[tuple[str, str]]) -> str:
    """An HTML legend (wraps better than SVG text for long reason lists)."""
    items = "".join(
        f'<span class="key"><span class="swatch" style="background:{color}"></span>{escape(name)}</span>'
        for name, color in names
    )
    return f'<div class="legend">{items}</div>'
