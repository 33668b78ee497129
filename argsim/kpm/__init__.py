"""Key point matching: MTS, Siamese SBERT/SRoBERTa, zero-shot scoring, k-fold cross-validation."""
