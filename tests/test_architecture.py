"""The layer rules of docs/ARCHITECTURE.md, checked on the source (imports anywhere in a module count)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "argsim"


def imports(path: Path) -> set[str]:
    """Every module an argsim source file imports (top level or inside functions)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out |= {f"{node.module}.{a.name}" for a in node.names}
    return out


def modules(folder: str) -> list[Path]:
    return sorted((PKG / folder).rglob("*.py")) if (PKG / folder).is_dir() else [PKG / f"{folder}.py"]


def offending(files: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    return [f"{p.relative_to(PKG.parent)} imports {m}" for p in files for m in sorted(imports(p))
            if any(m == f or m.startswith(f + ".") for f in forbidden)]


def test_metrics_import_no_loader_backend_or_method():
    forbidden = ("argsim.data", "argsim.backend", "argsim.kpm", "argsim.counter", "argsim.thematic",
                 "argsim.minutes", "argsim.cli", "argsim.settings", "torch", "transformers", "sentence_transformers")
    assert offending(modules("metrics"), forbidden) == []


@pytest.mark.parametrize("leaf", ["metrics/record", "vectors", "markdown", "published", "config", "errors",
                                  "options", "version", "measure"])
def test_leaf_modules_import_no_argsim(leaf):
    """Foundations import nothing from argsim but `options` (RunConfig's `setting` fields and their check) and
    `errors` (the one error `options` and the device name check raise)."""
    allowed = {"config": ("argsim.options", "argsim.options.setting", "argsim.options.check_settings",
                          "argsim.errors", "argsim.errors.ArgsimError"),
               "options": ("argsim.errors", "argsim.errors.ArgsimError", "argsim.errors.did_you_mean")}.get(leaf, ())
    assert [m for m in imports(PKG / f"{leaf}.py") if m.startswith("argsim") and m not in allowed] == []


def test_nothing_below_the_cli_imports_it():
    files = [p for p in PKG.rglob("*.py") if "cli" not in p.relative_to(PKG).parts]
    assert offending(files, ("argsim.cli",)) == []


def test_backend_and_data_import_no_method_package():
    methods = ("argsim.kpm", "argsim.counter", "argsim.thematic", "argsim.minutes", "argsim.cli")
    assert offending(modules("backend") + modules("data"), methods) == []


def backend_graph() -> dict[str, set[str]]:
    """{backend module: the backend modules it imports} (imports anywhere in a module; `from argsim.backend import
    x` names module x, or the package face `__init__` for any other name)."""
    folder = PKG / "backend"
    names = {p.stem for p in folder.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in folder.glob("*.py"):
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            found = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module == "argsim.backend":
                deps |= {a.name if a.name in names else "__init__" for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                found = [node.module]
            deps |= {m.split(".")[2] for m in found if m.startswith("argsim.backend.")}
        graph[path.stem] = deps - {path.stem}
    return graph


def cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of `graph` (depth-first search), [] when there is none."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                return path[path.index(dep):] + [dep]
            if dep not in state and (found := visit(dep)):
                return found
        state[node] = 2
        path.pop()
        return []

    return next((found for node in sorted(graph) if node not in state and (found := visit(node))), [])


def test_backend_has_no_import_cycle():
    """The backend is layered: the name table and manifests (names.py) at the bottom, loading (registry.py:
    get_encoder, get_cross_encoder, the one model cache) on top; no module imports the package face."""
    graph = backend_graph()
    assert cycle(graph) == []
    assert [m for m, deps in graph.items() if "__init__" in deps] == []
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]  # the check finds one


def module_graph() -> dict[str, set[str]]:
    """{argsim module: the argsim modules it imports} (imports anywhere in a module, each name resolved to the
    module that defines it)."""
    names = {".".join(p.relative_to(PKG.parent).with_suffix("").parts).removesuffix(".__init__"): p
             for p in PKG.rglob("*.py")}

    def module(name: str) -> str | None:
        while name and name not in names:
            name = name.rpartition(".")[0]
        return name or None

    def targets(path: Path) -> set[str]:  # `from a.b import c`: module a.b.c where it is one, else a.b
        out = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                out |= {module(a.name) for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                out |= {module(f"{node.module}.{a.name}") for a in node.names}
        return out

    return {m: {d for d in targets(p) if d and d != m} for m, p in names.items()}


#: each layer of docs/ARCHITECTURE.md: a module's layer is that of its longest listed prefix
LAYERS = {"argsim.metrics.record": 0, "argsim.vectors": 0, "argsim.config": 0, "argsim.options": 0,
          "argsim.errors": 0, "argsim.extras": 0, "argsim.io": 0, "argsim.schemas": 0, "argsim.progress": 0,
          "argsim.measure": 0, "argsim.version": 0, "argsim.paths": 0, "argsim.settings": 0, "argsim.published": 0,
          "argsim.markdown": 0, "argsim.metrics": 1, "argsim.data": 2, "argsim.backend": 3, "argsim.training": 4,
          "argsim.engine": 4, "argsim.kpm": 5, "argsim.counter": 5, "argsim.thematic": 5, "argsim.minutes": 5,
          "argsim.evaluation": 6, "argsim.trainers": 7, "argsim.results": 8, "argsim.report": 8, "argsim.html": 8,
          "argsim.modelbuild": 8, "argsim.benchmarks": 8, "argsim.demo": 8, "argsim.api": 8, "argsim": 8,
          "argsim.cli": 9}


def layer(module: str) -> int:
    return LAYERS[max((k for k in LAYERS if module == k or module.startswith(k + ".")), key=len)]


def test_argsim_has_no_import_cycle_and_no_import_up_a_layer():
    """No import cycle between argsim's modules; no import of a higher layer (a trainer, above the evaluators,
    takes its task's evaluator to choose checkpoints; the method packages import neither)."""
    graph = module_graph()
    assert cycle(graph) == []
    up = [f"{m} ({layer(m)}) imports {d} ({layer(d)})" for m, deps in graph.items() for d in sorted(deps)
          if layer(d) > layer(m)]
    assert up == []


def test_no_global_settings_object():
    """The run options travel as a RunConfig: no module reads (or defines) the old RUNTIME singleton."""
    assert [str(p.relative_to(PKG)) for p in PKG.rglob("*.py") if "RUNTIME" in p.read_text(encoding="utf-8")] == []


def test_importing_the_library_sets_no_run_state():
    code = ("import os; before = dict(os.environ); import argsim.results, argsim.report, argsim.backend, "
            "argsim.metrics.triplets, argsim.kpm.evaluate, argsim.minutes.evaluate; "
            "import argsim.api.kpm, argsim.api.counter, argsim.api.datasets, argsim.api.metrics; "
            "import argsim.settings; "
            "new = {k for k in os.environ if k not in before}; assert not new, new")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PKG.parent)
    assert res.returncode == 0, res.stderr


def test_library_layers_do_not_import_reporting():
    """Rows are made above the methods: no library layer imports results/report (measure.py has the timers)."""
    files = [p for folder in ("metrics", "data", "backend", "training", "engine", "kpm", "counter", "thematic",
                              "minutes") for p in modules(folder)]
    assert offending(files, ("argsim.results", "argsim.report")) == []


def test_no_deprecated_sentence_transformers_paths():
    """sentence-transformers 6 moved `models` / `evaluation` / `losses` under `sentence_transformer` (and `base`);
    the old paths still import with a DeprecationWarning (an error under pytest for argsim's code)."""
    old = ("sentence_transformers.models", "sentence_transformers.evaluation", "sentence_transformers.losses")
    found = offending(sorted(PKG.rglob("*.py")), old)
    found += [f"{p.relative_to(PKG.parent)} imports sentence_transformers.{name}" for p in sorted(PKG.rglob("*.py"))
              for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
              if isinstance(node, ast.ImportFrom) and node.module == "sentence_transformers"
              for name in [a.name for a in node.names] if name in ("models", "evaluation", "losses")]
    assert found == []


def test_only_the_cli_imports_the_api():
    """`argsim.api` sits on top of the method packages: no library layer imports it back (the CLI may)."""
    files = [p for p in PKG.rglob("*.py") if p.relative_to(PKG).parts[0] not in ("cli", "api", "__init__.py")]
    assert offending(files, ("argsim.api",)) == []


def test_api_imports_no_cli():
    assert offending(modules("api"), ("argsim.cli",)) == []


def test_import_argsim_is_cheap():
    """`import argsim` loads the public names lazily: neither torch nor pandas (nor the API modules) on import."""
    code = ("import sys, argsim; heavy = [m for m in ('torch', 'pandas', 'argsim.api.kpm') if m in sys.modules]; "
            "assert not heavy, heavy; assert callable(argsim.encode) and 'argsim.api.encode' in sys.modules")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PKG.parent)
    assert res.returncode == 0, res.stderr


def test_the_package_face():
    """`dir(argsim)` is its public names; the version is the installed package's (pyproject.toml); typed."""
    from importlib import metadata

    import argsim

    assert dir(argsim) == argsim.__all__ and "importlib" not in dir(argsim) and "TYPE_CHECKING" not in dir(argsim)
    assert argsim.__version__ == metadata.version("argsim")
    assert (PKG / "py.typed").is_file()
    import inspect

    untyped = []
    for name in argsim.__all__:
        obj = getattr(argsim, name)
        funcs = [obj] if inspect.isfunction(obj) else [f for n, f in inspect.getmembers(obj, inspect.isfunction)
                                                        if not n.startswith("_")] if inspect.isclass(obj) else []
        untyped += [f"{name}.{f.__name__}" for f in funcs if "return" not in f.__annotations__]
    assert untyped == []


EVALUATORS = [p for p in modules("evaluation") if p.name not in ("record.py", "__init__.py")]


def test_evaluators_sit_above_the_methods_and_below_the_api():
    """The task evaluators may call the backend, data, metrics and method packages, never the API, the CLI, the
    reporting or the runs above them."""
    above = ("argsim.api", "argsim.cli", "argsim.results", "argsim.report", "argsim.modelbuild", "argsim.benchmarks")
    assert EVALUATORS and offending(EVALUATORS, above) == []


def test_no_layer_below_the_evaluators_imports_one():
    """Only the result record (`argsim.metrics.record`, layer 0) is imported from below; the evaluators are not
    (the one exception, documented in docs/ARCHITECTURE.md: a method package's trainer takes its task's evaluator
    to choose checkpoints)."""
    below = [p for folder in ("metrics", "data", "backend", "training", "engine") for p in modules(folder)]
    below += [PKG / f"{m}.py" for m in ("results", "report", "published", "markdown", "config", "errors", "io")]
    evaluators = tuple(f"argsim.evaluation.{p.stem}" for p in EVALUATORS)
    evaluators += tuple(f"argsim.evaluation.{name}" for name in ("TaskEvaluator", "KPAMapEvaluator",
                                                                 "CounterArgumentEvaluator", "TripletEvaluator",
                                                                 "ClusteringEvaluator", "SICKEvaluator"))
    assert offending(below, evaluators) == []


def test_test_files_mirror_the_package_and_have_unique_names():
    """tests/ mirrors argsim's packages (tests/kpm for argsim/kpm, ...; project-wide tests at its root); pytest
    imports every test file as a top-level module (no __init__.py), so two files of one name would collide."""
    tests = PKG.parent / "tests"
    files = [p for p in tests.rglob("*.py") if "fixtures" not in p.parts]
    names = [p.name for p in files if p.name != "conftest.py"]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    packages = {p.name for p in PKG.iterdir() if (p / "__init__.py").is_file()} | {"shipped"}
    folders = {p.parent.name for p in files if p.parent != tests}
    assert folders <= packages, folders - packages


def test_building_the_cli_imports_no_model_library():
    """`argsim --help` and the option parsing load no model or data-frame library: the configs behind the options
    live in modules that import them when a run starts (and --quiet is applied before any library prints)."""
    heavy = ("torch", "transformers", "sentence_transformers", "datasets", "pandas", "tqdm")
    code = f"import sys; import argsim.cli.app; print([m for m in {heavy!r} if m in sys.modules])"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PKG.parent)
    assert res.returncode == 0 and res.stdout.strip() == "[]", res.stdout + res.stderr
