"""Neural counter-argument retrieval (Bipolar-encoder paper, sections 4-5): Bi-encoder, Cross-encoder,
Unipolar-ret/-cls and the Bipolar-encoder, trained with `argsim train bipolar` and used through
`argsim rank counterargs --method bipolar|bi-encoder|unipolar-ret|bm25+cross-encoder|...`. Importing this package
only registers the rankers (torch and the models load when a ranker runs)."""

from argsim.counter.neural import rankers as rankers
