"""Test suite of the arena."""
