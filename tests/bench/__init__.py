"""Benchmarks (run by hand, never asserted in CI)."""
