"""Best counter-argument retrieval (the bipolar-encoder paper and Wachsmuth et al. 2018): `core`, `lexical`, `ltr`
and `neural` (docs/ARCHITECTURE.md, "Inside a method package"); rankers register with `core.registry` on import."""
