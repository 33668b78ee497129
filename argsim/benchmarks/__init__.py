"""Benchmarks that run from the command line as well as from bench/ (`argsim bench ...`)."""
