"""The public Python API of argsim (exported from `argsim` itself; docs/python-api.md tabulates it): one module per
task, each a thin layer over the function its command calls, on plain lists, DataFrames and numpy arrays; every
function that runs a model takes `config: RunConfig | None` (None: the defaults).
"""
