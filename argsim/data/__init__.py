"""Dataset loaders (typed, validated) and the catalog behind `argsim data check`."""
