"""Layer 3: deals. A match seed gives every hand's deck; duplicate schedules replay each deck in every seat order."""

from arena.deals.schedule import DealPlan, cross_table_plan, duplicate_plan, duplicate_plan_length, rotations
from arena.deals.seed import commitment, deck_for_hand, derive_seed, new_seed, policy_draw, verify_commitment

__all__ = [
    "DealPlan",
    "commitment",
    "cross_table_plan",
    "deck_for_hand",
    "derive_seed",
    "duplicate_plan",
    "duplicate_plan_length",
    "new_seed",
    "policy_draw",
    "rotations",
    "verify_commitment",
]
