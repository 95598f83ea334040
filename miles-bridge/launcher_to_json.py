#!/usr/bin/env python3
"""Print the recipe a Miles-style Python launcher builds, as JSON, without running it.

The launcher is imported the way Miles' own launcher tests do (tests/fast/launch_scripts/py_harness.py):
by file path, under the module name "miles_launch_script_" + its repository-relative path without suffix
("/" -> "_"), so its top-level code runs (dataclasses, decorators, default factories) but its
`if __name__ == "__main__"` block does not. Then, like the terminus-compaction tests, it builds
`ScriptArgs(**fields)` and calls the private builders `_build_train_args(args)` and `_extra_env_vars(args)`.
Nothing is executed: no Ray, no subprocess.

Fields come as options in `dataclass_cli` form (a field `foo_bar` is `--foo-bar VALUE`; a bool field is
`--foo-bar` / `--no-foo-bar`), or from `MILES_SCRIPT_<FIELD>` env vars as dataclass_cli binds them (options
win), converted by the field's annotation (int, float, str, bool, Literal, Optional).

Usage: launcher_to_json.py --launcher PATH [--repo-root DIR] [-- OPTIONS...]

Prints one JSON object on stdout. On success {"ok": true, "argv": [...], "env": {...}, ...} and exit 0;
on failure {"ok": false, "error": {"kind": ..., "message": ..., "module": ...}} and exit 3, where kind is
module-not-found (with the missing module's name), import-error, launcher-raised, launcher-shape or bad-option.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib.util
import json
import os
import shlex
import sys
import traceback
import types
import typing
from pathlib import Path

MODULE_PREFIX = "miles_launch_script_"
ENV_PREFIX = "MILES_SCRIPT_"
EXIT_FAILED = 3


class LauncherFailure(Exception):
    def __init__(self, kind: str, message: str, **extra: object) -> None:
        super().__init__(message)
        self.kind = kind
        self.extra = extra


def find_repo_root(launcher: Path) -> Path:
    """The nearest ancestor that holds the `miles` package (what the launcher's imports need)."""
    for parent in launcher.parents:
        if (parent / "miles" / "__init__.py").is_file() or (parent / "miles" / "utils").is_dir():
            return parent
    return launcher.parent


def module_name(launcher: Path, root: Path) -> str:
    try:
        relative = launcher.relative_to(root)
    except ValueError:
        relative = Path(launcher.name)
    return MODULE_PREFIX + relative.with_suffix("").as_posix().replace("/", "_")


def import_launcher(launcher: Path, root: Path) -> types.ModuleType:
    sys.path.insert(0, str(root))
    name = module_name(launcher, root)
    spec = importlib.util.spec_from_file_location(name, launcher)
    if spec is None or spec.loader is None:
        raise LauncherFailure("import-error", f"cannot load {launcher} as a Python module")
    module = importlib.util.module_from_spec(spec)
    # Kept registered after it runs, so annotations (and `from __future__ import annotations`) resolve.
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except ModuleNotFoundError as error:
        missing = error.name or str(error)
        raise LauncherFailure(
            "module-not-found",
            f"importing the launcher needs the Python module '{missing}', which python3 cannot find",
            module=missing,
        ) from error
    except ImportError as error:
        raise LauncherFailure("import-error", f"importing the launcher failed: {error}", module=error.name) from error
    except Exception as error:  # noqa: BLE001 - any exception at import time is the launcher's own
        raise LauncherFailure("launcher-raised", f"the launcher raised while importing: {error!r}", trace=tail(error)) from error
    return module


def tail(error: BaseException) -> str:
    return "".join(traceback.format_exception(error)[-6:])


def unwrap_optional(hint: object) -> object:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return hint


def convert(field: str, hint: object, text: str) -> object:
    hint = unwrap_optional(hint)
    if typing.get_origin(hint) is typing.Literal:
        allowed = typing.get_args(hint)
        for choice in allowed:
            if str(choice) == text:
                return choice
        raise LauncherFailure("bad-option", f"--{field.replace('_', '-')} must be one of {', '.join(map(str, allowed))}; got {text!r}")
    try:
        if hint is int:
            return int(text)
        if hint is float:
            return float(text)
    except ValueError as error:
        raise LauncherFailure("bad-option", f"--{field.replace('_', '-')}: {error}") from error
    if hint is str or hint is typing.Any:
        return text
    raise LauncherFailure("bad-option", f"--{field.replace('_', '-')}: cannot convert text to {hint!r}")


CLICK_TRUE = {"1", "true", "t", "yes", "y", "on"}
CLICK_FALSE = {"0", "false", "f", "no", "n", "off"}


def env_fields(cls: type, hints: dict[str, object]) -> dict[str, object]:
    """Fields from MILES_SCRIPT_<FIELD> env vars, which dataclass_cli binds to every option; options win."""
    values: dict[str, object] = {}
    for field in dataclasses.fields(cls):
        text = os.environ.get(ENV_PREFIX + field.name.upper())
        if not field.init or not text:
            continue
        hint = unwrap_optional(hints.get(field.name))
        if hint is bool:
            word = text.strip().lower()
            if word not in CLICK_TRUE | CLICK_FALSE:
                raise LauncherFailure("bad-option", f"{ENV_PREFIX}{field.name.upper()}={text!r} is not a boolean word")
            values[field.name] = word in CLICK_TRUE
        else:
            values[field.name] = convert(field.name, hint, text)
    return values


def parse_fields(cls: type, tokens: list[str]) -> dict[str, object]:
    hints = typing.get_type_hints(cls)
    options: dict[str, tuple[str, bool]] = {}
    for field in dataclasses.fields(cls):
        if not field.init:
            continue
        option = "--" + field.name.replace("_", "-")
        options[option] = (field.name, False)
        if unwrap_optional(hints.get(field.name)) is bool:
            options["--no-" + field.name.replace("_", "-")] = (field.name, True)
    values = env_fields(cls, hints)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        explicit = None
        if token.startswith("--") and "=" in token:
            token, explicit = token.split("=", 1)
        if token not in options:
            raise LauncherFailure("bad-option", f"the launcher's ScriptArgs has no option {token}", known=sorted(options))
        name, negated = options[token]
        hint = unwrap_optional(hints.get(name))
        if hint is bool:
            if explicit is not None:
                raise LauncherFailure("bad-option", f"{token} is a switch and takes no value")
            values[name] = not negated
            i += 1
            continue
        if explicit is None:
            if i + 1 >= len(tokens):
                raise LauncherFailure("bad-option", f"{token} needs a value")
            explicit = tokens[i + 1]
            i += 1
        values[name] = convert(name, hint, explicit)
        i += 1
    return values


def jsonable(value: object) -> object:
    try:
        json.dumps(value)
        return value
    except TypeError:
        return str(value)


def build(launcher: Path, root: Path, tokens: list[str]) -> dict[str, object]:
    module = import_launcher(launcher, root)
    missing = [n for n in ("ScriptArgs", "_build_train_args", "_extra_env_vars") if not hasattr(module, n)]
    if missing:
        raise LauncherFailure("launcher-shape", f"the launcher does not define {', '.join(missing)}", missing=missing)
    fields = parse_fields(module.ScriptArgs, tokens)
    try:
        args = module.ScriptArgs(**fields)
        train_args = module._build_train_args(args)
        env = module._extra_env_vars(args)
    except LauncherFailure:
        raise
    except Exception as error:  # noqa: BLE001 - the launcher's own failure, reported as such
        raise LauncherFailure("launcher-raised", f"the launcher raised: {error!r}", trace=tail(error)) from error
    argv = shlex.split(train_args) if isinstance(train_args, str) else [str(t) for t in train_args]
    return {
        "format": "harness-launcher-recipe/1",
        "ok": True,
        "launcher": str(launcher),
        "module": module_name(launcher, root),
        "argv": argv,
        "env": {str(k): str(v) for k, v in dict(env or {}).items()},
        "fields": {f.name: jsonable(getattr(args, f.name)) for f in dataclasses.fields(args)},
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launcher", required=True)
    parser.add_argument("--repo-root")
    parser.add_argument("options", nargs=argparse.REMAINDER)
    ns = parser.parse_args(argv)
    options = ns.options[1:] if ns.options[:1] == ["--"] else ns.options
    launcher = Path(ns.launcher).resolve()
    try:
        if not launcher.is_file():
            raise LauncherFailure("import-error", f"no launcher file at {launcher}")
        root = Path(ns.repo_root).resolve() if ns.repo_root else find_repo_root(launcher)
        # Whatever the launcher prints (Miles' helpers print, e.g. "Skip wandb configuration") goes to
        # stderr, so stdout carries only the JSON.
        with contextlib.redirect_stdout(sys.stderr):
            result = build(launcher, root, options)
    except LauncherFailure as failure:
        error = {"kind": failure.kind, "message": str(failure), **{k: jsonable(v) for k, v in failure.extra.items()}}
        print(json.dumps({"ok": False, "error": error}))
        return EXIT_FAILED
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.dont_write_bytecode = True  # never leave __pycache__ in a Miles checkout
    sys.exit(main(sys.argv[1:]))
