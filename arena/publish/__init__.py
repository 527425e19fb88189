"""The published site: a static leaderboard (HTML, JSON and SVG plots) built from the database.

It opens from the file system and from any static host: every link is relative, and nothing is fetched from
elsewhere (no CDN, no web fonts, no scripts).
"""

from arena.publish.site import PublishResult, publish

__all__ = ["PublishResult", "publish"]
