"""Command modules, discovered automatically: each attaches commands to the groups in `argsim.cli.groups`
(or, with `argsim.cli.groups.root_command`, to the root app). One module per method family."""
