"""The site's plots, drawn with matplotlib into SVG files: the rating system's history (its estimate after the first
n rating games, with its uncertainty band), win rates with 95% confidence intervals, and the head-to-head table as a
heat map. Every axis is fitted to what it shows.

Only the object-oriented API is used (a ``Figure`` per plot, never ``pyplot``): no global state, no GUI backend,
safe on a headless machine and in threads. Text is drawn as paths, so the SVGs need no fonts, and the output is
deterministic (no dates, a fixed hash salt), so republishing an unchanged database changes no file; a plot is drawn
once for the same input in a process (``_svg``: a league host rebuilds its site after every match, and the plots of
the bots that did not play are those of the last time).
"""

from __future__ import annotations

import hashlib
import io
import math
import pickle
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape as xml_escape

import matplotlib
import numpy as np
from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator
from matplotlib.typing import RcKeyType

from arena.ratings.stats import WinRate
from arena.ratings.system import RatingPoint
from arena.text import for_terminal

RATING_LABEL = "rating (band: its uncertainty)"
_STYLE: dict[RcKeyType, Any] = {
    "svg.fonttype": "path",
    "svg.hashsalt": "arena-publish",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
}
_LABEL_LENGTH = 28


def short(name: str) -> str:
    """A bot name shortened for a legend."""
    return name if len(name) <= _LABEL_LENGTH else name[: _LABEL_LENGTH - 1] + "\u2026"


def label(name: str) -> str:
    """A bot name as plot text: its control and direction characters made visible (arena.text), shortened, and
    with ``$`` escaped so that matplotlib does not read it as maths."""
    return short(for_terminal(name)).replace("\\", "\\\\").replace("$", r"\$")


def colors(bots: Sequence[str]) -> dict[str, tuple[float, float, float, float]]:
    """A stable colour per bot, in leaderboard order (tab10, then tab20 for bigger fields)."""
    cmap = matplotlib.colormaps["tab10" if len(bots) <= 10 else "tab20"]
    return {bot: cmap(i % cmap.N) for i, bot in enumerate(bots)}


_DRAWN: OrderedDict[bytes, bytes | None] = OrderedDict()  # an input's digest -> its SVG (None: nothing to draw)
_DRAWN_MOST = 64  # plots kept (tens of kB each)
_DRAWN_LOCK = threading.Lock()  # sites are built in worker threads


def _svg(path: Path, key: tuple[Any, ...], figure: Callable[[], Figure | None],
         style: Mapping[RcKeyType, Any] = _STYLE) -> bool:
    """Write the SVG of ``figure()`` into ``path`` (False, and nothing written, if it has nothing to draw), drawn
    once per distinct ``key``: everything the figure is drawn from (the output is deterministic)."""
    digest = hashlib.sha256(pickle.dumps(key, protocol=pickle.HIGHEST_PROTOCOL)).digest()
    with _DRAWN_LOCK:
        known = digest in _DRAWN
        svg = _DRAWN.get(digest)
        if known:
            _DRAWN.move_to_end(digest)
    if not known:
        with matplotlib.rc_context(dict(style)):
            fig = figure()
            if fig is not None:
                out = io.BytesIO()
                fig.savefig(out, format="svg", metadata={"Date": None}, bbox_inches="tight")
                svg = out.getvalue()
        with _DRAWN_LOCK:
            _DRAWN[digest] = svg
            while len(_DRAWN) > _DRAWN_MOST:
                _DRAWN.popitem(last=False)
    if svg is None:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(svg)
    return True


def rating_plot(
    history: Mapping[str, Sequence[RatingPoint]],
    bots: Sequence[str],
    path: Path,
    palette: Mapping[str, tuple[float, float, float, float]] | None = None,
    ylabel: str = RATING_LABEL,
) -> bool:
    """Each bot's rating estimate after the first n rating games, with its band; False if nothing to draw."""
    key = ("rating", tuple((bot, tuple(history.get(bot, ()))) for bot in bots),
           tuple(palette.get(bot) for bot in bots) if palette is not None else None, ylabel)
    return _svg(path, key, lambda: rating_figure(history, bots, palette, ylabel))


def rating_limits(history: Mapping[str, Sequence[RatingPoint]], bots: Sequence[str]) -> tuple[float, float]:
    """The y range of a rating plot: every estimate and each bot's last band, padded. Earlier bands (few games,
    wide) may run off it: a range that held the prior's band would squeeze every line into a sliver.
    """
    values: list[float] = []
    for bot in bots:
        points = history[bot]
        values += [p.estimate for p in points]
        values += [points[-1].low, points[-1].high]
    low, high = min(values), max(values)
    pad = 0.06 * (high - low) or 1.0
    return low - pad, high + pad


def rating_figure(
    history: Mapping[str, Sequence[RatingPoint]],
    bots: Sequence[str],
    palette: Mapping[str, tuple[float, float, float, float]] | None = None,
    ylabel: str = RATING_LABEL,
) -> Figure | None:
    """The figure of ``rating_plot`` (None when no bot has a history)."""
    drawn = [bot for bot in bots if history.get(bot)]
    if not drawn:
        return None
    palette = palette or colors(drawn)
    with matplotlib.rc_context(_STYLE):
        fig = Figure(figsize=(8, 4.2) if len(drawn) == 1 else (10.5, 4.2 if len(drawn) <= 8 else 5.5))
        ax = fig.add_subplot()
        handles: list[Line2D] = []
        for bot in drawn:
            points = history[bot]
            x = np.array([p.games for p in points], dtype=float)
            estimate = np.array([p.estimate for p in points])
            color = palette[bot]
            ax.fill_between(x, [p.low for p in points], [p.high for p in points], color=color,
                            alpha=0.12 if len(drawn) > 1 else 0.25, linewidth=0)
            (line,) = ax.plot(x, estimate, color=color, linewidth=1.6, marker="o" if len(x) <= 40 else None,
                              markersize=3)
            handles.append(line)
        ax.set_ylim(*rating_limits(history, drawn))
        ax.set_xlim(0, max(history[bot][-1].games for bot in drawn) * 1.02 or 1)
        ax.set_xlabel("rating games fitted (blocks of duplicate deals; the first n, in the order played)")
        ax.set_ylabel(ylabel)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if len(drawn) > 1:
            # Explicit labels: matplotlib would drop a label starting with "_" if it were given to plot().
            ax.legend(handles, [label(b) for b in drawn], loc="upper left", bbox_to_anchor=(1.01, 1.0),
                      frameon=False, fontsize=8)
        else:
            ax.set_title(label(drawn[0]), loc="left")
    return fig


def winrate_plot(rates: Sequence[tuple[str, WinRate]], path: Path) -> bool:
    """mbb/hand per bot (in the given order, top to bottom) with 95% CI bars; a bot with one session has an
    infinite interval, so it gets a hollow marker and no bar. False if there is nothing to draw.
    """
    return _svg(path, ("winrate", tuple(rates)), lambda: winrate_figure(rates))


def winrate_figure(rates: Sequence[tuple[str, WinRate]]) -> Figure | None:
    """The figure of ``winrate_plot`` (None without bots)."""
    if not rates:
        return None
    with matplotlib.rc_context(_STYLE):
        fig = Figure(figsize=(6.2, 1.3 + 0.45 * len(rates)))
        ax = fig.add_subplot()
        y = np.arange(len(rates))[::-1]
        spans: list[float] = []
        for yi, (_, w) in zip(y, rates, strict=True):
            finite = math.isfinite(w.low) and math.isfinite(w.high)
            if finite:
                ax.errorbar(w.mean, yi, xerr=[[w.mean - w.low], [w.high - w.mean]], fmt="o", color="#1f5fa8",
                            ecolor="#1f5fa8", elinewidth=2, capsize=4, markersize=6)
                spans += [w.low, w.high]
            else:
                ax.plot(w.mean, yi, "o", markerfacecolor="white", markeredgecolor="#1f5fa8", markersize=7)
                ax.annotate("one session: no interval", (w.mean, yi), xytext=(8, 0), textcoords="offset points",
                            va="center", fontsize=7, color="#666666")
            spans.append(w.mean)
        ax.axvline(0, color="#444444", linewidth=0.8)
        low, high = min([*spans, 0.0]), max([*spans, 0.0])
        pad = 0.08 * (high - low) or 1.0
        ax.set_xlim(low - pad, high + pad * 3)
        ax.set_yticks(y, [label(bot) for bot, _ in rates])
        ax.set_ylim(-0.7, len(rates) - 0.3)
        ax.grid(axis="y", visible=False)
        ax.set_xlabel("mbb/hand (bars: 95% CI over sessions)")
    return fig


def crosstable_plot(table: Mapping[str, Mapping[str, WinRate]], bots: Sequence[str], path: Path) -> bool:
    """A heat map of ``table[row][column]`` (the row bot's mbb/hand against the column bot), annotated; a star
    marks a 95% CI that excludes zero. False when fewer than two bots met.
    """
    key = ("crosstable", tuple((row, tuple(table[row].items())) for row in bots if row in table), tuple(bots))
    return _svg(path, key, lambda: crosstable_figure(table, bots), {**_STYLE, "axes.grid": False})


def crosstable_figure(table: Mapping[str, Mapping[str, WinRate]], bots: Sequence[str]) -> Figure | None:
    """The figure of ``crosstable_plot`` (None when fewer than two bots met)."""
    drawn = [bot for bot in bots if table.get(bot)]
    if len(drawn) < 2:
        return None
    n = len(drawn)
    values = np.full((n, n), np.nan)
    for i, a in enumerate(drawn):
        for j, b in enumerate(drawn):
            w = table.get(a, {}).get(b)
            if w is not None and i != j:
                values[i, j] = w.mean
    finite = values[np.isfinite(values)]
    limit = float(np.max(np.abs(finite))) if finite.size else 1.0
    limit = limit or 1.0
    with matplotlib.rc_context({**_STYLE, "axes.grid": False}):
        size = max(4.5, min(14.0, 1.6 + 0.75 * n))
        fig = Figure(figsize=(size + 1.4, size))
        ax = fig.add_subplot()
        cmap = matplotlib.colormaps["RdBu"].with_extremes(bad="#eeeeee")
        image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, norm=TwoSlopeNorm(0.0, -limit, limit))
        fontsize = 9 if n <= 6 else (7 if n <= 12 else 5)
        for i, a in enumerate(drawn):
            for j, b in enumerate(drawn):
                if i == j:
                    continue
                w = table.get(a, {}).get(b)
                if w is None:
                    ax.text(j, i, "\u2013", ha="center", va="center", fontsize=fontsize, color="#888888")
                    continue
                strong = abs(w.mean) > 0.55 * limit
                text = f"{w.mean:+.0f}".replace("-", "\u2212") + ("*" if w.significant else "")
                ax.text(j, i, text, ha="center", va="center", fontsize=fontsize,
                        color="white" if strong else "#111111")
        names = [label(b) for b in drawn]
        ax.set_xticks(range(n), names, rotation=40, ha="right")
        ax.set_yticks(range(n), names)
        ax.set_xlabel("opponent")
        ax.set_ylabel("bot (row) \u2014 its mbb/hand against the column")
        ax.spines[:].set_visible(False)
        bar = fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
        bar.set_label("mbb/hand  (* 95% CI excludes 0)")
    return fig


MAX_POINTS = 1500  # points per line of a chip graph: a 20,000-hand match stays a small SVG


def _hex(color: tuple[float, float, float, float] | str) -> str:
    if isinstance(color, str):
        return color
    return "#" + "".join(f"{round(255 * c):02x}" for c in color[:3])


def _number(x: float) -> str:
    return f"{x:,.0f}".replace("-", "\u2212")


def chips_svg(
    hands: Sequence[int],
    raw: Mapping[str, Sequence[float]],
    adjusted: Mapping[str, Sequence[float]] | None = None,
    palette: Mapping[str, tuple[float, float, float, float]] | None = None,
) -> str | None:
    """Each bot's cumulative chips over a match's hands (``raw``: per-hand payoffs as dealt, in the order of
    ``hands``), and dashed the same variance-adjusted (``adjusted``: AIVAT), as an SVG document; None
    without hands. Written directly rather than through matplotlib (a league redraws one per match after every
    match, and matplotlib takes half a second a plot); long matches are drawn at ``MAX_POINTS`` evenly spaced hands
    (always the last), the y axis fitted to the lines."""
    if not hands or not raw:
        return None
    bots = list(raw)
    palette = palette or colors(bots)
    n = len(hands)
    keep = np.unique(np.linspace(0, n - 1, min(n, MAX_POINTS)).round().astype(int))
    lines: list[tuple[str, str, np.ndarray, bool]] = []
    for bot in bots:
        color = _hex(palette.get(bot, "#1f5fa8"))
        lines.append((short(bot), color, np.cumsum(np.asarray(raw[bot], dtype=float))[keep], False))
        if adjusted is not None and bot in adjusted:
            ev = np.cumsum(np.asarray(adjusted[bot], dtype=float))[keep]
            lines.append((f"{short(bot)} (AIVAT)", color, ev, True))
    values = np.concatenate([line[2] for line in lines] + [np.zeros(1)])
    low, high = float(values.min()), float(values.max())
    pad = 0.06 * (high - low) or 1.0
    low, high = low - pad, high + pad
    width, height, left, right, top, bottom = 900, 340, 74, 300, 14, 46
    plot_w, plot_h = width - left - right, height - top - bottom
    x_hi = max(float(n), 2.0)
    xs = np.arange(1, n + 1, dtype=float)[keep]

    def sx(x: float) -> float:
        return left + (x - 1) / (x_hi - 1) * plot_w

    def sy(y: float) -> float:
        return top + (high - y) / (high - low) * plot_h

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
           f'height="{height}" font-family="DejaVu Sans, Arial, sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="#ffffff"/>']
    for tick in MaxNLocator(nbins=6).tick_values(low, high):
        if low <= tick <= high:
            y = sy(tick)
            out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#dddddd"/>')
            out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" fill="#333333">{_number(tick)}</text>')
    for tick in MaxNLocator(nbins=7, integer=True).tick_values(1, x_hi):
        if 1 <= tick <= x_hi:
            x = sx(tick)
            out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{top + plot_h}" stroke="#eeeeee"/>')
            out.append(f'<text x="{x:.1f}" y="{top + plot_h + 16}" text-anchor="middle" fill="#333333">'
                       f'{_number(tick)}</text>')
    if low < 0 < high:
        out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{sy(0):.1f}" y2="{sy(0):.1f}" stroke="#444444"/>')
    out.append(f'<path d="M{left},{top}V{top + plot_h}H{left + plot_w}" fill="none" stroke="#333333"/>')
    for index, (name, color, ys, dashed) in enumerate(lines):
        points = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in zip(xs, ys, strict=True))
        dash = ' stroke-dasharray="5,3"' if dashed else ""
        out.append(f'<polyline points="{points}" fill="none" stroke="{color}" stroke-width="{1.2 if dashed else 1.7}"'
                   f'{dash}/>')
        ly = top + 8 + 18 * index
        out.append(f'<line x1="{width - right + 14}" x2="{width - right + 40}" y1="{ly}" y2="{ly}" stroke="{color}" '
                   f'stroke-width="2"{dash}/>')
        out.append(f'<text x="{width - right + 46}" y="{ly + 4}" fill="#222222">{xml_escape(name)}</text>')
    out.append(f'<text x="{left + plot_w / 2:.0f}" y="{height - 8}" text-anchor="middle" fill="#222222">'
               "hands played</text>")
    out.append(f'<text transform="translate(16 {top + plot_h / 2:.0f}) rotate(-90)" text-anchor="middle" '
               'fill="#222222">chips won (cumulative)</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def chips_plot(
    hands: Sequence[int],
    raw: Mapping[str, Sequence[float]],
    path: Path,
    adjusted: Mapping[str, Sequence[float]] | None = None,
    palette: Mapping[str, tuple[float, float, float, float]] | None = None,
) -> bool:
    """Write ``chips_svg`` into ``path``; False if there is nothing to draw."""
    svg = chips_svg(hands, raw, adjusted, palette)
    if svg is None:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(svg, encoding="utf-8")
    return True


def llr_figure(series: Sequence[tuple[int, float]], lower: float, upper: float, min_sessions: int) -> Figure | None:
    """A comparison's LLR after each round, with the two bounds that decide it and the first round a decision
    may come (``min_sessions``); None before the first round."""
    if not series:
        return None
    x = np.array([s for s, _ in series], dtype=float)
    y = np.array([v for _, v in series], dtype=float)
    with matplotlib.rc_context(_STYLE):
        fig = Figure(figsize=(8.0, 3.6))
        ax = fig.add_subplot()
        ax.axhline(upper, color="#17803d", linewidth=1.0, linestyle="--", label=f"accept H1 ({upper:+.2f})")
        ax.axhline(lower, color="#b42318", linewidth=1.0, linestyle="--", label=f"accept H0 ({lower:+.2f})")
        ax.axvline(min_sessions, color="#888888", linewidth=0.8, linestyle=":",
                   label=f"first decision ({min_sessions})")
        ax.plot(x, y, color="#1f5fa8", linewidth=1.6, marker="o" if len(x) <= 60 else None, markersize=2.5,
                label="LLR")
        low, high = min(float(y.min()), lower), max(float(y.max()), upper)
        pad = 0.08 * (high - low) or 1.0
        ax.set_ylim(low - pad, high + pad)
        ax.set_xlim(0, max(float(x.max()), float(min_sessions)) * 1.03)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("rounds (duplicate sessions) counted")
        ax.set_ylabel("log-likelihood ratio")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
    return fig


def llr_plot(series: Sequence[tuple[int, float]], lower: float, upper: float, min_sessions: int, path: Path) -> bool:
    """Draw ``llr_figure`` into ``path``; False if there is nothing to draw."""
    return _svg(path, ("llr", tuple(series), lower, upper, min_sessions),
                lambda: llr_figure(series, lower, upper, min_sessions))
