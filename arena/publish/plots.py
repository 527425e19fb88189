"""The site's plots, drawn with matplotlib into SVG files: the rating system's history (its estimate after the first
n sessions, with its uncertainty band), win rates with 95% confidence intervals, and the head-to-head table as a
heat map. Every axis is fitted to what it shows.

Only the object-oriented API is used (a ``Figure`` per plot, never ``pyplot``): no global state, no GUI backend,
safe on a headless machine and in threads. Text is drawn as paths, so the SVGs need no fonts, and the output is
deterministic (no dates, a fixed hash salt), so republishing an unchanged database changes no file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator
from matplotlib.typing import RcKeyType

from arena.ratings.stats import WinRate
from arena.ratings.system import RatingPoint

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


def label(name: str) -> str:
    """A bot name as plot text: shortened, and with ``$`` escaped so that matplotlib does not read it as maths."""
    short = name if len(name) <= _LABEL_LENGTH else name[: _LABEL_LENGTH - 1] + "\u2026"
    return short.replace("\\", "\\\\").replace("$", r"\$")


def colors(bots: Sequence[str]) -> dict[str, tuple[float, float, float, float]]:
    """A stable colour per bot, in leaderboard order (tab10, then tab20 for bigger fields)."""
    cmap = matplotlib.colormaps["tab10" if len(bots) <= 10 else "tab20"]
    return {bot: cmap(i % cmap.N) for i, bot in enumerate(bots)}


def _save(fig: Figure, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="svg", metadata={"Date": None}, bbox_inches="tight")


def rating_plot(
    history: Mapping[str, Sequence[RatingPoint]],
    bots: Sequence[str],
    path: Path,
    palette: Mapping[str, tuple[float, float, float, float]] | None = None,
    ylabel: str = RATING_LABEL,
) -> bool:
    """Each bot's rating estimate after the first n sessions, with its band; False if nothing to draw."""
    with matplotlib.rc_context(_STYLE):
        fig = rating_figure(history, bots, palette, ylabel)
        if fig is None:
            return False
        _save(fig, path)
    return True


def rating_limits(history: Mapping[str, Sequence[RatingPoint]], bots: Sequence[str]) -> tuple[float, float]:
    """The y range of a rating plot: every estimate and each bot's last band, padded. Earlier bands (few sessions,
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
            x = np.array([p.sessions for p in points], dtype=float)
            estimate = np.array([p.estimate for p in points])
            color = palette[bot]
            ax.fill_between(x, [p.low for p in points], [p.high for p in points], color=color,
                            alpha=0.12 if len(drawn) > 1 else 0.25, linewidth=0)
            (line,) = ax.plot(x, estimate, color=color, linewidth=1.6, marker="o" if len(x) <= 40 else None,
                              markersize=3)
            handles.append(line)
        ax.set_ylim(*rating_limits(history, drawn))
        ax.set_xlim(0, max(history[bot][-1].sessions for bot in drawn) * 1.02 or 1)
        ax.set_xlabel("duplicate sessions fitted (the first n, in the order played; all matches)")
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
    with matplotlib.rc_context(_STYLE):
        fig = winrate_figure(rates)
        if fig is None:
            return False
        _save(fig, path)
    return True


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
    with matplotlib.rc_context({**_STYLE, "axes.grid": False}):
        fig = crosstable_figure(table, bots)
        if fig is None:
            return False
        _save(fig, path)
    return True


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


def chips_figure(
    hands: Sequence[int],
    raw: Mapping[str, Sequence[float]],
    adjusted: Mapping[str, Sequence[float]] | None = None,
    palette: Mapping[str, tuple[float, float, float, float]] | None = None,
) -> Figure | None:
    """Each bot's cumulative chips over a match's hands (``raw``: per-hand payoffs as dealt, in the order of
    ``hands``), and dashed the same with all-in hands scored by their EV (``adjusted``); None without hands.
    Long matches are drawn at ``MAX_POINTS`` evenly spaced hands (always including the last)."""
    if not hands or not raw:
        return None
    bots = list(raw)
    palette = palette or colors(bots)
    n = len(hands)
    keep = np.unique(np.linspace(0, n - 1, min(n, MAX_POINTS)).round().astype(int))
    x = np.arange(1, n + 1, dtype=float)[keep]
    values: list[float] = [0.0]
    with matplotlib.rc_context(_STYLE):
        fig = Figure(figsize=(8.5, 3.8))
        ax = fig.add_subplot()
        for bot in bots:
            color = palette.get(bot, "#1f5fa8")
            total = np.cumsum(np.asarray(raw[bot], dtype=float))[keep]
            ax.plot(x, total, color=color, linewidth=1.5, label=label(bot))
            values += [float(total.min()), float(total.max())]
            if adjusted is not None and bot in adjusted:
                ev = np.cumsum(np.asarray(adjusted[bot], dtype=float))[keep]
                ax.plot(x, ev, color=color, linewidth=1.1, linestyle="--", label=f"{label(bot)} (all-in EV)")
                values += [float(ev.min()), float(ev.max())]
        ax.axhline(0, color="#444444", linewidth=0.7)
        low, high = min(values), max(values)
        pad = 0.06 * (high - low) or 1.0
        ax.set_ylim(low - pad, high + pad)
        ax.set_xlim(1, max(float(n), 2.0))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("hands played")
        ax.set_ylabel("chips won (cumulative)")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
    return fig


def chips_plot(
    hands: Sequence[int],
    raw: Mapping[str, Sequence[float]],
    path: Path,
    adjusted: Mapping[str, Sequence[float]] | None = None,
    palette: Mapping[str, tuple[float, float, float, float]] | None = None,
) -> bool:
    """Draw ``chips_figure`` into ``path``; False if there is nothing to draw."""
    with matplotlib.rc_context(_STYLE):
        fig = chips_figure(hands, raw, adjusted, palette)
        if fig is None:
            return False
        _save(fig, path)
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
    with matplotlib.rc_context(_STYLE):
        fig = llr_figure(series, lower, upper, min_sessions)
        if fig is None:
            return False
        _save(fig, path)
    return True
