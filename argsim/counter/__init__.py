"""Best counter-argument retrieval (the bipolar-encoder paper and Wachsmuth et al. 2018).

- `core`: pools, the ranker registry, one ranking run, ranking records and accuracy@1 / MRR;
- `lexical`: tokens, bag-of-words, WMD, the 20 features of Table 1, exact pruned linear ranking, BM25 / TF-cosine /
  embedding-cosine baselines, Simple-SD;
- `ltr`: logistic regression and XGBoost over the features (section 3.2);
- `neural`: Bi-/Cross-/Unipolar-/Bipolar-encoders, their training, retrieve-then-rerank and Table 3 (sections 4-6).
Arrows point down this list only (`neural` uses `core` and `lexical.baselines`' BM25; `ltr` uses `core` and
`lexical`; `lexical` uses `core`); rankers register themselves with `core.registry` when imported.
"""
