"""Every Example in argsim's docstrings (every module, public API first) runs under doctest (real MiniLM; those
that read a dataset skip where the datasets are absent; an example marked `# doctest: +SKIP` on every line, one
that trains or downloads, is left out)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import argsim

#: the public API's modules first (their examples name the package face), then every other module of argsim
PUBLIC = ["argsim", "argsim.api.datasets", "argsim.api.encode", "argsim.api.kpm", "argsim.api.counter",
          "argsim.api.thematic", "argsim.api.minutes", "argsim.api.metrics", "argsim.evaluation.mteb_tasks",
          "argsim.api.evaluate", "argsim.evaluation.kpa_map", "argsim.evaluation.counter",
          "argsim.evaluation.triplets", "argsim.evaluation.clustering", "argsim.evaluation.sick",
          "argsim.backend.resolve", "argsim.kpm.threshold", "argsim.minutes.summarize"]
MODULES = PUBLIC + sorted({m.name for m in pkgutil.walk_packages(argsim.__path__, "argsim.")} - set(PUBLIC))
#: examples that read $ARGSIM_DATA
NEEDS_DATA = {"argsim.api.datasets.load_dataset", "argsim.api.kpm.KeyPointMatcher.evaluate",
              "argsim.api.counter.CounterRetriever.evaluate", "argsim.api.evaluate.evaluate",
              "argsim.evaluation.kpa_map.KPAMapEvaluator", "argsim.evaluation.counter.CounterArgumentEvaluator",
              "argsim.evaluation.sick.SICKEvaluator"}
FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


def examples() -> list:
    finder = doctest.DocTestFinder(exclude_empty=True)
    out = []
    for name in MODULES:
        module = importlib.import_module(name)
        for test in finder.find(module, name):
            if test.examples and test.name.startswith(name) and not all(
                    ex.options.get(doctest.SKIP) for ex in test.examples):
                out.append(pytest.param(test, id=test.name))
    return out


@pytest.mark.parametrize("test", examples())
def test_docstring_example(test, request, tmp_path, monkeypatch):
    if test.name in NEEDS_DATA:
        request.getfixturevalue("data_dir")
    monkeypatch.chdir(tmp_path)  # an example that writes, writes here
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


def test_every_public_name_has_a_running_example():
    import argsim

    names = {p.id for p in examples()}
    for name in argsim.__all__:
        if name in ("__version__", "RunConfig"):
            continue
        module = argsim._EXPORTS[name]
        assert f"{module}.{name}" in names, f"{name} has no docstring example that runs"
