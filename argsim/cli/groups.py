"""The command groups (command modules in `argsim.cli.commands` attach their commands to these), the guard every
command passes (`ArgsimCommand`) and which global options each command uses (`UNUSED`, `check_global_options`)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from typer.core import TyperCommand, TyperGroup

from argsim.config import RunConfig
from argsim.errors import ArgsimError, one_line

console = Console()
err_console = Console(stderr=True)
#: the width of tables when stdout is a file or a pipe: wide enough that no column is cut (rich's default is 80)
FILE_WIDTH = 400


def _error(message: str) -> None:
    """One red error line on stderr (`message` is plain text, not markup)."""
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)


def refuse_repeated_options(command, args: list[str]) -> None:
    """A single-valued option given twice (`--out a.json --out b.json`) is a usage error: click would keep the
    last value and drop the first silently. Flags and repeatable options may repeat."""
    seen = {opt: param.opts[0] for param in command.params  # typer's (vendored) click options: by kind, not class
            if getattr(param, "param_type_name", "") == "option" and not param.multiple
            and not getattr(param, "is_flag", False) and not getattr(param, "count", False)
            for opt in [*param.opts, *param.secondary_opts]}
    given: set[str] = set()
    for arg in args:
        if arg == "--":
            break
        name = seen.get(arg.split("=", 1)[0] if arg.startswith("--") else arg)
        if name in given:
            from typer._click.exceptions import UsageError  # typer's click: one line, exit code 2

            raise UsageError(f"{name} is given twice; it takes one value (the first would be dropped silently)")
        if name is not None:
            given.add(name)


#: the options of model inference: device, numeric precision, threads, runtime, quantization
MODEL = ("device", "precision", "threads", "backend", "quantize", "calibration")
#: the embedding cache
CACHE = ("cache_dir", "use_cache")
#: where bulk work runs
ENGINE = ("engine", "ray_address")

#: command -> the global options it does not use besides ENGINE (which only ENGINE_COMMANDS use)
UNUSED: dict[str, tuple[str, ...]] = {
    "report": (*MODEL, *CACHE, "seed", "data_dir"),
    "eval counterargs": (*MODEL, *CACHE, "seed", "data_dir"),
    "eval map": (*MODEL, *CACHE),
    "eval rouge": (*MODEL, *CACHE, "seed"),
    "data check": (*MODEL, *CACHE, "seed"),
    "data kpm-folds": (*MODEL, *CACHE),
    "models curve": (*MODEL, *CACHE, "seed", "data_dir"),
    "bench default": (*MODEL, *CACHE, "seed", "data_dir"),
    "models": (*MODEL, *CACHE, "seed", "data_dir"),  # the listing (the group's own callback)
    # a build passes --seed, --device, --precision and --data-dir to each training and evaluation it runs
    "models build": ("threads", "backend", "quantize", "calibration", *CACHE),
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
    return (*UNUSED.get(command, ()), *(ENGINE if command not in ENGINE_COMMANDS else ()))


def step_options(root, given: dict[str, object]) -> Callable[[Sequence[str]], list[str]]:
    """For a command line's arguments (after `argsim`) under the click group `root`: the global options of `given`
    ({parameter name: value}, None left out) that its command uses, as `--name value` (`models build` passes each
    step only those, so that no step is refused an option it does not use).

    Example:
        >>> import typer.main
        >>> from argsim.cli.app import app
        >>> options_for = step_options(typer.main.get_command(app), {"seed": 7, "device": "cpu"})
        >>> options_for(["eval", "map", "pred.json"]), options_for(["train", "sbert"])
        (['--seed', '7'], ['--seed', '7', '--device', 'cpu'])
    """
    def options_for(args: Sequence[str]) -> list[str]:
        names, at = [], root
        for word in args:
            if not hasattr(at, "commands") or word not in at.commands:
                break
            names.append(word)
            at = at.commands[word]
        unused = unused_options(" ".join(names))
        return [x for name, value in given.items() if value is not None and name not in unused
                for x in (f"--{name.replace('_', '-')}", str(value))]
    return options_for


def check_global_options(ctx) -> None:
    """Refuse (click's UsageError: one line, exit 2) a global option given on the command line (not at its default)
    to a command that does not use it (`UNUSED`, declared once, for every command); options set through the
    environment (`ARGSIM_HOME`, `RAY_ADDRESS`) apply to every command that uses them."""
    from typer._click.core import ParameterSource
    from typer._click.exceptions import UsageError

    root, names, at = ctx.find_root(), [], ctx
    while at.parent is not None:  # the names below the program's, however it was started (`python -m` included)
        names.append(at.info_name)
        at = at.parent
    command = " ".join(reversed(names))
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


class ArgsimCommand(TyperCommand):
    """A typer command whose parsed inputs and outputs pass the one output guard before its body runs
    (`argsim.cli.params.check_inputs_and_outputs`: no output is an input, no file is two outputs); however it ends
    (done, failed, interrupted), files that libraries wrote as 0600 in its output folders during the run get the
    umask's mode."""

    def parse_args(self, ctx, args):
        refuse_repeated_options(self, list(args))
        return super().parse_args(ctx, args)

    def invoke(self, ctx):
        import time

        from argsim.cli.params import check_inputs_and_outputs

        check_global_options(ctx)  # a global option the command does not use: one line, exit 2
        check_inputs_and_outputs(ctx)
        start = time.time() - 1  # file times have coarse resolution on some file systems
        try:
            return super().invoke(ctx)
        finally:  # also after an error or Ctrl-C: what libraries left 0600 in the output folders gets the umask's mode
            from argsim.io import widen_private_files

            for _name, path in getattr(ctx, "argsim_outputs", []):
                if path is not None and path.is_dir():
                    widen_private_files(path, since=start)


class ArgsimGroup(TyperGroup):
    """A typer group that turns `ArgsimError` into one red line and exit code 2 (no traceback), and any other
    exception into one red line and exit code 1 naming it as a bug (the traceback with ARGSIM_DEBUG=1, which the
    test suite sets); every command it runs is an `ArgsimCommand` (the output guard)."""

    def parse_args(self, ctx, args):
        # the group's own options come before the subcommand's name: only those are checked here
        first = next((i for i, a in enumerate(args) if a in self.commands), len(args))
        refuse_repeated_options(self, list(args[:first]))
        return super().parse_args(ctx, args)

    def get_command(self, ctx, name):
        cmd = super().get_command(ctx, name)
        if cmd is not None and cmd.short_help is None and cmd.help:  # the listing: the first paragraph, one flow
            cmd.short_help = " ".join(cmd.help.split("\n\n")[0].split())
        return cmd

    def resolve_command(self, ctx, args):
        name, cmd, rest = super().resolve_command(ctx, args)
        if type(cmd) is TyperCommand:
            cmd.__class__ = ArgsimCommand  # typer built it; the guard is added to every command in one place
        return name, cmd, rest

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except ArgsimError as exc:
            _error(one_line(str(exc)))
            raise typer.Exit(exc.exit_code) from None
        except MemoryError:
            _error("out of memory (try a smaller --batch-size, fewer texts, or --limit)")
            raise typer.Exit(1) from None
        except BrokenPipeError:
            raise  # the reader of the output left (`argsim models | head -1`): click ends quietly, exit 1
        except Exception as exc:
            from argsim.errors import environment_problem

            clicks = type(exc).__module__.split(".")[0] in ("click", "typer")
            problem = environment_problem(exc)  # a full disk, a read-only folder, no home folder: one line, exit 2
            if problem is not None and not clicks:
                _error(problem)
                raise typer.Exit(2) from None
            if clicks or os.environ.get("ARGSIM_DEBUG"):
                raise  # click's own control flow; ARGSIM_DEBUG=1 (the test suite sets it): the full traceback
            text = str(exc).strip().splitlines()
            where = f": {text[0][:300]}" if text else ""
            _error(f"unexpected {type(exc).__name__}{where} (this is a bug in argsim; ARGSIM_DEBUG=1 shows where)")
            raise typer.Exit(1) from None

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        """Like typer's, but a usage error (bad option value, missing argument, bad --out) is one red line; the
        environment that --quiet set for the libraries is restored when the command ends (a caller running
        several commands in one process, e.g. tests, gets each its own)."""
        from argsim.progress import QUIET_ENV

        saved = {var: os.environ[var] for var in QUIET_ENV if var in os.environ}
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except typer.TyperException as exc:  # click's usage errors (typer vendors click)
            if not standalone_mode or not hasattr(exc, "format_message"):  # not one of click's errors
                raise
            if type(exc).__name__ == "NoArgsIsHelpError":  # the help was printed already
                sys.exit(exc.exit_code)
            ctx = getattr(exc, "ctx", None)
            hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
            _error(one_line(exc.format_message().replace("Value error, ", "")) + hint)  # pydantic's prefix on choices
            sys.exit(exc.exit_code)
        except typer.Abort:
            if not standalone_mode:
                raise
            err_console.print("[bold red]aborted[/]", highlight=False)
            sys.exit(1)
        finally:
            for var in QUIET_ENV:
                os.environ.pop(var, None)
            os.environ.update(saved)
        if not standalone_mode:
            return rv
        if rv == 130:  # typer's answer to Ctrl-C: what was written atomically is whole, the rest not written
            err_console.print("[bold red]interrupted[/]: finished outputs are kept, nothing is half-written",
                              highlight=False)
            rv = 143 if TERMINATED else rv
        sys.exit(rv if isinstance(rv, int) else 0)


#: set by the SIGTERM handler (`argsim.cli.app`): an interrupted run then exits 143 instead of Ctrl-C's 130
TERMINATED = False


def group(name: str, help_text: str, **options: bool) -> typer.Typer:
    """A typer app whose commands run through `ArgsimGroup` (`options`: typer's, e.g. `invoke_without_command`)."""
    return typer.Typer(name=name, help=help_text, cls=ArgsimGroup, rich_markup_mode="rich", add_completion=False,
                       **{"no_args_is_help": True, **options})


data_app = group("data", "Check the datasets and build training triplets from them.")
train_app = group("train", "Train a model (MTS, SBERT, thematic triplet network, bipolar encoder, "
                   "learning-to-rank, political SBERT). Trained models are saved under --out.")
rank_app = group("rank", "Rank candidates for queries: key points for arguments, best counter-arguments.")
cluster_app = group("cluster", "Cluster sentences by theme.")
summarize_app = group("summarize", "Extractive summarization (EmbedRank++ MMR) of assembly minutes.")
eval_app = group("eval", "Official metrics: KPA mAP, counter-argument accuracy@1, triplet accuracy, "
                  "clustering MI/AMI/RI/ARI, ROUGE-1.")

# `argsim data triplets <dataset>`: shared by the thematic (wikipedia) and minutes (minutes) triplet builders
triplets_app = group("triplets", "Build training/evaluation triplets (JSONL: anchor, positive, negative) "
                      "from a dataset: `wikipedia` (thematic sections), `minutes` (assembly minutes).")
data_app.add_typer(triplets_app)

GROUPS = [data_app, train_app, rank_app, cluster_app, summarize_app, eval_app]
#: the root's own commands (`argsim embed`, `argsim report`, ...), added to it by `argsim.cli.app`
ROOT = typer.Typer()
root_command = ROOT.command


def summary_table(title: str, columns: list[str], rows: list[list], total: list | None = None,
                  caption: str | None = None) -> Table:
    """A rich table with thousands separators for ints and four decimals for floats; `total`: a last row below a
    line."""
    table = Table(*columns, title=title, caption=caption)
    for i, r in enumerate([*rows, *([total] if total is not None else [])]):
        table.add_row(*[f"{v:,}" if isinstance(v, int) and not isinstance(v, bool)
                        else (f"{v:.4f}" if isinstance(v, float) else str(v)) for v in r],
                      end_section=total is not None and i == len(rows) - 1)
    return table


def run_config(ctx: typer.Context | None) -> RunConfig:
    """The `RunConfig` the root command built from the global options (defaults when a command runs alone)."""
    return (ctx.find_object(RunConfig) if ctx is not None else None) or RunConfig()
