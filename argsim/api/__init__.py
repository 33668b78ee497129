"""The public Python API of argsim (exported from `argsim` itself; docs/python-api.md tabulates it).

One module per task (datasets, encode, kpm, counter, thematic, minutes, metrics, evaluate), each a thin layer over
the function the CLI command calls, taking and returning plain lists, pandas DataFrames and numpy arrays. Every
function that runs a model takes `config: RunConfig | None` (device, precision, seed, embedding cache, quiet, data
folder); None uses the defaults.
"""
