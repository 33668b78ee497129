"""Which global options each command uses, declared once and enforced for every command (`check_global_options`,
called by `groups.ArgsimCommand.invoke` before the command's body): a global option given on the command line
(not at its default) to a command that does not use it is a usage error, exit code 2; options set through the
environment (`ARGSIM_HOME`, `RAY_ADDRESS`) apply to every command that uses them.
"""

from __future__ import annotations

#: the options of model inference: device, numeric precision, threads, runtime, quantization
MODEL = ("device", "precision", "threads", "backend", "quantize", "calibration")
#: the embedding cache
CACHE = ("cache_dir", "use_cache")
#: where bulk work runs
ENGINE = ("engine", "ray_address")

#: command -> the global options it does not use (a command not named here uses every option except ENGINE)
UNUSED: dict[str, tuple[str, ...]] = {
    "report": (*MODEL, *CACHE, *ENGINE, "seed", "data_dir"),
    "eval counterargs": (*MODEL, *CACHE, *ENGINE, "seed", "data_dir"),
    "eval map": (*MODEL, *CACHE, *ENGINE),
    "eval rouge": (*MODEL, *CACHE, *ENGINE, "seed"),
    "data check": (*MODEL, *CACHE, *ENGINE, "seed"),
    "data kpm-folds": (*MODEL, *CACHE, *ENGINE),
    "models curve": (*MODEL, *CACHE, *ENGINE, "seed", "data_dir"),
    "models": (*MODEL, *CACHE, *ENGINE, "seed", "data_dir"),  # the listing (the group's own callback)
    # a build passes --seed, --device, --precision and --data-dir to each training and evaluation it runs
    "models build": ("threads", "backend", "quantize", "calibration", *CACHE, *ENGINE),
}
#: the commands that fan bulk work out through --engine
ENGINE_COMMANDS = ("embed", "rank counterargs", "rank keypoints", "rank counter-search", "train ltr",
                   "train simple-sd")
#: why an unused global option does not apply
WHY = {**dict.fromkeys(ENGINE, f"it runs in this process (--engine applies to {', '.join(ENGINE_COMMANDS)})"),
       **dict.fromkeys(CACHE, "it embeds nothing"), **dict.fromkeys(MODEL, "it runs no model"),
       "seed": "it draws nothing at random", "data_dir": "it reads no dataset"}


def unused_options(command: str) -> tuple[str, ...]:
    """The global options (parameter names) that `command` (e.g. "eval map") does not use.

    Example:
        >>> "device" in unused_options("report")
        True
    """
    unused = UNUSED.get(command, ())
    if command not in ENGINE_COMMANDS:
        unused = (*unused, *(o for o in ENGINE if o not in unused))
    return unused


def check_global_options(ctx) -> None:
    """Refuse (click's UsageError: one line, exit 2) a global option given on the command line to a command that
    does not use it."""
    from typer._click.core import ParameterSource
    from typer._click.exceptions import UsageError

    root = ctx.find_root()
    command = " ".join(ctx.command_path.split()[1:])
    unused = set(unused_options(command))
    for param in root.command.params:
        if param.name in unused and root.get_parameter_source(param.name) == ParameterSource.COMMANDLINE:
            value = root.params.get(param.name)
            if value == param.default:
                continue  # the default said aloud changes nothing
            given = param.secondary_opts[0] if value is False and getattr(param, "secondary_opts", None) \
                else param.opts[0]
            why = WHY.get(param.name, "it is not used")
            raise UsageError(f"{given} does not apply to `argsim {command}`: {why}; leave it out")
