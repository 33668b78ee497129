"""Every global option is honoured by every command or refused by it in one line: each command runs with each
global option (given at a value other than its default) up to the point where its own body would start, and the
declaration in `argsim.cli.groups` (`UNUSED`) decides, in one place, which of them end as a usage error."""

from __future__ import annotations

import sys

import pytest
import typer
from typer.testing import CliRunner

from argsim.cli.app import app
from argsim.cli.groups import ENGINE_COMMANDS, UNUSED, unused_options

runner = CliRunner()
ROOT = typer.main.get_command(app)

#: a value other than the default for each global option (valid on a CPU-only machine)
VALUES = {"device": "cpu", "seed": "7", "quiet": None, "data_dir": "DIR", "cache_dir": "DIR/cache",
          "use_cache": None, "precision": "fp32", "threads": "1", "backend": "onnx", "quantize": "int8",
          "calibration": "FILE", "engine": "ray", "ray_address": "auto", "workdir": "DIR"}


def leaves(cmd, path=()):
    subs = getattr(cmd, "commands", None)
    if not subs:
        yield " ".join(path), cmd
        return
    for name, sub in subs.items():
        yield from leaves(sub, (*path, name))


COMMANDS = dict(leaves(ROOT))


def test_the_declaration_names_real_commands_and_options():
    names = {p.name for p in ROOT.params}
    assert set(UNUSED) <= set(COMMANDS) | {"models"} and set(ENGINE_COMMANDS) <= set(COMMANDS)
    assert {o for opts in UNUSED.values() for o in opts} <= names
    assert set(VALUES) == names, "a new global option needs a value here (and a decision in UNUSED)"


class Reached(Exception):
    """The command's own checks were reached: the global option was accepted."""


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_command_with_each_global_option(command, tmp_path, monkeypatch):
    import argsim.cli.params as params

    def reached(ctx):
        raise Reached

    monkeypatch.setattr(params, "check_inputs_and_outputs", reached)
    (tmp_path / "FILE").write_text("a text\n")
    monkeypatch.setenv("RAY_ADDRESS", "")
    monkeypatch.setattr("argsim.engine.ray_engine.check_reachable", lambda address: None)
    monkeypatch.setattr("argsim.backend.runtime.check_backend", lambda *a, **k: None)
    cmd = COMMANDS[command]
    required = []
    for p in cmd.params:
        if p.required:
            value = str(tmp_path / ("new-out" if "out" in p.name else "FILE"))
            required += [value] if p.param_type_name == "argument" else [p.opts[0], value]
    baseline = runner.invoke(app, [*command.split(), *required])
    assert isinstance(baseline.exception, Reached), baseline.stderr  # the command's own checks are reached
    unused = set(unused_options(command))
    for name, value in VALUES.items():
        param = next(p for p in ROOT.params if p.name == name)
        opt = param.secondary_opts[0] if name == "use_cache" else param.opts[0]  # --no-cache
        if value is not None:
            value = value.replace("DIR", str(tmp_path)).replace("FILE", str(tmp_path / "FILE"))
        argv = [opt, *([value] if value is not None else []), *command.split(), *required]
        result = runner.invoke(app, argv)
        if name in unused:
            assert result.exit_code == 2 and f"{opt} does not apply to `argsim {command}`" in result.stderr, \
                (argv, result.stderr)
            assert len(result.stderr.strip().splitlines()) == 1
        else:
            assert isinstance(result.exception, Reached) or "does not apply" not in result.stderr, (argv,
                                                                                                   result.stderr)


def test_the_models_listing_refuses_what_it_does_not_use(tmp_path):
    result = runner.invoke(app, ["--workdir", str(tmp_path), "--device", "cpu", "models"])
    assert result.exit_code == 2 and "--device does not apply to `argsim models`" in result.stderr


def test_the_check_reads_the_command_however_argsim_was_started():
    """`python -m argsim.cli.app` (how `models build` runs its steps) names the program in three words: the command
    is still read from the parsed commands, so an unused option is refused there too."""
    result = runner.invoke(app, ["--device", "cpu", "report"], prog_name="python -m argsim.cli.app")
    assert result.exit_code == 2 and "--device does not apply to `argsim report`" in result.stderr


def test_models_build_passes_each_step_only_the_global_options_it_uses(tmp_path, monkeypatch):
    """Every `argsim` line of every recipe gets the build's --seed / --device / --precision / --data-dir only where
    its command uses them, so no step is refused an option the build passed it; the build runs each step so."""
    import shlex
    import subprocess
    from types import SimpleNamespace

    from argsim.cli.groups import step_options
    from argsim.modelbuild.recipes import RECIPES, Recipe
    from argsim.modelbuild.runner import build, plan

    options_for = step_options(ROOT, {"seed": 7, "device": "cpu", "precision": "fp32", "data_dir": "d", "x": None})
    assert options_for(["eval", "map", "pred.json"]) == ["--seed", "7", "--data-dir", "d"]
    assert options_for(["report"]) == [] and len(options_for(["train", "sbert", "--loss", "cosine"])) == 8
    steps = [shlex.split(line)[1:] for recipe in RECIPES for line in recipe.lines if line.startswith("argsim")]
    assert steps
    for args in steps:
        command = next(c for c in sorted(COMMANDS, key=len, reverse=True) if args[:len(c.split())] == c.split())
        given = {options_for(args)[i][2:].replace("-", "_") for i in range(0, len(options_for(args)), 2)}
        assert not given & set(unused_options(command)), (args, given)
    ran = []  # what the build starts for an `argsim` step: this argsim with the options that step uses
    monkeypatch.setattr("argsim.modelbuild.runner.subprocess", SimpleNamespace(STDOUT=subprocess.STDOUT, Popen=lambda
                        cmd, **_: ran.append(cmd) or SimpleNamespace(poll=lambda: 0, returncode=0)))
    recipe = Recipe("r", "fake", "r", "models/r", "argsim eval map pred.json", 0.01, 0.01, "test")
    build(plan([], tmp_path, [recipe]), tmp_path, tmp_path / "build.log", options_for, quiet=True, echo=lambda s: None)
    assert ran == [[sys.executable, "-m", "argsim.cli.app", *options_for(["eval", "map"]), "eval", "map", "pred.json"]]
