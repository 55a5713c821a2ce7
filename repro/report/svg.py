"""Small hand-written SVG charts: horizontal (stacked) bars and line charts.

Hand-written rather than matplotlib: the report needs four chart shapes, and writing them directly
keeps the figures a few KB each with selectable, searchable text, adds no heavy dependency (matplotlib
pulls in numpy, pillow, fonttools and a font cache), and lets every label pass through one escaping
function. Each figure carries ``role="img"`` and a ``<title>`` so it is named for screen readers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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


# colours a rejection reason may take: never a green, which reads as "passed" beside PASSED
REASON_PALETTE = tuple(colour for colour in PALETTE if colour not in (PASSED, "#8cd17d"))


def color_for(name: str, names: Sequence[str]) -> str:
    ordered = sorted(set(names))
    return REASON_PALETTE[ordered.index(name) % len(REASON_PALETTE)] if name in ordered else OTHER


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


def _rate_frame(
    width: int,
    height: int,
    plot: tuple[int, int, int, int],
    *,
    title: str,
    figure_id: str,
    x_label: str,
    y_label: str,
    xs: Sequence[float],
    px: Callable[[float], float],
) -> list[str]:
    """The frame the two rate charts share: the title, a gridline at each quarter of [0, 1] with its
    value, each x value under its position ``px(x)``, and both axis labels. ``plot`` is the plot area:
    left, top, width, height."""
    left, top, plot_w, plot_h = plot
    parts = [_open(width, height, title, figure_id), _text(0, 16, title, size=14, weight="bold")]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = top + plot_h * (1 - tick)
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e4e4e4"/>')
        parts.append(_text(left - 6, y + 4, f"{tick:.2f}", anchor="end", size=10))
    for x in sorted(set(xs)):
        parts.append(_text(px(x), top + plot_h + 16, f"{x:g}", anchor="middle", size=10))
    parts.append(_text(left + plot_w / 2, height - 4, x_label, anchor="middle", size=11))
    parts.append(
        f'<text transform="translate(12 {top + plot_h / 2:.1f}) rotate(-90)" font-size="11" text-anchor="middle">'
        f"{escape(y_label)}</text>"
    )
    return parts


def _series_key(plot_right: float, top: int, index: int, name: str, color: str) -> str:
    """A series' colour and name, right of the plot, one line per series."""
    legend_y = top + 10 + index * 18
    return f'<rect x="{plot_right + 12}" y="{legend_y - 9}" width="10" height="10" fill="{color}"/>' + _text(
        plot_right + 26, legend_y, name, size=11
    )


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

    parts = _rate_frame(
        width,
        height,
        (left, top, plot_w, plot_h),
        title=title,
        figure_id=figure_id,
        x_label=x_label,
        y_label=y_label,
        xs=xs,
        px=px,
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
        parts.append(_series_key(left + plot_w, top, index, name, color))
    parts.append("</svg>")
    return "".join(parts)


def legend(names: Sequence[tuple[str, str]]) -> str:
    """An HTML legend (wraps better than SVG text for long reason lists)."""
    items = "".join(
        f'<span class="key"><span class="swatch" style="background:{color}"></span>{escape(name)}</span>'
        for name, color in names
    )
    return f'<div class="legend">{items}</div>'


def interval_chart(
    series: Sequence[tuple[str, Sequence[tuple[float, float, float, float]], str]],
    *,
    title: str,
    figure_id: str,
    x_label: str,
    y_label: str,
    width: int = 700,
    height: int = 320,
) -> str:
    """Lines of (x, y, low, high) points with y in [0, 1]: a shaded band and a bar for each interval.

    Several provers' curves overlap, so each series is nudged sideways by a few pixels to keep its
    interval bars apart; the hover title of each point gives the exact value and interval."""
    left, right, top, bottom = 50, 230, 30, 40
    xs = [x for _, points, _ in series for x, *_ in points] or [1.0]
    low_x, high_x = min(xs), max(xs)
    span = (high_x - low_x) or 1.0
    plot_w, plot_h = width - left - right, height - top - bottom

    def px(x: float, nudge: float = 0.0) -> float:
        return left + 12 + (plot_w - 24) * (x - low_x) / span + nudge

    def py(y: float) -> float:
        return top + plot_h * (1 - min(max(y, 0.0), 1.0))

    parts = _rate_frame(
        width,
        height,
        (left, top, plot_w, plot_h),
        title=title,
        figure_id=figure_id,
        x_label=x_label,
        y_label=y_label,
        xs=xs,
        px=px,
    )
    for index, (name, points, color) in enumerate(series):
        nudge = (index - (len(series) - 1) / 2) * 5
        if points:
            upper = [f"{px(x, nudge):.1f},{py(high):.1f}" for x, _, _, high in points]
            lower = [f"{px(x, nudge):.1f},{py(low):.1f}" for x, _, low, _ in reversed(points)]
            parts.append(f'<polygon points="{" ".join(upper + lower)}" fill="{color}" fill-opacity="0.12"/>')
            path = " ".join(
                f"{'M' if i == 0 else 'L'}{px(x, nudge):.1f},{py(y):.1f}" for i, (x, y, _, _) in enumerate(points)
            )
            parts.append(f'<path class="series" d="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
            for x, y, low, high in points:
                cx = px(x, nudge)
                parts.append(
                    f'<line class="interval" x1="{cx:.1f}" x2="{cx:.1f}" y1="{py(low):.1f}" y2="{py(high):.1f}"'
                    f' stroke="{color}" stroke-width="1.5"/>'
                )
                parts.append(
                    f'<circle cx="{cx:.1f}" cy="{py(y):.1f}" r="3.5" fill="{color}">'
                    f"<title>{escape(f'{name}: j={x:g}, {y:.3f} [{low:.3f}, {high:.3f}]')}</title></circle>"
                )
        parts.append(_series_key(left + plot_w, top, index, name, color))
    parts.append("</svg>")
    return "".join(parts)


def upset_chart(
    names: Sequence[str],
    intersections: Sequence[tuple[frozenset[str], int]],
    set_sizes: dict[str, int],
    *,
    title: str,
    figure_id: str,
    colors: dict[str, str],
) -> str:
    """An UpSet plot: one column per exact combination of sets (bar = its size, dots = its members),
    and one row per set with the set's total size at the left.

    Venn diagrams stop being readable beyond three sets; the UpSet layout (Lex et al., 2014) shows
    every exclusive intersection as a bar, so "proved only by this prover" is a column of its own."""
    label_w, size_w, column_w, bar_h, row_h, top = 110, 90, 44, 150, 22, 30
    # wide enough for its title (about 8 px per character at 14 px bold), however few the columns (m17)
    width = max(label_w + size_w + max(len(intersections), 1) * column_w + 20, int(len(title) * 8) + 10)
    height = top + bar_h + 24 + len(names) * row_h + 10
    largest = max((count for _, count in intersections), default=0) or 1
    largest_set = max(set_sizes.values(), default=0) or 1
    matrix_top = top + bar_h + 24
    parts = [_open(width, height, title, figure_id), _text(0, 16, title, size=14, weight="bold")]
    for row, name in enumerate(names):
        y = matrix_top + row * row_h
        if row % 2 == 0:
            parts.append(f'<rect x="0" y="{y}" width="{width}" height="{row_h}" fill="#f6f6f6"/>')
        parts.append(_text(label_w - 6, y + row_h * 0.7, name, anchor="end", size=11))
        span = (size_w - 34) * set_sizes.get(name, 0) / largest_set
        parts.append(
            f'<rect x="{label_w + size_w - 6 - span:.1f}" y="{y + 5}" width="{span:.1f}" height="{row_h - 10}"'
            f' fill="{colors.get(name, OTHER)}"><title>{escape(f"{name}: {set_sizes.get(name, 0)} in all")}</title>'
            "</rect>"
        )
        parts.append(_text(label_w + 2, y + row_h * 0.7, str(set_sizes.get(name, 0)), size=10))
    for column, (members, count) in enumerate(intersections):
        x = label_w + size_w + column * column_w + column_w / 2
        height_px = bar_h * count / largest
        label = " ∩ ".join(n for n in names if n in members) or "none"
        only = "only " if len(members) == 1 and len(names) > 1 else ""
        parts.append(
            f'<rect class="intersection" x="{x - 12:.1f}" y="{top + bar_h - height_px:.1f}" width="24"'
            f' height="{height_px:.1f}" fill="#4e79a7"><title>{escape(f"{only}{label}: {count}")}</title></rect>'
        )
        parts.append(_text(x, top + bar_h - height_px - 4, str(count), anchor="middle", size=10))
        ys = []
        for row, name in enumerate(names):
            cy = matrix_top + row * row_h + row_h / 2
            inside = name in members
            parts.append(f'<circle cx="{x:.1f}" cy="{cy:.1f}" r="6" fill="{"#333" if inside else "#d8d8d8"}"/>')
            if inside:
                ys.append(cy)
        if len(ys) > 1:
            parts.append(
                f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{ys[0]:.1f}" y2="{ys[-1]:.1f}" stroke="#333" stroke-width="2"/>'
            )
    parts.append("</svg>")
    return "".join(parts)


def forest_chart(
    rows: Sequence[tuple[str, float, float, float, str]],
    *,
    title: str,
    figure_id: str,
    width: int = 760,
    label_width: int = 220,
) -> str:
    """One (label, value, low, high, color) estimate per row as a dot with its interval whisker, on a
    shared axis that includes zero: drops can be negative, and zero is the line that matters."""
    row_h, top, bottom = 22, 30, 30
    height = top + len(rows) * row_h + bottom
    finite = [v for _, value, low, high, _ in rows for v in (value, low, high) if v == v]  # NaN != NaN
    low_x, high_x = min(finite + [0.0]), max(finite + [0.0])
    pad = (high_x - low_x) * 0.05 or 0.05
    low_x, high_x = low_x - pad, high_x + pad
    plot_w = width - label_width - 130

    def px(x: float) -> float:
        return label_width + plot_w * (x - low_x) / (high_x - low_x)

    parts = [_open(width, height, title, figure_id), _text(0, 16, title, size=14, weight="bold")]
    bottom_y = top + len(rows) * row_h
    parts.append(
        f'<line x1="{px(0):.1f}" x2="{px(0):.1f}" y1="{top}" y2="{bottom_y}" stroke="#999" stroke-dasharray="3 3"/>'
    )
    # zero and the data's ends, each drawn once (an end at zero, or one too close to zero to read apart, is
    # not drawn again over it: n10)
    ticks: list[float] = [0.0]
    for tick in (low_x + pad, high_x - pad):
        if all(abs(px(tick) - px(other)) >= 30 for other in ticks):
            ticks.append(tick)
    for tick in sorted(ticks):
        parts.append(_text(px(tick), bottom_y + 16, f"{tick:.2f}", anchor="middle", size=10))
    for index, (label, value, low, high, color) in enumerate(rows):
        y = top + index * row_h + row_h / 2
        parts.append(_text(label_width - 8, y + 4, label, anchor="end", size=11))
        if value != value:
            parts.append(_text(label_width + 4, y + 4, "no data", size=10))
            continue
        if low == low and high == high:
            parts.append(
                f'<line x1="{px(low):.1f}" x2="{px(high):.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="{color}"'
                ' stroke-width="2"/>'
            )
        parts.append(
            f'<circle cx="{px(value):.1f}" cy="{y:.1f}" r="4" fill="{color}">'
            f"<title>{escape(f'{label}: {value:.3f} [{low:.3f}, {high:.3f}]')}</title></circle>"
        )
        parts.append(_text(label_width + plot_w + 8, y + 4, f"{value:.3f} [{low:.3f}, {high:.3f}]", size=10))
    parts.append("</svg>")
    return "".join(parts)
