"""What every counter-argument ranker shares (pools, the ranker registry, one ranking run, ranking records and their
scores); imports nothing from `lexical`, `ltr` or `neural` at module level."""
