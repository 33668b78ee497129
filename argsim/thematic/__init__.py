"""Thematic similarity: Wikipedia-section triplets, the BiLSTM triplet network, sentence clustering."""
