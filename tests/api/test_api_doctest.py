"""Every Example in argsim's docstrings (every module, public API first) runs under doctest (real MiniLM; those
that read a dataset skip where the datasets are absent; an example marked `# doctest: +SKIP` on every line, one
that trains or downloads, is left out)."""

from __future__ import annotations

import doctest
import importlib.util
import pkgutil
from pathlib import Path

import pytest

import argsim

#: the public API's modules first (their examples name the package face), then every other module of argsim
PUBLIC = ["argsim", "argsim.api.datasets", "argsim.api.encode", "argsim.api.kpm", "argsim.api.counter",
          "argsim.api.thematic", "argsim.api.minutes", "argsim.api.metrics", "argsim.evaluation.mteb_tasks",
          "argsim.api.evaluate", "argsim.evaluation.kpa_map", "argsim.evaluation.counter",
          "argsim.evaluation.triplets", "argsim.evaluation.clustering", "argsim.evaluation.sick",
          "argsim.backend.resolve", "argsim.kpm.threshold", "argsim.minutes.summarize"]


def _has_examples(name: str) -> bool:
    """Whether the module's source holds a `>>>` line, read without importing it (collecting imports nothing
    heavy: each test imports its own module)."""
    spec = importlib.util.find_spec(name)
    return bool(spec and spec.origin and spec.origin.endswith(".py")
                and ">>>" in Path(spec.origin).read_text(encoding="utf-8"))


MODULES = [m for m in PUBLIC + sorted({m.name for m in pkgutil.walk_packages(argsim.__path__, "argsim.")}
                                      - set(PUBLIC)) if _has_examples(m)]
#: examples that read $ARGSIM_DATA
NEEDS_DATA = {"argsim.api.datasets.load_dataset", "argsim.api.kpm.KeyPointMatcher.evaluate",
              "argsim.api.counter.CounterRetriever.evaluate", "argsim.api.evaluate.evaluate",
              "argsim.evaluation.kpa_map.KPAMapEvaluator", "argsim.evaluation.counter.CounterArgumentEvaluator",
              "argsim.evaluation.sick.SICKEvaluator"}
FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


def examples(name: str) -> list[doctest.DocTest]:
    """The module's docstring examples, those marked `+SKIP` on every line left out; a module whose source holds
    `>>>` but in which none is found fails (a finder that finds nothing would pass every test)."""
    module = importlib.import_module(name)
    found = [test for test in doctest.DocTestFinder(exclude_empty=True).find(module, name)
             if test.examples and test.name.startswith(name)]
    assert found or name not in MODULES, f"{name}: `>>>` in its source, but no docstring example found"
    return [test for test in found if not all(ex.options.get(doctest.SKIP) for ex in test.examples)]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    from argsim.config import default_data_dir

    failures = []
    for n, test in enumerate(examples(name)):
        if test.name in NEEDS_DATA and not default_data_dir().is_dir():
            continue  # the datasets are absent
        (tmp_path / str(n)).mkdir()
        monkeypatch.chdir(tmp_path / str(n))  # an example that writes, writes here
        report: list[str] = []
        runner = doctest.DocTestRunner(optionflags=FLAGS)
        runner.run(test, out=report.append)
        if runner.failures:
            failures.append("".join(report))
    assert not failures, "\n".join(failures)


def test_every_public_name_has_a_running_example():
    import argsim

    names = {test.name for module in PUBLIC for test in examples(module)}
    for name in argsim.__all__:
        if name in ("__version__", "RunConfig"):
            continue
        module = argsim._EXPORTS[name]
        assert f"{module}.{name}" in names, f"{name} has no docstring example that runs"
