"""Layer 7: records of hands: PHH hand-history files (and, with the referee, the SQLite database)."""
