"""Option checks and option groups shared by every command: output options (`OUT_FILE`, `OUT_DIR`, `out_file`),
checked while parsing, before any work; fixed choices are `Literal[...]` annotations, `choices(...)` checks
repeatable ones; `config_options` adds a dataclass's options (e.g. `argkp_input`, the training budget of every
`argsim train ...` command: `budget_options`) to a command; `placement`: a run's placement from the globals."""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import math
import os
import typing
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import typer

from argsim.errors import ArgsimError
from argsim.options import field_default, is_option, option_decls, setting
from argsim.training.budget import Budget

OutputCheck = Callable[[Path | None], Path | None]
Command = TypeVar("Command", bound=Callable[..., Any])


def is_default(ctx: typer.Context, name: str | None) -> bool:
    """Whether the option kept its default (not given on the command line or by an environment variable)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name in ("DEFAULT", "DEFAULT_MAP")


def refuse_given(ctx: typer.Context, names: Sequence[str], why: str) -> None:
    """ArgsimError (one line) when one of the options `names` (parameter names) was given on the command line:
    an option that does not apply to this run would otherwise be silently ignored.

    Example:
        >>> refuse_given(ctx, ["items"], "it picks dataset items; your own --input is summarised")  # doctest: +SKIP
    """
    for name in names:
        if ctx.get_parameter_source(name) is not None and not is_default(ctx, name):
            raise ArgsimError(f"--{name.replace('_', '-')} does not apply here: {why}")


def output_check(kind: str = "file", suffixes: tuple[str, ...] = ()) -> OutputCheck:
    """A typer option callback checking an output `kind` ('file' or 'folder') with optional `suffixes`."""
    if kind not in ("file", "folder"):
        raise ValueError(f"kind must be file or folder, not {kind}")

    def check(value: Path | None, ctx: typer.Context = None, param: typer.CallbackParam = None) -> Path | None:
        """As a typer callback (ctx and param given) or called directly with a value (no default rebasing)."""
        from argsim.io import check_output_path
        from argsim.paths import under_workdir

        if value is None:
            return None
        parsing = ctx is not None and param is not None
        if parsing and is_default(ctx, param.name):
            value = under_workdir(value)  # defaults (runs/..., models/...) go to --workdir / $ARGSIM_HOME
        try:
            check_output_path(value, kind, suffixes)
        except ArgsimError as exc:
            raise typer.BadParameter(str(exc)) from None
        if parsing:  # for `check_inputs_and_outputs`, run before the command
            vars(ctx).setdefault("argsim_outputs", []).append((_option_name(param), value))
        return value

    check.argsim_output = kind  # type: ignore[attr-defined]  # lets a test find every output option
    return check


def _option_name(param: typer.CallbackParam) -> str:
    return next((o for o in getattr(param, "opts", []) if o.startswith("--")), str(param.name).upper())


def _items(value: Any) -> list | tuple:
    """A parameter's values: a list or tuple as it is, any other value as a list of one."""
    return value if isinstance(value, list | tuple) else [value]


def _names_path(item: Any) -> bool:
    """Whether `item` (a Path, or a str that could be one) names an existing path."""
    if not isinstance(item, Path) and not (isinstance(item, str) and item and "\x00" not in item and len(item) < 4096):
        return False
    try:
        return os.path.lexists(os.path.expanduser(item))
    except (OSError, ValueError):
        return False


def _repeated(items: Any) -> Any:
    """The first of `items` given twice (only ints and strs count), else None."""
    counts = Counter(item for item in items if isinstance(item, int | str))
    return next((item for item, n in counts.items() if n > 1), None)


def check_seed(name: str, value: int) -> None:
    """A seed numpy accepts (0 .. 2**32-1), else one line: a seed outside it fails deep inside the first sampler."""
    if not isinstance(value, int) or not 0 <= value <= 2**32 - 1:
        raise ArgsimError(f"{name} {value}: a seed is an integer from 0 to {2**32 - 1} (numpy's range)")


def _library_check(module: str, name: str) -> Callable[[str, Any], None]:
    """The library's one check `module.name(value, option)` (imported when used) as an (option, value) check."""
    return lambda option, value: getattr(importlib.import_module(module), name)(value, option)


#: repeatable options whose items may repeat (two models may have equal ensemble weights)
REPEATS_ALLOWED = frozenset({"weight"})

NAMED_CHECKS: dict[str, Callable[[str, Any], None]] = {
    "seed": check_seed, "task": _library_check("argsim.results", "check_task_name"),
    **dict.fromkeys(("kp_template", "arg_template"), _library_check("argsim.kpm.scoring", "check_template"))}


def check_inputs_and_outputs(ctx: typer.Context) -> None:
    """The one output guard, run after a command's options are parsed and before its body (by `ArgsimGroup`):
    an output (an option with an `output_check` callback) that is an input (any other option or argument naming
    an existing path, through symlinks and hard links), or one path given to two outputs, is one line and exit 2
    (`argsim.io.check_distinct_outputs`)."""
    from argsim.io import check_distinct_outputs

    for param in ctx.command.params:  # options whose meaning is the same in every command
        name, value = _option_name(param), ctx.params.get(param.name)
        if value is not None and (check := NAMED_CHECKS.get(str(param.name))) is not None:
            check(name, value)
        for item in _items(value):
            if isinstance(item, float) and not math.isfinite(item):  # click's ranges let nan through
                raise ArgsimError(f"{name} {item}: not a finite number")
        twice = _repeated(value) if isinstance(value, list | tuple) and param.name not in REPEATS_ALLOWED else None
        if twice is not None:
            raise ArgsimError(f"{name} {twice} is given twice (it would count twice)")
    outputs = list(getattr(ctx, "argsim_outputs", []))
    out_names = {name for name, _ in outputs}
    inputs = [(_option_name(param), Path(item)) for param in ctx.command.params
              if param.name in ctx.params and _option_name(param) not in out_names
              for item in _items(ctx.params[param.name]) if _names_path(item)]
    check_distinct_outputs(outputs, inputs)


OUT_FILE = output_check("file")
OUT_DIR = output_check("folder")


def out_file(*suffixes: str) -> OutputCheck:
    """An output file restricted to `suffixes` (e.g. '.npy', '.csv')."""
    return output_check("file", tuple(s.lower() for s in suffixes))


def choices(*values: str) -> Callable[[list[str] | None], list[str] | None]:
    """A typer option callback for a repeatable option whose every value must be one of `values`."""

    def check(value: list[str] | None) -> list[str] | None:
        for item in value or []:
            if item not in values:
                raise typer.BadParameter(f"'{item}' is not one of {', '.join(repr(v) for v in values)}")
        _no_repeats(value or [])
        return value

    return check


def from_workdir(ctx: typer.Context, param: typer.CallbackParam, value: Path | None) -> Path | None:
    """An input option whose default is an earlier run's output (`runs/...`): the default is read from the work
    folder, a path given by the user as given."""
    from argsim.paths import under_workdir

    return under_workdir(value) if value is not None and is_default(ctx, param.name) else value


def comma_choices(*values: str) -> Callable[[str | None], str | None]:
    """A typer option callback for a comma-separated list whose every item must be one of `values`."""
    each = choices(*values)
    return lambda value: (each([item.strip() for item in (value or "").split(",") if item.strip()]), value)[1]


def _no_repeats(items: list[str]) -> None:
    """A list naming one value twice would run (and count) it twice: refused."""
    if (twice := _repeated(items)) is not None:
        raise typer.BadParameter(f"'{twice}' is given twice")


def comma_positive_ints(value: str | None) -> str | None:
    """A typer option callback for a comma-separated list of positive integers (e.g. rerank depths 10,30,50)."""
    items = [item.strip() for item in (value or "").split(",") if item.strip()]
    for item in items:
        if not item.isascii() or not item.isdigit() or int(item) < 1:
            raise typer.BadParameter(f"'{item}' is not a positive integer")
    _no_repeats([str(int(item)) for item in items])
    return value


def _annotated(command: Callable[..., Any], annotation: Any) -> Any:
    """An `Annotated[...]` string annotation evaluated (typer reads the options in it); others as they are."""
    if isinstance(annotation, str) and annotation.startswith("Annotated["):
        return eval(annotation, command.__globals__)  # the command's own annotation
    return annotation


SPLIT_HELP = ("ArgKP-2021 split under --data-dir: train, dev, train+dev, or any split laid out the same way "
              "(arguments_<split>.csv, key_points_<split>.csv, labels_<split>.csv). Ignored with --arguments.")
LABELS_HELP = "Gold labels file with columns arg_id, key_point_id, label (1 match / 0 no match)."


@dataclass(frozen=True)
class ArgkpInput:
    """The key point commands' input: an ArgKP `split`, or the user's own `arguments` / `key_points` / `labels`."""

    split: str = setting("dev", SPLIT_HELP)
    arguments: Path | None = setting(None, "Your own arguments file (CSV/TSV/JSONL) with columns arg_id, argument, "
                                           "topic, stance (1 pro / -1 con). Use with --key-points.")
    key_points: Path | None = setting(None, "Your own key points file with columns key_point_id, key_point, topic, "
                                            "stance.")
    labels: Path | None = setting(None, LABELS_HELP)

    def load(self, data_dir: Path | None, need_labels: bool = False):
        """The data (`argsim.data.argkp.load_kpm_input`: the user's files when given, else the split)."""
        from argsim.data.argkp import load_kpm_input

        return load_kpm_input(self.split, self.arguments, self.key_points, self.labels, need_labels=need_labels,
                              data_dir=data_dir)


def argkp_input(split: str = "dev", split_help: str = SPLIT_HELP,
                labels_help: str = LABELS_HELP) -> Callable[[Command], Command]:
    """A decorator giving a command the options --split (default `split`), --arguments, --key-points, --labels,
    passed to it as `source: ArgkpInput`."""
    return config_options(ArgkpInput, "source", meta={"split": {"default": split, "help": split_help},
                                                      "labels": {"help": labels_help}})


#: the help and bounds of Budget's fields as options
BUDGET_OPTIONS: dict[str, dict] = {
    "max_steps": {"min": 1, "help": "Stop after this many optimizer steps (a checkpoint is kept; the learning-rate "
                                    "schedule still follows the epochs, so --resume continues it)."},
    "max_minutes": {"min": 0.01, "help": "Stop after this many minutes of this run (a checkpoint is kept for "
                                         "--resume)."},
    "grad_accum": {"min": 1, "help": "Batches accumulated per optimizer step."},
    "checkpoint_every": {"min": 0, "help": "Save a checkpoint every N optimizer steps under OUT/checkpoints (0: at "
                                           "budget stops and epoch ends only)."},
    "resume": {"option": "--resume", "help": "Continue from the checkpoint under OUT/checkpoints."},
}


def budget_options(**helps: str) -> Callable[[Command], Command]:
    """A decorator adding the fields of `argsim.training.Budget` (its defaults, the help texts above) to a train
    command after its own options, passed as `plan: Budget`; `helps`: {field: help text} replacing a shared one."""
    if unknown := set(helps) - set(BUDGET_OPTIONS):
        raise ValueError(f"no budget option {', '.join(sorted(unknown))}")
    meta = {k: {**v, **({"help": helps[k]} if k in helps else {})} for k, v in BUDGET_OPTIONS.items()}
    return config_options(Budget, "plan", meta=meta)


def placement(ctx: typer.Context, threads: int | None = None):
    """Resolve the device / precision / threads of the global options (exit 2 on a device the machine lacks)."""
    from argsim.config import RunConfig
    from argsim.training import resolve_placement

    run = ctx.find_object(RunConfig) or RunConfig()  # `threads`: the command's own default when --threads is unset
    return resolve_placement(run.device, run.precision, run.threads or threads, run.seed)


def model_option(help: str) -> typer.models.OptionInfo:
    """The one `--model` / `-m` option (a model name or folder; `-m` means nothing else anywhere), each name
    checked while the options are parsed (`check_model_names`): a misspelt second `-m` is refused before any load."""
    return typer.Option("--model", "-m", help=help, callback=check_model_names)


def check_model_names(value: Any) -> Any:
    """A typer callback: each model name of `value` (one or a list) but `bm25` and existing paths must name a model
    (`argsim.backend.folders.check_model_name`), else one usage line naming the option, before any work; folders
    are checked by the loaders. Returns `value`."""
    from argsim.backend.folders import check_model_name

    for name in _items(value):
        if name is not None and str(name) != "bm25" and not Path(str(name)).expanduser().exists():
            try:
                check_model_name(str(name))
            except ArgsimError as exc:
                raise typer.BadParameter(str(exc)) from None
    return value


def finite_float(minimum: float | None = None, maximum: float | None = None) -> Callable[[str], float]:
    """The parser of a float option with bounds: a number within [minimum, maximum], one line else. `nan` and
    `inf` pass through to the output guard (`check_inputs_and_outputs`), which refuses them in every command alike
    (`--lr nan: not a finite number`) instead of calling them out of range.

    Example:
        >>> finite_float(0)("nan"), finite_float(0)("0.5")
        (nan, 0.5)
    """

    def parse(value: str | float) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{value!r} is not a number") from None
        if math.isfinite(number):
            if minimum is not None and number < minimum:
                raise ValueError(f"{value} is below the minimum {minimum:g}")
            if maximum is not None and number > maximum:
                raise ValueError(f"{value} is above the maximum {maximum:g}")
        return number

    return parse


def _field_option(f: dataclasses.Field, meta: dict[str, Any], hint: Any = None) -> typer.models.OptionInfo:
    meta = {**f.metadata, **meta}
    extra = {k: meta[k] for k in ("min", "max", "envvar", "exists", "dir_okay") if k in meta}  # passed as they are
    if hint in (float, float | None) and ("min" in meta or "max" in meta):
        extra["parser"] = finite_float(meta.get("min"), meta.get("max"))
    if "output" in meta:
        extra["callback"] = output_check(meta["output"])
    elif meta.get("model"):
        extra["callback"] = check_model_names
    # a field's option gets -m only where its metadata names it (a command may also have a --model of its own)
    decls = option_decls(dataclasses.field(metadata=meta)) if "option" in meta else option_decls(f)
    return typer.Option(meta.get("default", field_default(f)), *decls, help=meta.get("help", ""), **extra)


def config_options(cls: type, name: str = "config", exclude: tuple[str, ...] = (),
                   meta: dict[str, dict[str, Any]] | None = None) -> Callable[[Command], Command]:
    """A decorator giving a command one option per field of the config dataclass `cls` (its type, default, help,
    bounds and name from the field, see `argsim.options`), parsed and listed in `--help` after the command's own
    parameters as if it declared them, and passing `cls(**their values)` as the keyword argument `name`.

    Fields in `exclude` or marked `cli=False` keep their dataclass default (the command may `replace` them, e.g.
    the seed from the global `--seed`); a field's `aliases` are accepted as hidden options. `meta` ({field:
    metadata}) adds to or overrides a field's metadata for this command (e.g. a help text that says what the
    setting means here; `default`: this command's default instead of the field's).

    Example:
        `@config_options(SbertConfig)` above `def train_sbert_cmd(ctx, config: SbertConfig, ...)`.
    """
    hints = typing.get_type_hints(cls)
    options: dict[str, tuple[Any, typer.models.OptionInfo]] = {}
    aliases: dict[str, str] = {}
    for f in dataclasses.fields(cls):
        if f.name in exclude or not is_option(f):
            continue
        options[f.name] = (hints[f.name], _field_option(f, (meta or {}).get(f.name, {}), hints[f.name]))
        for i, alias in enumerate(f.metadata.get("aliases", ())):
            key = f"{f.name}__alias{i}"
            aliases[key] = f.name
            bounds = {k: f.metadata[k] for k in ("min", "max") if k in f.metadata}
            check = {"callback": check_model_names} if f.metadata.get("model") else {}
            options[key] = (hints[f.name] | None, typer.Option(None, alias, hidden=True, **bounds, **check))

    def decorate(command: Command) -> Command:  # the options join the signature after the command's own
        signature = inspect.signature(command)
        own = [p.replace(annotation=_annotated(command, p.annotation)) for p in signature.parameters.values()
               if p.name != name]
        added = [inspect.Parameter(opt, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=annotation)
                 for opt, (annotation, info) in options.items()]

        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            values = {opt: kwargs.pop(opt) for opt in options}
            for key, target in aliases.items():
                if (value := values.pop(key)) is not None:
                    values[target] = value
            return command(*args, **kwargs, **{name: cls(**values)})

        params = own + added
        wrapper.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in params} | {"return": signature.return_annotation}
        return wrapper  # type: ignore[return-value]

    return decorate
