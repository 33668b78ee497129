"""Lexical counter-argument retrieval (Wachsmuth et al. 2018; section 3 and Table 1 of the bipolar-encoder paper):
tokens and stop words (`stopwords`), bag-of-words representations, TF cosine and BM25 (`textrep`), word vectors
(`wordvecs`), Word Mover's Distance with its bounds (`wmd`), the 20 features x1..x20 (`features`, cached by
`feature_cache`), exact bound-and-prune ranking by a linear score (`prune`), the single-score baselines
(`baselines`) and Simple-SD (`simplesd`)."""
