"""ACPC game definitions: the four in common use map onto the arena's table and back; what the arena cannot play is
refused naming the file's line; a table no ACPC game can express is refused with the reason."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arena.adapters.acpc.gamedef import INT32_MAX, AcpcGameError, Betting, game_of, parse_game, read_game, table_of
from arena.engine import AnteMode, Structure, TableConfig

GAMES = Path(__file__).resolve().parent / "games"
NL2 = (GAMES / "holdem.nolimit.2p.reverse_blinds.game").read_text()


def test_the_four_common_games_map_onto_the_arena_and_back() -> None:
    expected = {
        "holdem.nolimit.2p.reverse_blinds.game": (2, Structure.NO_LIMIT, 50, 100, 20000, 0, 0),
        "holdem.limit.2p.reverse_blinds.game": (2, Structure.FIXED_LIMIT, 5, 10, INT32_MAX, 10, 20),
        "holdem.nolimit.3p.game": (3, Structure.NO_LIMIT, 50, 100, 20000, 0, 0),
        "holdem.limit.3p.game": (3, Structure.FIXED_LIMIT, 5, 10, INT32_MAX, 10, 20),
    }
    for name, want in expected.items():
        game = read_game(GAMES / name)
        table = table_of(game)
        assert (table.num_players, table.structure, table.small_blind, table.big_blind, table.stack,
                table.small_bet, table.big_bet) == want, name
        if table.structure is Structure.FIXED_LIMIT:
            assert table.raise_cap == 4  # maxRaises 3 4 4 4: the big blind is the pre-flop bet (R7.6)
        assert game_of(table.config(), table.num_players, table.stack) == game  # and back, line for line
        assert parse_game(game.text()) == game


def test_keys_are_case_insensitive_comments_and_blank_lines_skipped() -> None:
    text = "# heads-up\n\ngamedef\nNOLIMIT\nNUMPLAYERS 2\nnumrounds=4\n" + NL2.split("numRounds = 4\n", 1)[1]
    game = parse_game(text)
    assert game.betting is Betting.NO_LIMIT and game.num_players == 2 and table_of(game).stack == 20000


@pytest.mark.parametrize(("old", "new", "line", "words"), [
    ("numRanks = 13", "numRanks = 6", 9, "Texas Hold'em (13 ranks)"),
    ("numHoleCards = 2", "numHoleCards = 3", 10, "Texas Hold'em (2 hole cards)"),
    ("numBoardCards = 0 3 1 1", "numBoardCards = 0 3 1 0", 11, "Texas Hold'em (0 3 1 1)"),
    ("numRounds = 4", "numRounds = 3", 4, "Texas Hold'em (4 rounds)"),
    ("blind = 100 50", "blind = 50 100", 6, "reverse blinds"),
    ("firstPlayer = 2 1 1 1", "firstPlayer = 1 1 1 1", 7, "order of play is 2 1 1 1"),
    ("stack = 20000 20000", "stack = 20000 10000", 5, "same stack"),
    ("numSuits = 4", "numSuits = 2", 8, "4 suits"),
])
def test_what_the_arena_cannot_play_is_refused_naming_the_line(old: str, new: str, line: int, words: str) -> None:
    assert old in NL2
    game = parse_game(NL2.replace(old, new), "mine.game")
    with pytest.raises(AcpcGameError, match=rf"^mine\.game:{line}: .*{re.escape(words)}"):
        table_of(game)


def test_limit_sizes_and_caps_must_be_the_arenas() -> None:
    limit = (GAMES / "holdem.limit.2p.reverse_blinds.game").read_text()
    with pytest.raises(AcpcGameError, match=r"x:8: maxRaises = 4 4 4 4: .*N-1 N N N"):
        table_of(parse_game(limit.replace("maxRaises = 3 4 4 4", "maxRaises = 4 4 4 4"), "x"))
    with pytest.raises(AcpcGameError, match=r"^x: maxRaises = 255 255 255 255"):
        table_of(parse_game(limit.replace("maxRaises = 3 4 4 4\n", ""), "x"))  # no cap: the arena always caps
    with pytest.raises(AcpcGameError, match=r"x:6: raiseSize = 10 20 20 20"):
        table_of(parse_game(limit.replace("raiseSize = 10 10 20 20", "raiseSize = 10 20 20 20"), "x"))


def test_unreadable_definitions_name_the_line() -> None:
    with pytest.raises(AcpcGameError, match=r"g:3: 'stacks please' is not a setting"):
        parse_game("GAMEDEF\nnolimit\nstacks please\n", "g")
    with pytest.raises(AcpcGameError, match=r"g:3: blind: expected whole numbers"):
        parse_game("GAMEDEF\nnolimit\nblind = 100 fifty\n", "g")
    with pytest.raises(AcpcGameError, match=r"g:6: blind: 1 numbers, need 2"):
        parse_game(NL2.replace("blind = 100 50", "blind = 100"), "g")
    with pytest.raises(AcpcGameError, match=r"numPlayers is missing"):
        parse_game("GAMEDEF\nlimit\nEND GAMEDEF\n", "g")
    with pytest.raises(AcpcGameError, match="cannot read"):
        read_game(GAMES / "no-such.game")


@pytest.mark.parametrize(("config", "players", "stack", "why"), [
    (TableConfig(ante=10, ante_mode=AnteMode.EACH), 2, 20000, "no antes"),
    (TableConfig(structure=Structure.POT_LIMIT), 2, 20000, "pot-limit"),
    (TableConfig(reveal_all=False), 2, 20000, "muck"),
    (TableConfig(structure=Structure.FIXED_LIMIT, uncapped_heads_up=True), 2, 20000, "uncapped"),
    (TableConfig(structure=Structure.FIXED_LIMIT, small_bet=200), 2, 20000, "raises pre-flop by the big blind"),
    (TableConfig(), 11, 20000, "2 to 10"),
    (TableConfig(), 2, 2**31, "stack"),
])
def test_a_table_no_acpc_game_expresses_is_refused_with_the_reason(config: TableConfig, players: int, stack: int,
                                                                   why: str) -> None:
    with pytest.raises(AcpcGameError, match=why):
        game_of(config, players, stack)
    assert game_of(TableConfig(), players if players <= 10 else 6, 20000)  # positive control: the usual table is
