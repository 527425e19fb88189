"""Fixtures of the league tests: headless Chromium, as the published site's tests find it."""

from tests.publish.test_browser import chromium  # noqa: F401  (a fixture)
