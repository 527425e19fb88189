"""Tests of deals."""
