"""Each setting is defined once: no command option repeats a config dataclass field (its name and default).

A setting that a dataclass declares (`argsim.options.setting`, or a plain field) reaches the command line through
`argsim.cli.params.config_options`; an option written by hand in a command with the same name and the same
default would be a second definition that drifts. Checked on the source: the dataclasses' fields anywhere in
argsim, the hand-written options of every command.
"""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "argsim"


def _default(node: ast.expr) -> object:
    """A field's default: the value of a literal, `setting(literal, ...)`'s first argument; None for anything else
    (a named constant is one definition that both sides may use)."""
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "setting" and node.args:
        node = node.args[0]
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None


def dataclass_fields() -> dict[tuple[str, str], str]:
    """{(field name, repr(default)): "module.Class"} of every dataclass field with a default that is not None."""
    out: dict[tuple[str, str], str] = {}
    for path in PKG.rglob("*.py"):
        if "cli" in path.relative_to(PKG).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef) or not any("dataclass" in ast.unparse(d) for d in
                                                             node.decorator_list):
                continue
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.value is not None:
                    value = _default(item.value)
                    if value is not None:
                        out[(item.target.id, repr(value))] = f"{path.relative_to(PKG.parent)}:{node.name}"
    return out


def hand_written_options() -> list[tuple[str, str, str]]:
    """(file:line:function, parameter, repr(default)) of every option a command function declares itself."""
    out = []
    for path in (PKG / "cli").rglob("*.py"):
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(fn, ast.FunctionDef):
                continue
            args = fn.args.posonlyargs + fn.args.args
            pairs = list(zip(args[len(args) - len(fn.args.defaults):], fn.args.defaults, strict=True))
            pairs += [(a, d) for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults, strict=True) if d is not None]
            for arg, default in pairs:
                value = _default(default)
                if value is not None and arg.annotation is not None and "typer." in ast.unparse(arg.annotation):
                    out.append((f"{path.relative_to(PKG.parent)}:{arg.lineno}:{fn.name}", arg.arg, repr(value)))
    return out


#: (file, command function, option) whose name and default meet a field of another meaning: one command's option
#: each, so that another command of the same module writing the same option again is still caught
UNRELATED = {
    ("argsim/cli/commands/counter.py", "rank_counterargs", "resume"):
        "continues an interrupted ranking, not a training budget",
    ("argsim/cli/commands/generic.py", "eval_triplets", "distance"):
        "the evaluation's distance, not the minutes trainer's loss",
    ("argsim/cli/commands/root.py", "distill", "model"): "the model distilled, not the thematic trainer's base",
    ("argsim/cli/commands/kpm.py", "rank_keypoints", "combine"):
        "the ensemble of rank keypoints; folds.Candidate is a search result",
}


def repeats(options: list[tuple[str, str, str]]) -> list[str]:
    fields = dataclass_fields()
    return [f"{where} --{name.replace('_', '-')}={default} repeats {fields[(name, default)]}"
            for where, name, default in options
            if (name, default) in fields and (where.split(":")[0], where.split(":")[-1], name) not in UNRELATED]


def test_no_option_repeats_a_dataclass_field():
    assert dataclass_fields() and hand_written_options()  # the scan finds both sides
    assert repeats(hand_written_options()) == []


def test_the_scan_sees_a_repeat():
    """An independent case: a batch size of 64 (EmbedSpec) and `RunConfig.engine` written again are caught."""
    found = repeats([("argsim/cli/commands/x.py:1", "batch_size", "64"), ("argsim/cli/app.py:1", "engine", "'local'"),
                     ("argsim/cli/commands/x.py:2", "batch_size", "12345")])
    assert len(found) == 2 and "batch-size=64" in found[0] and "RunConfig" in found[1]
