"""The secrets arena hands out (a seat's token, a league's admin token) never start with ``-``: one in 64 of
``secrets.token_urlsafe`` would, and given on a command line as ``--token VALUE`` such a token is read as an option
by argparse (the ACPC bridge's and the Python SDK's command lines), so its bot could not join."""

from __future__ import annotations

import argparse

import pytest

from arena.runner.remote_match import new_token


def test_tokens_never_start_with_a_dash_and_never_repeat() -> None:
    tokens = [new_token() for _ in range(5000)]
    assert not any(t.startswith("-") for t in tokens)
    assert len(set(tokens)) == len(tokens) and {len(t) for t in tokens} == {43}  # 32 bytes, URL-safe base64


def test_a_token_starting_with_a_dash_is_taken_for_an_option() -> None:
    """The control: what such a token did to an argparse command line."""
    parser = argparse.ArgumentParser(exit_on_error=False)
    parser.add_argument("--token")
    with pytest.raises((argparse.ArgumentError, SystemExit)):
        parser.parse_args(["--token", "-Xq3vZ9"])
    assert parser.parse_args(["--token", new_token()]).token
