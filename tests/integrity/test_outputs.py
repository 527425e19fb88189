"""Outputs inside a folder a bot can read are refused before any bot starts (issue 24, attack 2).

The attack: ``--phh-dir`` inside a bot's own folder was made at the first finished hand, after the sandboxes were
built, so no sandbox covered it, and the other rotation read the finished mirror of the deal it was playing. The
control plays that set-up below the command line (the runner writes wherever it is told) and the cheat finds mirror
hands; every command refuses each of its output flags there, naming the flag and the folder, and makes nothing.
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


def _refused(args: list[str], flag: str, inside: Path, made: Path) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert flag in text and f"lies inside {inside}" in text, text
    assert not made.exists()  # refused before anything was made, and before any bot started


@pytest.mark.parametrize("flag", ["--phh-dir", "--log-dir", "--db"])
def test_match_refuses_each_output_inside_a_bots_own_folder(reader_bot: Path, flag: str) -> None:
    out = reader_bot / ("arena.db" if flag == "--db" else "out")
    _refused(["match", "--hands", "2", flag, str(out), "--bot", f"caller={CALLER}",
              "--bot", f"reader=python {reader_bot / 'phh_reader.py'} --folder out"], flag, reader_bot, out)


def test_match_refuses_an_output_inside_a_bound_folder_or_arenas_package(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    bots = ["--bot", f"a={CALLER}", "--bot", f"b={CALLER}"]
    _refused(["match", "--sandbox-bind", str(shared), "--phh-dir", str(shared / "phh"), *bots], "--phh-dir", shared,
             shared / "phh")
    package = arena_folders()[0]
    _refused(["match", "--db", str(package / "arena-test-refused.db"), *bots], "--db", package,
             package / "arena-test-refused.db")


@pytest.mark.parametrize("flag", ["--log-dir", "--db"])
def test_tournament_and_compare_refuse_their_outputs_inside_a_bots_own_folder(reader_bot: Path, tmp_path: Path,
                                                                            flag: str) -> None:
    out = reader_bot / ("arena.db" if flag == "--db" else "logs")
    config = tmp_path / "cup.toml"
    config.write_text(f'name = "cup"\nhands = 2\n[[bots]]\nname = "caller"\ncommand = "{CALLER}"\n'
                      f'[[bots]]\nname = "reader"\ncommand = "python bot/phh_reader.py --folder x"\n')
    _refused(["tournament", str(config), flag, str(out)], flag, reader_bot, out)
    _refused(["compare", "--hands", "2", flag, str(out), "--candidate", f"caller={CALLER}",
              "--baseline", f"reader=python {reader_bot / 'phh_reader.py'} --folder x"], flag, reader_bot, out)


def test_demo_refuses_an_out_folder_inside_a_sample_bots_folder() -> None:
    folder = REPO / "sample_bots" / "python"
    _refused(["demo", "--out", str(folder / "demo-out")], "--out", folder, folder / "demo-out")


def test_outputs_outside_the_bots_folders_are_made_before_the_bots_start(reader_bot: Path, tmp_path: Path) -> None:
    """The defence lets the ordinary case through: the folders exist before any bot starts, and the match plays."""
    phh, logs = tmp_path / "out" / "phh", tmp_path / "out" / "logs"
    result = CliRunner().invoke(main, [
        "match", "--hands", "4", "--phh-dir", str(phh), "--log-dir", str(logs), "--db", str(tmp_path / "o" / "a.db"),
        "--bot", f"caller={CALLER}", "--bot", f"reader=python {reader_bot / 'phh_reader.py'} --folder ../out/phh"])
    assert result.exit_code == 0, result.output
    assert phh.is_dir() and logs.is_dir() and (tmp_path / "o" / "a.db").is_file()
    found = reports(logs, "PHH-READER", "reader")
    assert len(found) == 2 and all(r["files"] == 0 for r in found), found  # outside its sandbox: never seen
