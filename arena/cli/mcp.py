"""``arena mcp``: an MCP server over stdio through which an LLM agent plays one seat (arena.adapters.mcp)."""

from __future__ import annotations

import click


@click.command("mcp")
@click.option("--address", envvar="ARENA_ADDRESS", required=True, help="The referee, HOST:PORT ($ARENA_ADDRESS).")
@click.option("--token", envvar="ARENA_TOKEN", default=None, help="The seat's token from arena serve ($ARENA_TOKEN).")
@click.option("--key", envvar="ARENA_KEY", default=None, help="A league bot's API key, not a token ($ARENA_KEY).")
@click.option("--name", default="mcp-agent", show_default=True, help="What the bot calls itself in its Join.")
@click.option("--tls-ca", envvar="ARENA_TLS_CA", default=None, help="Root certificate of a referee served with TLS.")
def mcp(address: str, token: str | None, key: str | None, name: str, tls_ca: str | None) -> None:
    """Serve the tools observe and act over stdio (the Model Context Protocol) to an LLM agent, which plays the
    seat of TOKEN (or the league bot of KEY) at the referee at ADDRESS. Start it from the agent's MCP client
    configuration; stdout carries the protocol, stderr the log."""
    if (token is None) == (key is None):
        raise click.UsageError("give exactly one of --token (a match's seat, from arena serve) and --key (a league's "
                               "bot)")
    try:
        from arena.adapters.mcp.server import serve
    except ImportError as exc:
        raise click.ClickException(f"arena mcp needs the optional extra: pip install 'arena[mcp]' ({exc})") from None
    serve(address, token=token, key=key, name=name, tls_ca=tls_ca)
