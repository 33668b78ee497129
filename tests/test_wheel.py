"""The package as a user installs it: the wheel built from this tree, installed non-editable into a folder of its
own, runs `argsim --help`, `argsim demo` and `argsim data check` from another folder (no access to the source
tree: the demo files are package data). The wheel's dependencies are the test environment's own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

#: each test builds or runs the installed wheel in fresh processes: `make test-slow`
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The wheel of a copy of the sources (pyproject.toml, README.md, argsim/), installed with `pip install
    --no-deps --target`; returns the target folder."""
    root = tmp_path_factory.mktemp("wheel")
    src = root / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    shutil.copytree(REPO / "argsim", src / "argsim", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(root / "dist"), str(src)],
                   check=True, capture_output=True, cwd=root)
    wheel = next((root / "dist").glob("argsim-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "argsim/demo_data/arguments.csv" in names and not any(n.startswith("examples/") for n in names)
    subprocess.run([*pip, "install", "--no-deps", "--no-compile", "--target", str(root / "site"), str(wheel)],
                   check=True, capture_output=True, cwd=root)
    return root / "site"


def run_installed(site: Path, cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """`python -m argsim.cli.app ARGS` with only the installed wheel on PYTHONPATH (the test environment's
    dependencies come from its site-packages), run in `cwd`."""
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ARGSIM_DATA")}
    environ.update({"PYTHONPATH": str(site), "COLUMNS": "200", **env})
    return subprocess.run([sys.executable, "-m", "argsim.cli.app", *args], cwd=cwd, env=environ,
                          capture_output=True, text=True, timeout=300)


# One process of the installed wheel runs several commands in turn through the CLI's own app (as the console script
# does), so the heavy imports (torch, transformers) are paid once, not once per command.
DRIVER = """
import json, sys
from pathlib import Path

import argsim
from typer.testing import CliRunner

from argsim.cli.app import app

site, commands, out = sys.argv[1], json.loads(Path(sys.argv[2]).read_text()), Path(sys.argv[3])
assert Path(argsim.__file__).is_relative_to(site), argsim.__file__  # the wheel's argsim, not the source tree's
results = []
for args, env in commands:
    res = CliRunner().invoke(app, args, env=env)
    results.append({"code": res.exit_code, "stdout": res.stdout, "stderr": res.stderr,
                    "error": None if res.exception is None or isinstance(res.exception, SystemExit)
                    else repr(res.exception)})
out.write_text(json.dumps(results))
"""


def run_installed_many(site: Path, cwd: Path, commands: list[tuple[list[str], dict[str, str]]]) -> list[dict]:
    """Each (arguments, environment variables) of `commands` run in turn, in one `python` process with only the
    installed wheel on PYTHONPATH, in `cwd`; one {code, stdout, stderr, error} per command."""
    script, todo, out = cwd / "driver.py", cwd / "commands.json", cwd / "results.json"
    script.write_text(DRIVER)
    todo.write_text(json.dumps(commands))
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ARGSIM_DATA")}
    environ.update({"PYTHONPATH": str(site), "COLUMNS": "200"})
    res = subprocess.run([sys.executable, str(script), str(site), str(todo), str(out)], cwd=cwd, env=environ,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(out.read_text())


# every shipped model with the files it ships, and the sentence embedded with it
SHIPPED_LORA = {"adapter_model.safetensors", "adapter_config.json", "card.json", "argsim_encoder.json"}
SHIPPED = {"kpm": SHIPPED_LORA, "thematic": SHIPPED_LORA, "counter-retriever": SHIPPED_LORA,
           "counter-fusion": {"config.json", "card.json", "argsim_encoder.json"},
           "counter-bi-encoder": {"heads.safetensors", "config.json", "card.json", "argsim_encoder.json"},
           "counter-bipolar": {"heads.safetensors", "config.json", "card.json", "argsim_encoder.json",
                               "point_encoder"},
           "minutes": {"minutes_delta.safetensors", "words.json", "card.json", "argsim_encoder.json"}}
SENTENCE = {"minutes": "保育所の整備を加速すべきです。"}
#: the two-tower models are embedded through one named tower (without a role they are refused)
ROLE = {"counter-bi-encoder": "document", "counter-fusion": "query"}


@pytest.fixture(scope="module")
def elsewhere_runs(installed, tmp_path_factory) -> tuple[Path, dict[str, dict]]:
    """`-q demo`, `data check argkp` ($ARGSIM_DATA set), `models` and `-q --no-cache embed FILE --model NAME --out
    NAME.npy` for every shipped model, run by the installed wheel in a folder outside the source tree; returns the
    folder and each run's result by name."""
    from argsim.config import default_data_dir

    elsewhere = tmp_path_factory.mktemp("elsewhere")
    commands = {"demo": (["-q", "demo"], {}), "models": (["models"], {})}
    if default_data_dir().is_dir():  # the real datasets (conftest's data_dir), where present
        commands["data check"] = (["data", "check", "argkp"], {"ARGSIM_DATA": str(default_data_dir())})
    for name in SHIPPED:
        (elsewhere / f"{name}.txt").write_text(SENTENCE.get(name, "School uniforms stop bullying.") + "\n",
                                               encoding="utf-8")
        role = ["--role", ROLE[name]] if name in ROLE else []
        commands[name] = (["-q", "--no-cache", "embed", str(elsewhere / f"{name}.txt"), "--model", name, *role,
                           "--out", str(elsewhere / f"{name}.npy")], {})
    results = run_installed_many(installed, elsewhere, list(commands.values()))
    return elsewhere, dict(zip(commands, results, strict=True))


def test_the_installed_wheel_runs_from_another_folder(installed, elsewhere_runs, tmp_path):
    # elsewhere_runs' process checks that it imports the wheel's argsim, not the source tree's
    runs = elsewhere_runs[1]
    res = run_installed(installed, tmp_path, "--help")
    assert res.returncode == 0 and "demo" in res.stdout, res.stderr[-2000:]
    assert runs["demo"]["code"] == 0 and runs["demo"]["error"] is None, runs["demo"]["stderr"][-2000:]
    assert "Social media harms young people" in runs["demo"]["stdout"]
    # without --data-dir or $ARGSIM_DATA the per-user data folder is used, and named when it is missing
    res = run_installed(installed, tmp_path, "data", "check", "argkp", XDG_DATA_HOME=str(tmp_path / "xdg"))
    assert res.returncode == 2
    if sys.platform.startswith("linux"):  # platformdirs follows $XDG_DATA_HOME on Linux
        assert str(tmp_path / "xdg" / "argsim" / "data") in res.stderr.replace("\n", "")
    if "data check" not in runs:
        pytest.skip("real datasets not found: set ARGSIM_DATA or place them in ../shared/data")
    res = runs["data check"]  # with $ARGSIM_DATA
    assert res["code"] == 0 and res["error"] is None, res["stdout"][-2000:] + res["stderr"][-2000:]


def test_the_readme_python_examples_run_from_the_installed_wheel(installed, tmp_path, data_dir):
    """The README's ```python blocks, in order in one namespace, with the installed wheel's argsim."""
    from test_readme import python_blocks

    blocks = python_blocks((REPO / "README.md").read_text(encoding="utf-8"))
    script = tmp_path / "readme_blocks.py"
    script.write_text("import argsim, pathlib, sys\n"
                      f"assert pathlib.Path(argsim.__file__).is_relative_to({str(installed)!r}), argsim.__file__\n"
                      + "\n".join(blocks), encoding="utf-8")
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    environ.update({"PYTHONPATH": str(installed), "ARGSIM_DATA": str(Path(data_dir).resolve())})
    res = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=environ, capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]


def test_the_installed_wheel_carries_the_shipped_models(installed, elsewhere_runs):
    """The shipped models are package data: the non-editable install lists and loads `kpm` and `thematic` (LoRA
    adapters), `counter-bi-encoder` (heads over the frozen base), `counter-bipolar` (a LoRA adapter of its tower and
    its heads), `counter-retriever` (a LoRA adapter), `counter-fusion` (a config over two shipped models) and
    `minutes` (a delta over GiNZA's table) by name
    (each base checked against its card), embedding the same vectors as the source tree's."""
    import numpy as np

    from argsim.backend import get_encoder

    for name, want_files in SHIPPED.items():
        shipped = installed / "argsim" / "shipped" / name
        assert {p.name for p in shipped.iterdir()} >= want_files
        if "point_encoder" in want_files:  # LoRA adapter of the tower, beside the heads
            assert {p.name for p in (shipped / "point_encoder").iterdir()} >= SHIPPED_LORA - {"card.json",
                                                                                             "argsim_encoder.json"}
        assert json.loads((shipped / "card.json").read_text()) == json.loads(
            (REPO / "argsim" / "shipped" / name / "card.json").read_text())
    elsewhere, runs = elsewhere_runs
    res = runs["models"]
    assert res["code"] == 0 and res["error"] is None, res["stderr"][-2000:]
    assert "dev_strict_map" in res["stdout"] and "val_at1_over_30_best" in res["stdout"], res["stdout"][-2000:]
    assert "eval_dev_cosine_accuracy" in res["stdout"] and "dev_triplet_accuracy" in res["stdout"], \
        res["stdout"][-2000:]
    for name in SHIPPED:
        res = runs[name]
        assert res["code"] == 0 and res["error"] is None, res["stderr"][-2000:]
        want = get_encoder(name, device="cpu").for_role(ROLE.get(name)).encode(
            [SENTENCE.get(name, "School uniforms stop bullying.")], use_cache=False)
        np.testing.assert_allclose(np.load(elsewhere / f"{name}.npy"), want, atol=1e-5)
