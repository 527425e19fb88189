"""A hosted bot's archive (arena.runner.archive): what climbs out of the bot's folder is refused with a reason, each
refusal beside a positive control (Python's tarfile, told to trust the archive, writes outside the folder), a bomb
stops at the cap, the modes are the store's own, and the store keeps an archive whole or not at all."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from arena.runner.archive import ArchiveRefused, SubmissionStore, digest, members, pack, unpack

REPO = Path(__file__).resolve().parents[2]


def archive(*entries: tuple[str, str, bytes | str]) -> bytes:
    """A tar.gz of (name, kind, content): kind ``file`` (content: bytes), ``dir``, ``symlink`` or ``hardlink``
    (content: the link's target)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, kind, content in entries:
            info = tarfile.TarInfo(name)
            if kind == "file":
                assert isinstance(content, bytes)
                info.size = len(content)
                info.mode = 0o644
                tar.addfile(info, io.BytesIO(content))
                continue
            if kind == "dir":
                info.type = tarfile.DIRTYPE
            else:
                info.type = tarfile.SYMTYPE if kind == "symlink" else tarfile.LNKTYPE
                info.linkname = str(content)
            tar.addfile(info)
    return buffer.getvalue()


def trusting_unpack(data: bytes, dest: Path) -> None:
    """The positive control: what a host that trusted the archive would do."""
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(dest, filter="fully_trusted")


CLIMBERS = {
    "dot-dot": (archive(("bot.py", "file", b"pass\n"), ("../escaped.txt", "file", b"out")),
                "a path with '..', which would climb out"),
    "absolute": (archive(("bot.py", "file", b"pass\n"), ("/{outside}/escaped.txt", "file", b"out")),
                 "an absolute path, which would climb out"),
    "symlink": (archive(("bot.py", "file", b"pass\n"), ("link", "symlink", "{outside}"),
                        ("link/escaped.txt", "file", b"out")),
                "a symbolic link (to"),
    "hardlink": (archive(("bot.py", "file", b"pass\n"), ("stolen", "hardlink", "{outside}/secret.txt")),
                 "a hard link (to"),
}


@pytest.mark.parametrize("kind", sorted(CLIMBERS))
def test_an_archive_that_climbs_out_is_refused_and_the_control_shows_it_would_escape(kind: str,
                                                                                      tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("the host's")
    template, reason = CLIMBERS[kind]
    data = template.replace(b"{outside}", b"") if kind == "dot-dot" else _aimed(template, outside)
    with pytest.raises(ArchiveRefused, match=reason.replace("(", r"\(")):
        members(data)
    with pytest.raises(ArchiveRefused):
        unpack(data, tmp_path / "bot")
    assert not (tmp_path / "bot").exists() and not list(tmp_path.glob(".unpacking-*"))
    control = tmp_path / "control" / "bot"
    control.mkdir(parents=True)
    trusting_unpack(data, control)  # the attack works when nothing checks the members
    if kind == "hardlink":
        assert (control / "stolen").read_text() == "the host's"
    else:
        escaped = (control.parent / "escaped.txt") if kind == "dot-dot" else outside / "escaped.txt"
        assert escaped.read_bytes() == b"out"


def _aimed(template: bytes, outside: Path) -> bytes:
    """The template archive with ``{outside}`` pointing at a real folder (rebuilt: names sit in tar headers)."""
    with tarfile.open(fileobj=io.BytesIO(template)) as tar:
        entries: list[tuple[str, str, bytes | str]] = []
        for member in tar.getmembers():
            name = member.name.replace("{outside}", str(outside).lstrip("/"))
            if member.name.startswith("/"):
                name = "/" + name.lstrip("/")
            if member.issym() or member.islnk():
                entries.append((name, "symlink" if member.issym() else "hardlink",
                                member.linkname.replace("{outside}", str(outside))))
            else:
                source = tar.extractfile(member)
                entries.append((name, "file", source.read() if source else b""))
    return archive(*entries)


def test_a_bomb_stops_at_the_cap_and_devices_and_empty_archives_are_refused(tmp_path: Path) -> None:
    zeros = archive(*((f"zeros{i}", "file", bytes(1024 * 1024)) for i in range(8)))
    assert len(zeros) < 100_000  # 8 MB unpacked from a small archive
    with pytest.raises(ArchiveRefused, match=r"unpacks to more than 4 MB \(at member 'zeros4'\)"):
        members(zeros, max_unpacked=4 * 1024 * 1024)
    assert len(members(zeros, max_unpacked=8 * 1024 * 1024)) == 8  # control: under the cap it is whole
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        fifo = tarfile.TarInfo("pipe")
        fifo.type = tarfile.FIFOTYPE
        tar.addfile(fifo)
    with pytest.raises(ArchiveRefused, match="neither a file nor a folder"):
        members(buffer.getvalue())
    with pytest.raises(ArchiveRefused, match="not a tar archive") as refused:
        members(b"just some bytes")
    assert "method gz" not in str(refused.value) and str(refused.value).endswith(": refused")  # in words
    with pytest.raises(ArchiveRefused, match="empty"):
        members(archive())


def test_unpacked_files_are_readable_by_anyone_and_never_set_uid(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, mode in (("run.sh", 0o4700), ("data/model.bin", 0o600)):
            info = tarfile.TarInfo(name)
            info.size, info.mode = 2, mode
            tar.addfile(info, io.BytesIO(b"ok"))
    folder = unpack(buffer.getvalue(), tmp_path / "bot")
    assert oct((folder / "run.sh").stat().st_mode & 0o7777) == "0o755"
    assert oct((folder / "data" / "model.bin").stat().st_mode & 0o7777) == "0o644"
    assert oct((folder / "data").stat().st_mode & 0o7777) == "0o755"


def test_a_folder_packs_to_the_same_bytes_without_caches(tmp_path: Path) -> None:
    bot = tmp_path / "bot"
    (bot / "__pycache__").mkdir(parents=True)
    (bot / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"cache")
    (bot / "bot.py").write_text("print('hi')\n")
    first = pack(bot)
    time.sleep(1.1)
    (bot / "bot.py").touch()  # a new time stamp: the same content
    assert pack(bot) == first
    assert [str(p) for _, p in members(first)] == ["bot.py"]


def test_the_store_keeps_an_archive_whole_or_not_at_all(tmp_path: Path) -> None:
    """A writer killed (SIGKILL) while it stores archive after archive leaves every archive under its name whole
    (its bytes are its hash), the one cut off only as a partial file beside them; the store reads on."""
    store = SubmissionStore(tmp_path / "league.db.submissions")
    kept = pack(REPO / "sample_bots" / "python")
    sha = store.put(kept)
    assert store.read(sha) == kept and digest(kept) == sha
    source = tmp_path / "big.bin"
    source.write_bytes(os.urandom(32 * 1024 * 1024))
    script = ("import sys\nfrom pathlib import Path\nfrom arena.runner.archive import SubmissionStore\n"
              "data = Path(sys.argv[2]).read_bytes()\nstore = SubmissionStore(Path(sys.argv[1]))\n"
              "for i in range(1000):\n    store.put(data + i.to_bytes(8))\n    print(i, flush=True)\n")
    writer = subprocess.Popen([sys.executable, "-c", script, str(store.root), str(source)], stdout=subprocess.PIPE,
                              text=True)
    assert writer.stdout is not None and writer.stdout.readline().strip() == "0"  # one stored
    deadline = time.monotonic() + 10
    while not list(store.archives.glob(".*.partial")) and time.monotonic() < deadline:
        time.sleep(0.001)  # the next one being written
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    stored = sorted(store.archives.glob("*.tar"))
    assert len(stored) >= 2
    for path in stored:
        assert digest(store.read(path.stem)) == path.stem  # whole
    assert list(store.archives.glob(".*.partial")), "the writer was not killed in the middle of a write"
    folder = store.folder(sha)
    assert (folder / "calling_station.py").is_file() and store.folder(sha) == folder
