"""Tests of layer 1: cards and the hand evaluator."""
