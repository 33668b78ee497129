"""Counter-argument retrieval: similarity features, Simple-SD, learning-to-rank, bipolar encoders."""
