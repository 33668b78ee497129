"""Official metrics: KPA mAP, ranking accuracy, triplet accuracy, clustering scores, ROUGE."""
