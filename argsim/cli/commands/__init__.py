"""Command modules, discovered automatically: each attaches commands to the groups in `argsim.cli.groups`
(or, through a `register(app)` function, to the root app). One module per method family."""
