"""Tests of hand-history records."""
