"""Matching The Statements (Phan et al., "Matching The Statements: A Simple and Accurate Model for Key Point
Analysis", ArgMining 2021): `config` (the settings, torch-free), `network` (the network and its losses), `batches`
(pseudo labels, key-point-centred batches, topic folds), `encoder` (the backend loaders of trained folders); its
trainer is `argsim.trainers.mts` (training, fold ensembles)."""
