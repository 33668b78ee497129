"""Command modules, discovered automatically and imported in name order, which is the order each group lists their
commands in (within a module: the order they are defined in): each attaches commands to the groups in
`argsim.cli.groups` (or, with `argsim.cli.groups.root_command`, to the root app). One module per method family
(`kpm`, `counter`, `thematic`, `minutes`), and `root` (the root's own commands), `generic` (the commands on any
task's files) and `runs` (`argsim bench`, `argsim models`)."""
