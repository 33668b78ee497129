"""What every counter-argument ranker shares: candidate pools (`pools`), the ranker registry (`registry`), one
ranking run over counterargs-18 or a user's file (`run`, `userdata`), ranking records and their scores
(`evaluation`). Imports nothing from `lexical`, `ltr` or `neural` at module level."""
