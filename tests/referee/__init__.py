"""Tests of the referee."""
