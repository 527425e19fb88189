"""Layer 8: ratings and statistics, pure functions from recorded results to numbers."""
