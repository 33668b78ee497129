"""The public Python API of argsim (exported from `argsim` itself; see docs/python-api.md).

One module per task, each a thin layer over the method packages that takes and returns plain lists, pandas
DataFrames and numpy arrays:

    datasets   load_dataset: ArgKP-2021, counterargs-18, the Wikipedia articles, PoliInfo / NTCIR-14, SICK
    encode     encode: texts -> vectors through the one backend (`argsim.backend.get_encoder`)
    kpm        KeyPointMatcher: match arguments to key points, train the recommended recipe, official mAP
    counter    CounterRetriever: index candidates, retrieve and rank with any registered counter ranker
    thematic   cluster_sentences: thematic clustering of sentences
    minutes    summarize_minutes: EmbedRank++ extractive summaries of assembly minutes
    metrics    kpa_map, accuracy_at_1, triplet_accuracy, rouge1

Every function that runs a model takes `config: RunConfig | None` (device, precision, seed, embedding cache,
quiet, data folder); None uses the defaults. The CLI commands call the same functions.
"""
