"""The league file: the shared match settings plus the league's own keys, every mistake named."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.engine import Structure
from arena.league.settings import LeagueConfig, LeagueConfigError


def test_a_full_league_file(tmp_path: Path) -> None:
    path = tmp_path / "league.toml"
    path.write_text("""
name = "night"
grpc = "0.0.0.0:50051"
http = "off"
seats = 3
matches_at_once = 8
matches_per_bot = 2
hands = 300
structure = "pl"
stakes = "10/20"
[clock]
per_action_ms = 500
[matchmaking]
window = 5
same_owner = true
[ratings]
version_sigma = 1.5
[tls]
cert = "c.pem"
key = "k.pem"
""")
    config = LeagueConfig.from_toml(path)
    assert config.name == "night" and config.grpc == ("0.0.0.0", 50051) and config.http is None
    assert (config.seats, config.matches_at_once, config.matches_per_bot) == (3, 8, 2)
    assert config.match.hands == 300 and config.match.structure is Structure.POT_LIMIT
    assert config.match.clock().per_action_ms == 500 and not config.match.duplicate
    assert config.matchmaking.window == 5.0 and config.matchmaking.same_owner and config.version_sigma == 1.5
    assert config.tls_cert == tmp_path / "c.pem" and config.tls_key == tmp_path / "k.pem"


@pytest.mark.parametrize("text, message", [
    ('grpc = "x"', "needs a name"),
    ('name = "n"\nduplicate = true', "D2"),
    ('name = "n"\nseed = "s"', "fresh secret seed"),
    ('name = "n"\n[[bots]]\nname = "a"', "arena bots add"),
    ('name = "n"\ngrpc = "nowhere"', 'grpc = .nowhere.: expected "HOST:PORT"'),
    ('name = "n"\nmatches_at_once = 0', "matches_at_once = 0"),
    ('name = "n"\nseats = 30', "R2.1"),
    ('name = "n"\nhandz = 3', "did you mean hands"),
    ('name = "n"\n[matchmaking]\nwindw = 3', "'matchmaking.windw'.*did you mean window"),
    ('name = "n"\n[matchmaking]\nwindow = -1', "matchmaking.window = -1"),
    ('name = "n"\n[tls]\ncert = "c"', "both cert and key"),
    ('name = "n"\nstakes = "100/50"', "R3"),
    ('name = "n"\ngame = "freezeout"', "league plays the reset game"),
    ('name = "n"\n[freezeout]\nlevels = ["20/10"]', r"freezeout\.levels.*R11\.4"),
    ("name = ", "not valid TOML"),
])
def test_mistakes_name_the_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "league.toml"
    path.write_text(text)
    with pytest.raises(LeagueConfigError, match=message):
        LeagueConfig.from_toml(path)
