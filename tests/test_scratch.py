"""arena.scratch: a scratch folder lives as long as its process, however the process ends. Real processes, killed
with SIGKILL, and a real temp folder (each test's own, as ``TMPDIR``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from arena import scratch

PY = sys.executable


def owner(folder: Path, tmp: Path) -> subprocess.Popen[str]:
    """A process that makes a scratch folder named ``folder``'s prefix in ``tmp``, says its path, and waits."""
    code = textwrap.dedent(f"""
        import sys, time
        from arena import scratch
        print(scratch.scratch_folder({folder.name!r}), flush=True)
        time.sleep(120)
    """)
    return subprocess.Popen([PY, "-c", code], env={**os.environ, "TMPDIR": str(tmp)}, stdout=subprocess.PIPE,
                            text=True)


def made_by(process: subprocess.Popen[str]) -> Path:
    assert process.stdout is not None
    return Path(process.stdout.readline().strip())


@pytest.fixture
def tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)  # read TMPDIR again
    return tmp_path


def test_a_killed_process_folder_is_swept_and_a_live_one_is_not(tmp: Path) -> None:
    killed, alive = owner(Path("arena-killed-"), tmp), owner(Path("arena-alive-"), tmp)
    try:
        dead_folder, live_folder = made_by(killed), made_by(alive)
        (dead_folder / "referee.sock").write_text("")
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait()
        assert dead_folder.is_dir() and live_folder.is_dir()
        assert scratch.sweep() == [dead_folder]
        assert not dead_folder.exists() and live_folder.is_dir()
        assert scratch.sweep() == []  # the live one stays for as long as its process lives
    finally:
        for process in (killed, alive):
            process.kill()
            process.wait()
    assert scratch.sweep() == [live_folder]


def test_the_first_folder_a_process_makes_sweeps_and_its_own_are_kept_until_removed(tmp: Path) -> None:
    killed = owner(Path("arena-bot-"), tmp)
    dead_folder = made_by(killed)
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait()
    code = textwrap.dedent("""
        from arena import scratch
        with scratch.scratch("arena-logs-") as logs:
            mine = scratch.scratch_folder("arena-referee-")
            assert scratch.sweep() == [] and logs.is_dir() and mine.is_dir()
        assert not logs.exists()
        scratch.remove(mine)
        assert not mine.exists()
    """)
    subprocess.run([PY, "-c", code], env={**os.environ, "TMPDIR": str(tmp)}, check=True)
    assert not dead_folder.exists()
    assert list(tmp.iterdir()) == []


@pytest.mark.timeout(60)
def test_a_sweep_never_removes_a_folder_being_made(tmp: Path) -> None:
    """A process that starts (and sweeps) while another makes a folder: the owner file gets its name only once it is
    locked. Here the lock is taken 20 ms late, each time, while another process sweeps without pause."""
    maker = textwrap.dedent("""
        import time
        from arena import scratch
        late = scratch.fcntl.flock
        def flock(fd, op):
            time.sleep(0.02)
            return late(fd, op)
        scratch.fcntl.flock = flock
        lost = 0
        for _ in range(40):
            folder = scratch.scratch_folder("arena-live-")
            lost += not (folder / scratch.OWNER).is_file()
            scratch.remove(folder)
        print(lost)
    """)
    sweeper = textwrap.dedent("""
        import time
        from arena import scratch
        end = time.time() + 30
        swept = []
        while time.time() < end and not swept:
            swept = scratch.sweep()
        print(len(swept), flush=True)  # only when it removed a folder, or after 30 s
    """)
    env = {**os.environ, "TMPDIR": str(tmp)}
    sweeping = subprocess.Popen([PY, "-c", sweeper], env=env, stdout=subprocess.PIPE, text=True)
    try:
        made = subprocess.run([PY, "-c", maker], env=env, capture_output=True, text=True, check=True, timeout=50)
        assert made.stdout.strip() == "0", "a folder was removed while it was being made"
        assert sweeping.poll() is None, "the sweep removed a live folder"
    finally:
        sweeping.kill()
        sweeping.wait()


def test_a_fifo_in_place_of_the_owner_file_is_not_waited_on(tmp: Path) -> None:
    planted = tmp / "arena-planted"
    planted.mkdir()
    os.mkfifo(planted / scratch.OWNER)
    assert scratch.sweep() == []
    assert planted.is_dir()


def test_a_forked_child_never_removes_its_parents_folder(tmp: Path) -> None:
    code = textwrap.dedent("""
        import os
        from arena import scratch
        folder = scratch.scratch_folder("arena-parent-")
        child = os.fork()
        if child == 0:
            scratch.remove(folder)  # the parent's: only the child's copy of the lock is given up
            os._exit(0)
        os.waitpid(child, 0)
        assert folder.is_dir() and scratch.sweep() == [], "the parent's folder was removed by its child"
        scratch.remove(folder)
        assert not folder.exists()
    """)
    subprocess.run([PY, "-c", code], env={**os.environ, "TMPDIR": str(tmp)}, check=True)


def test_folders_that_are_not_arenas_own_are_left_alone(tmp: Path) -> None:
    plain = tmp / "arena-plain"  # no owner file: another program's, or one being made this instant
    plain.mkdir()
    other = tmp / "other-folder"
    other.mkdir()
    (other / scratch.OWNER).write_text("")
    link = tmp / "arena-link"
    link.symlink_to(other)
    assert scratch.sweep() == []
    assert plain.is_dir() and other.is_dir() and link.is_symlink()


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to make a folder owned by another user")
def test_another_users_folder_is_left_alone(tmp: Path) -> None:
    theirs = tmp / "arena-theirs"
    theirs.mkdir()
    (theirs / scratch.OWNER).write_text("")
    os.chown(theirs, 65534, 65534)
    assert scratch.sweep() == []
    assert theirs.is_dir()


def test_a_prefix_must_be_arenas() -> None:
    with pytest.raises(ValueError, match="arena-"):
        scratch.scratch_folder("tmp-")


def test_a_folder_whose_owner_file_cannot_be_made_is_not_left_behind(tmp: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    def full(*args: object, **kwargs: object) -> int:
        raise OSError(28, "No space left on device")

    scratch.sweep()
    monkeypatch.setattr(scratch.os, "rename", full)  # (not os.open: rmtree opens the folder to remove it)
    with pytest.raises(OSError, match="No space"):
        scratch.scratch_folder("arena-full-")
    assert list(tmp.iterdir()) == []
