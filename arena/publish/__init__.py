"""The published site: a static leaderboard (HTML, JSON and SVG plots) built from the database, and one hand viewer
that shows any hand from its match's compact data.

It opens from the file system and from any static host: every link is relative, and nothing is fetched from
elsewhere (no CDN, no web fonts); the one script is the viewer's own, and the data it reads are the site's.
"""

from arena.publish.site import PublishResult, publish

__all__ = ["PublishResult", "publish"]
