"""Outputs are made before any bot starts, so that every sandbox covers them (issue 24, attack 2).

The attack: ``--phh-dir`` inside a bot's own folder was made at the first finished hand, after the sandboxes were
built, so no sandbox covered it, and the other rotation read the finished mirror of the deal it was playing. The
control plays that set-up below the command line (a PHH sink writing into the bot's folder, nothing made before):
the cheat finds mirror hands. ``arena match`` makes ``--phh-dir`` and ``--log-dir`` before any bot starts: the same
cheat then finds an empty folder (``--db`` inside a bot's folder: tests/integrity/test_secrets.py). An output that
*is* a folder a bot reads is refused by every command, naming the flag and the folder: covering it would hide the
bot's own files.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.records.phh_sink import PhhDirSink
from arena.referee import MatchSpec, MatchStatus
from arena.runner.bots import BotSpec
from arena.runner.remote_match import run_local_match
from arena.runner.sandbox import arena_folders
from tests.integrity.harness import CALLER, REPO, copy_cheat, reports

pytestmark = pytest.mark.timeout(120)


def test_a_phh_folder_inside_a_bots_folder_shows_it_the_mirror_hands(tmp_path: Path) -> None:
    """The control: nothing refuses the folder below the command line, and the reader finds finished mirrors."""
    reader = copy_cheat("phh_reader", tmp_path / "bot")
    spec = MatchSpec("phh", "phh-seed", 60)
    bots = [BotSpec("caller", CALLER), BotSpec("reader", f"python {reader} --folder phh")]
    result = asyncio.run(run_local_match(spec, bots, [PhhDirSink(reader.parent / "phh")], log_dir=tmp_path / "logs",
                                         cwd=REPO))
    assert result.reason == MatchStatus.COMPLETED
    found = reports(tmp_path / "logs", "PHH-READER", "reader")
    assert len(found) == 2 and any(r["files"] for r in found), found
    print(found)
    assert sum(r["mirrors"] for r in found) > 0, found  # it saw the other seat's cards before it acted


@pytest.fixture()
def reader_bot(tmp_path: Path) -> Path:
    return copy_cheat("phh_reader", tmp_path / "bot").parent


@pytest.mark.parametrize("flag", ["--phh-dir", "--log-dir"])
def test_an_output_folder_inside_a_bots_folder_is_made_first_and_covered(reader_bot: Path, tmp_path: Path,
                                                                        flag: str) -> None:
    """The defence: the same reader, the same folder inside its own, given to ``arena match``."""
    out = reader_bot / "out"
    logs = out if flag == "--log-dir" else tmp_path / "logs"
    extra = ["--phh-dir", str(out)] if flag == "--phh-dir" else ["--phh-dir", str(out / "phh")]
    result = CliRunner().invoke(main, [
        "match", "--hands", "40", "--log-dir", str(logs), *extra, "--bot", f"caller={CALLER}",
        "--bot", f"reader=python {reader_bot / 'phh_reader.py'} --folder out"])
    assert result.exit_code == 0, result.output
    assert any(out.rglob("*.phh"))  # the hands were written there, on the host
    found = reports(logs, "PHH-READER", "reader")
    assert len(found) == 2 and all(r["files"] == 0 and r["mirrors"] == 0 for r in found), found


def _refused(args: list[str], flag: str, folder: Path) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert flag in text and f"{folder} is " in text, text


@pytest.mark.parametrize("flag", ["--phh-dir", "--log-dir"])
def test_match_refuses_an_output_folder_that_is_a_bots_own_folder(reader_bot: Path, flag: str) -> None:
    _refused(["match", "--hands", "2", flag, str(reader_bot), "--bot", f"caller={CALLER}",
              "--bot", f"reader=python {reader_bot / 'phh_reader.py'} --folder out"], flag, reader_bot)


def test_match_refuses_an_output_folder_that_is_a_bound_folder_or_arenas_package(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    bots = ["--bot", f"a={CALLER}", "--bot", f"b={CALLER}"]
    _refused(["match", "--sandbox-bind", str(shared), "--phh-dir", str(shared), *bots], "--phh-dir", shared)
    package, sdk = arena_folders()[:2]
    _refused(["match", "--log-dir", str(package), *bots], "--log-dir", package)
    assert sdk.name == "arena_sdk"  # the bots' SDK, bound for every bot, is no place for what they must not read
    _refused(["match", "--phh-dir", str(sdk), *bots], "--phh-dir", sdk)


def test_tournament_compare_and_demo_refuse_a_log_folder_that_is_a_bots_own_folder(reader_bot: Path,
                                                                                  tmp_path: Path) -> None:
    config = tmp_path / "cup.toml"
    config.write_text(f'name = "cup"\nhands = 2\n[[bots]]\nname = "caller"\ncommand = "{CALLER}"\n'
                      f'[[bots]]\nname = "reader"\ncommand = "python bot/phh_reader.py --folder x"\n')
    _refused(["tournament", str(config), "--db", str(tmp_path / "cup.db"), "--log-dir", str(reader_bot)],
             "--log-dir", reader_bot)
    assert not (tmp_path / "cup.db").exists()  # refused before anything was made
    _refused(["compare", "--hands", "2", "--db", str(tmp_path / "c.db"), "--log-dir", str(reader_bot),
              "--candidate", f"caller={CALLER}",
              "--baseline", f"reader=python {reader_bot / 'phh_reader.py'} --folder x"], "--log-dir", reader_bot)
    assert not (tmp_path / "c.db").exists()
    _refused(["demo", "--out", str(REPO / "sample_bots" / "python")], "--out", REPO / "sample_bots" / "python")
