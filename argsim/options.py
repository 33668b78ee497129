"""Settings declared once: a trainer's config dataclass is the single source of its options.

Each field of a config dataclass (`argsim.trainers.kpm_sbert.SbertConfig`,
`argsim.trainers.minutes_sbert.MinutesTrainConfig`, ...) carries its type, its default (the recommended setting)
and, in its metadata, its help text, bounds and command-line name. The CLI turns the fields into the options of
the train command (`argsim.cli.params.config_options`), and `argsim models build` turns a recipe's config (a preset
over the same dataclass) back into a command line (`config_argv`), so a setting is written in one place.

Metadata keys: `help` (text), `min` / `max` (bounds checked by the parser), `option` (the option's name when it
differs from `--field-name`, e.g. "--max-seq-length"; a boolean's is "--on/--off"; a tuple for a short name too,
e.g. ("--quiet", "-q")), `aliases` (older spellings still accepted, hidden from `--help`), `cli` (False: not an
option; set from elsewhere, e.g. the seed from the global `--seed`), `envvar` (an environment variable the option
reads), `output` ("file" / "folder": an output the command line checks before any work), `exists` / `dir_okay`
(an input path that must exist / may be a folder), `model` (True: a model name, checked as the options are
parsed, before any data is read: `argsim.cli.params.check_model_names`; a folder is checked by its loader).
"""

from __future__ import annotations

import functools
import math
import numbers
import os
import types
import typing
from dataclasses import MISSING, Field, field, fields
from pathlib import Path
from typing import Any, Literal

from argsim.errors import ArgsimError, did_you_mean


def setting(default: Any, help: str, **metadata: Any) -> Any:
    """A dataclass field with its default and its option's metadata (see the module docstring).

    Args:
        default: the default value (the recommended setting); a list default is copied per instance.
        help: the option's help text.
        **metadata: `min`, `max`, `option`, `aliases`, `cli` (see the module docstring).

    Returns:
        A `dataclasses.field`.

    Example:
        >>> from dataclasses import dataclass, fields
        >>> @dataclass
        ... class Demo:
        ...     epochs: int = setting(3, "Passes over the data.", min=1)
        >>> fields(Demo)[0].metadata["help"]
        'Passes over the data.'
    """
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata={"help": help, **metadata})
    return field(default=default, metadata={"help": help, **metadata})


def is_option(f: Field) -> bool:
    """Whether a config field is a command-line option (metadata `cli` is not False)."""
    return f.init and f.metadata.get("cli", True) is not False


def option_decls(f: Field) -> tuple[str, ...]:
    """The field's option names: metadata `option` (a name or a tuple of names), else `--field-name`
    (`--name/--no-name` for a boolean)."""
    if name := f.metadata.get("option"):
        return tuple(name) if isinstance(name, tuple | list) else (name,)
    flag = "--" + f.name.replace("_", "-")
    return (f"{flag}/--no-{flag[2:]}",) if f.type in (bool, "bool") else (flag,)


def option_name(f: Field) -> str:
    """The field's (first) option name (see `option_decls`)."""
    return option_decls(f)[0]


def field_default(f: Field) -> Any:
    """A field's default value (`MISSING` when it has none)."""
    return f.default if f.default_factory is MISSING else f.default_factory()  # a default, a factory or neither


def config_argv(config: Any, exclude: tuple[str, ...] = ()) -> list[str]:
    """The command-line arguments that set `config`'s fields that differ from their defaults.

    Args:
        config: a config dataclass instance (a preset).
        exclude: fields left out (e.g. ones the command sets itself).

    Returns:
        Arguments in field order: `--name value`, the on/off flag of a boolean, one `--name value` per list item.

    Raises:
        ValueError: a changed field that no option can express (not an option, or None where the default is not).

    Example:
        >>> from dataclasses import dataclass
        >>> @dataclass
        ... class Demo:
        ...     epochs: int = setting(3, "Passes.")
        ...     distance: str = setting("cosine", "Distance.")
        >>> config_argv(Demo(epochs=1))
        ['--epochs', '1']
    """
    argv: list[str] = []
    for f in fields(config):
        value = getattr(config, f.name)
        if f.name in exclude or value == field_default(f):
            continue
        if not is_option(f):
            raise ValueError(f"{type(config).__name__}.{f.name} is no command-line option; it cannot be preset")
        flag = option_name(f)
        if isinstance(value, bool):
            on, _, off = flag.partition("/")
            argv.append(on if value else off)
        elif value is None:
            raise ValueError(f"{type(config).__name__}.{f.name}: None cannot be given on the command line")
        else:  # a list: one `--name value` per item
            for item in value if isinstance(value, list | tuple) else [value]:
                argv += [flag, repr(item) if isinstance(item, float) else str(item)]
    return argv


_hints = functools.cache(typing.get_type_hints)


#: a field type -> the classes its values may be (containers and other types are not checked)
_KINDS: dict[Any, tuple[type, ...]] = {type(None): (type(None),), bool: (bool,), int: (numbers.Integral,),
                                       float: (numbers.Real,), str: (str,), Path: (str, os.PathLike)}


def _accepts(hint: Any, value: Any) -> bool:
    """Whether `value` is of the field type `hint` (a bool is no number)."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return any(_accepts(h, value) for h in typing.get_args(hint))
    if typing.get_origin(hint) is Literal:
        return value in typing.get_args(hint)
    kinds = _KINDS.get(hint)
    return kinds is None or (isinstance(value, kinds) and (hint is bool or not isinstance(value, bool)))


def _describe(hint: Any) -> str:
    """A field type in words: `int or None`, `one of 'fit', 'truncate'`."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return " or ".join(_describe(h) for h in typing.get_args(hint))
    if typing.get_origin(hint) is Literal:
        return "one of " + ", ".join(map(repr, typing.get_args(hint)))
    return "None" if hint is type(None) else getattr(hint, "__name__", str(hint))


def check_settings(config: Any) -> None:
    """ArgsimError (one line) for a field of the config dataclass `config` whose value is not of its declared type
    (a misspelt choice gets the nearest one), is NaN, or lies outside its bounds (metadata `min` / `max`): a config
    built in Python is refused where the command line's parser refuses the same value.

    Example:
        >>> from argsim.config import RunConfig
        >>> RunConfig(seed=-1)
        Traceback (most recent call last):
        ...
        argsim.errors.ArgsimError: RunConfig seed (--seed) -1: must be at least 0
    """
    for f in fields(config):
        value, where = getattr(config, f.name), f"{type(config).__name__} {f.name} ({option_name(f)})"
        if (hint := _hints(type(config)).get(f.name)) is not None and not _accepts(hint, value):
            choices = [c for c in typing.get_args(hint) if isinstance(c, str)] if isinstance(value, str) else []
            raise ArgsimError(f"{where} {value!r}{did_you_mean(value, choices) if choices else ''}: expected "
                              f"{_describe(hint)}, found {type(value).__name__}")
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            if math.isnan(value):
                raise ArgsimError(f"{where}: NaN is no setting")
            low, high = f.metadata.get("min"), f.metadata.get("max")
            if low is not None and value < low:
                raise ArgsimError(f"{where} {value!r}: must be at least {low}")
            if high is not None and value > high:
                raise ArgsimError(f"{where} {value!r}: must be at most {high}")
