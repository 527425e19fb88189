"""The rating settings (what a rating game is), in the same declarative form as the match settings
(arena.runner.settings): one key (``ratings.block_deals``), one flag (``--block-deals``), one parser that names the
key when a value is wrong. Tournament and league files take them in a ``[ratings]`` table; ``arena leaderboard``,
``publish`` and ``demo`` as flags."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from arena.ratings.blocks import MAX_BLOCK_DEALS, RatingRules
from arena.runner.settings import Setting, SettingsError, integer, number
from arena.text import unknown_key

RATING_SETTINGS: tuple[Setting, ...] = (
    Setting("ratings.block_deals", "block_deals", integer(1, MAX_BLOCK_DEALS),
            "Duplicate deals per rating game: a TrueSkill game is a block of this many consecutive deals of one "
            "match, its bots placed by chips won over it."),
    Setting("ratings.draw_margin_mbb", "draw_margin_mbb", number(0.0),
            "Results of a rating game within this many mbb/hand of each other are a draw."),
    Setting("ratings.min_games", "min_games", integer(0),
            "Rating games a bot needs to be rated without the mark 'provisional'."),
)
RATING_KEYS = tuple(s.key.removeprefix("ratings.") for s in RATING_SETTINGS)


def rules_from_mapping(section: Mapping[str, Any], where: str, other_keys: Iterable[str] = (),
                       base: RatingRules | None = None) -> RatingRules:
    """The rules a ``[ratings]`` table gives over ``base``; ``other_keys`` are the caller's own (a league's
    ``version_sigma``), skipped here. An unknown key or a bad value is a ``SettingsError`` naming it."""
    if not isinstance(section, Mapping):
        raise SettingsError(f"{where}: ratings must be a table ([ratings])")
    allowed = {*RATING_KEYS, *other_keys}
    values: dict[str, Any] = {}
    for key, value in section.items():
        if key not in allowed:
            raise SettingsError(unknown_key(where, key, allowed, "ratings"))
        if key in RATING_KEYS:
            setting = RATING_SETTINGS[RATING_KEYS.index(key)]
            values[setting.attr] = setting.read(value, f"{where}: ratings.{key}")
    return rules_with(base or RatingRules(), values)


def rules_with(base: RatingRules, values: Mapping[str, Any]) -> RatingRules:
    """``base`` with some values changed (by attribute), or a ``SettingsError`` naming what is wrong."""
    given = {k: v for k, v in values.items() if v is not None}
    try:
        return RatingRules(block_deals=given.get("block_deals", base.block_deals),
                           draw_margin_mbb=given.get("draw_margin_mbb", base.draw_margin_mbb),
                           min_games=given.get("min_games", base.min_games), estimator=base.estimator)
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
