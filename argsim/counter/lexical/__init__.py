"""Lexical counter-argument retrieval (Wachsmuth et al. 2018; section 3 and Table 1 of the bipolar-encoder paper):
the 20 features x1..x20, their exact bound-and-prune ranking, the single-score baselines and Simple-SD."""
