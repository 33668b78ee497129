"""Assembly minutes: triplet mining, the political Sentence-BERT, EmbedRank++ summarization."""
