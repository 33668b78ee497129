"""Learning to rank over the 20 lexical/embedding features (section 3.2 of the bipolar-encoder paper, appendix B.1):
`model` (the estimator), `training` (pairs and fitting), `rankers` (registered ranking methods)."""
