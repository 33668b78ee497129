"""The argsim command line (typer + rich). Modules here stay thin: they parse options and call the library."""
