"""The dataset catalog: each loader module registers a `DatasetInfo`; `argsim data check` runs it."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from argsim.config import default_data_dir
from argsim.errors import ArgsimError, DataLayoutError, did_you_mean


@dataclass
class Stat:
    """One statistic of a dataset check; `expected` is the SOURCE.md figure (None = informative only)."""

    name: str
    value: int | float | str
    expected: int | float | str | None = None

    @property
    def ok(self) -> bool | None:
        return None if self.expected is None else self.value == self.expected


@dataclass
class DatasetInfo:
    """What argsim knows about one dataset: where it is published and the layout it expects."""

    name: str
    folder: str
    title: str
    published: str
    layout: list[str]
    check: Callable[[Path], list[Stat]]
    notes: list[str] = field(default_factory=list)


DATASETS: dict[str, DatasetInfo] = {}


def register_dataset(info: DatasetInfo) -> DatasetInfo:
    DATASETS[info.name] = info
    return info


def load_catalog() -> dict[str, DatasetInfo]:
    """Import every module of `argsim.data` so their datasets are registered."""
    import argsim.data as pkg

    for mod in pkgutil.iter_modules(pkg.__path__):
        if mod.name != "catalog":
            importlib.import_module(f"{pkg.__name__}.{mod.name}")
    return DATASETS


def data_root(data_dir: str | Path | None = None) -> Path:
    """The dataset root: the explicit argument (a command passes `--data-dir`), else `$ARGSIM_DATA`, else the
    per-user data folder (`argsim.config.default_data_dir`)."""
    root = Path(data_dir) if data_dir is not None else default_data_dir()
    if not root.is_dir():
        raise ArgsimError(f"{root}: dataset folder not found (pass --data-dir or set ARGSIM_DATA)")
    return root


def dataset_dir(name: str, data_dir: str | Path | None = None) -> Path:
    """The folder of dataset `name`, with its layout verified; errors say what is missing and where to get it."""
    catalog = load_catalog()
    if name not in catalog:
        raise ArgsimError(f"unknown dataset '{name}'{did_you_mean(name, catalog)}"
                          f": choose one of {', '.join(sorted(catalog))}")
    info = catalog[name]
    folder = data_root(data_dir) / info.folder
    if missing := [p for p in info.layout if not (folder / p).exists()]:
        shown = ", ".join(missing[:4]) + (f" (+{len(missing) - 4} more)" if len(missing) > 4 else "")
        raise DataLayoutError(f"{folder}: {info.title} layout incomplete, missing {shown}; "
                              f"get it from {info.published} and lay it out as docs/usage.md's 'Datasets' says")
    return folder


def check_dataset(name: str, data_dir: str | Path | None = None) -> list[Stat]:
    """Validate dataset `name` and return its statistics beside the SOURCE.md figures."""
    folder = dataset_dir(name, data_dir)  # an unknown name: one line, before DATASETS is indexed
    return DATASETS[name].check(folder)
