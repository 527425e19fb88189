"""Untrusted text (arena.text): escaped for terminals, slugged for file names, capped in length."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.text import (
    FILE_NAME_BYTES,
    TextLimitError,
    check_length,
    file_name,
    for_terminal,
    path_inside,
    slug,
    visible_controls,
)

HOSTILE = (
    "\x1b[31mred\x1b[0m",  # ANSI colour
    "\x1b]0;pwned\x07title",  # OSC: sets the terminal's title
    "ok\nverify ok   forged line",  # a forged line
    "\u202eevil\u202c",  # right-to-left override
    "\x9b31m",  # C1 control sequence introducer
    "nul\x00byte",
)


@pytest.mark.parametrize("text", HOSTILE)
def test_no_control_or_direction_character_reaches_a_terminal(text: str) -> None:
    shown = for_terminal(text)
    assert all(c.isprintable() and c not in "\u202e\u202c" for c in shown), shown
    assert "\\" in shown  # shown as an escape, not dropped


def test_escapes_are_readable_and_cut_with_an_ellipsis() -> None:
    assert for_terminal("\x1b[31m") == "\\x1b[31m"
    assert for_terminal("a\u202eb") == "a\\u202eb"
    assert for_terminal("x" * 100, 10) == "x" * 9 + "…"
    assert for_terminal("plain name@1.0") == "plain name@1.0"
    assert visible_controls("two\nlines\u202e") == "two\nlines\\u202e"  # pages keep their line breaks


@pytest.mark.parametrize("name", ["../../etc/passwd", "/etc/passwd", "a\x00b", "x" * 300, "..", ".", "", "CON",
                                  "Équipe Été", "a/b", "a\\b"])
def test_a_slug_is_one_safe_component(name: str) -> None:
    component = slug(name)
    assert component and component not in (".", "..") and not component.startswith(".")
    assert "/" not in component and "\\" not in component and "\x00" not in component
    assert len(component.encode()) <= 64
    assert component == slug(name)  # stable


def test_slugs_keep_different_names_apart() -> None:
    names = ["a b", "a-b", "A-B", "../a b", "a/b"]
    assert len({slug(n) for n in names}) == len(names)
    assert slug("equity") == "equity" and slug("caller-2") == "caller-2"  # safe names are themselves


def test_file_names_stay_under_the_file_systems_limit_and_unique() -> None:
    long_match = "cup/" + "-".join("b" * 64 for _ in range(8))
    first = file_name(long_match, "r0", "x" * 64, suffix=".log")
    second = file_name(long_match, "r1", "x" * 64, suffix=".log")
    assert len(first.encode()) <= FILE_NAME_BYTES and first.endswith(".log") and first != second


@pytest.mark.parametrize("match_id", ["../../x", "/tmp/x", "a/../../b", "m\x00n", "y" * 300])
def test_nothing_is_written_outside_the_folder_given(tmp_path: Path, match_id: str) -> None:
    folder = tmp_path / "out"
    path = path_inside(folder, *match_id.split("/"), "000001", suffix=".phh")
    assert folder.resolve() in path.resolve().parents
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x")  # the file system takes it


def test_length_caps_name_the_limit() -> None:
    assert check_length("x" * 64, "name") == "x" * 64
    with pytest.raises(TextLimitError, match="a bot's version is at most 64 characters, got 10240"):
        check_length("v" * 10240, "version")
    with pytest.raises(TextLimitError, match="language is at most 32"):
        check_length("l" * 33, "language")


def test_for_terminal_passes_printable_text_as_it_is_and_escapes_the_rest_character_by_character() -> None:
    import random

    from arena.text import _escape, _hidden

    rng = random.Random(27)
    alphabet = [chr(c) for c in (*range(0, 0x250), *range(0x2000, 0x2070), 0x061C, 0xFEFF, 0x1F600)]
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(12)))
        assert for_terminal(text) == "".join(_escape(c) if _hidden(c) else c for c in text)
