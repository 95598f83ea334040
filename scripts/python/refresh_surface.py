#!/usr/bin/env python3
"""Regenerate a miles-cli-surface/1 file from a Miles checkout (and a Megatron-LM checkout), statically.

Nothing from either checkout is imported or run: every file is parsed with Python's `ast` and the
argparse calls are read as source, the way the shipped surface was made (fixtures/miles-cli/PROVENANCE.md):

1. Megatron-LM's parser: explicit `add_argument(...)` calls, plus the flags `ArgumentGroupFactory(Config,
   exclude=[...]).build_group(parser)` generates from config dataclasses with Megatron's own rules (field
   `foo_bar` -> `--foo-bar`; Optional[X] -> X; list[X] -> nargs '+'; Literal -> choices; Enum -> member
   names; a bool defaulting to False -> store_true, any other bool -> store_false named `--no-foo-bar` with
   alias `--disable-foo-bar`; `metadata={"argparse_meta": {...}}` overrides).
2. Miles' flags: explicit `add_argument(...)` calls; `reset_arg(parser, "--name", default=...)` only changes
   the default of an existing Megatron flag (the record keeps source megatron and records megatron_default).
   Flags of `miles/rollout/generate_hub/<hook>.py` get scope `generate-hook:<hook>`; flags registered under
   `if HAVE_KITCHEN` get scope `megatron-kitchen-only`.
3. What no checkout holds is carried over from the previous surface unchanged: the SGLang server and router
   families (source sglang), the FSDP parser's dataclass-generated flags, per-record `fsdp_backend` and
   notes (`note`, `choices_note`, `type_note`, `default_note`), `prefix_rules`, `notes`, and the other
   `sources`. Overlay flags that the new Miles accepts are dropped
   from their overlay (an overlay left empty is dropped).

The files read are those named in the previous surface's `where` fields, the two entry points
(miles/utils/arguments.py, megatron/training/arguments.py), every generate hook under
miles/rollout/generate_hub/, and any `--scan` paths. `sources.miles` and
`sources.megatron` get the checkouts' HEAD commit and date (`git`), or `--miles-commit/--megatron-commit`.

Usage: refresh_surface.py --miles DIR [--megatron DIR] --previous FILE [--out FILE] [--scan REL]...
A summary of added, removed and changed flags goes to stderr.
"""

from __future__ import annotations

import argparse
import ast
import copy
import enum
import importlib
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

FORMAT = "miles-cli-surface/1"
MILES_ENTRY = "miles/utils/arguments.py"
MEGATRON_ENTRY = "megatron/training/arguments.py"
HOOK_DIR = "miles/rollout/generate_hub/"
CARRIED_KEYS = ("fsdp_backend", "note", "choices_note", "type_note", "default_note")
SWITCH_ACTIONS = {"store_true", "store_false", "store_const", "count", "help", "version"}


class RefreshError(Exception):
    pass


# ----------------------------------------------------------------------------------------------
# Reading values from source


def literal(node: ast.AST | None, text: str | None = None) -> tuple[object, bool]:
    """(value, True) for a literal; (its source text, on one line, False) for anything else."""
    if node is None:
        return None, True
    try:
        return ast.literal_eval(node), True
    except (ValueError, SyntaxError, TypeError):
        return source_of(node, text), False


def source_of(node: ast.AST, text: str | None) -> str:
    """The node as written in the file (quotes and spacing kept), or as `ast` prints it without the file."""
    segment = ast.get_source_segment(text, node) if text is not None else None
    if segment is None:
        return ast.unparse(node)
    return " ".join(line.strip() for line in segment.splitlines())


@dataclass
class Reader:
    """What resolving a value needs: the file's text, names assigned so far, and the checkout's classes."""

    text: str
    path: Path
    classes: "ClassIndex"
    assigned: dict[str, tuple[object, bool]] = field(default_factory=dict)

    def value(self, node: ast.AST | None) -> tuple[object, bool]:
        if isinstance(node, ast.Name) and node.id in self.assigned:
            return self.assigned[node.id]
        return literal(node, self.text)

    def choices(self, node: ast.AST | None) -> list[object] | None:
        """Literal choices, a name bound to them, or `[m.value for m in SomeEnum]`-style comprehensions."""
        if node is None:
            return None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("list", "tuple") and node.args:
            return self.choices(node.args[0])
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)) and len(node.generators) == 1:
            loop = node.generators[0]
            if isinstance(loop.iter, ast.Name) and isinstance(node.elt, ast.Attribute) and node.elt.attr in ("value", "name"):
                members = enum_members(loop.iter.id, self.path, self.classes)
                if members is not None:
                    return [v if node.elt.attr == "value" else k for k, v in members]
            return None
        value, ok = self.value(node)
        return list(value) if ok and isinstance(value, (list, tuple, set)) else None


def enum_members(name: str, path: Path, classes: "ClassIndex") -> list[tuple[str, object]] | None:
    found = classes.find(name, path)
    if not found:
        return None
    members = []
    for stmt in found[0].body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            member = stmt.targets[0].id
            if not member.startswith("_"):
                members.append((member, literal(stmt.value)[0]))
    return members


def action_name(node: ast.AST | None) -> str | None:
    if node is None:
        return None
    value, ok = literal(node)
    if ok and isinstance(value, str):
        return value
    text = ast.unparse(node)
    return "BooleanOptionalAction" if text.endswith("BooleanOptionalAction") else text


def make_record(
    names: list[str], kwargs: dict[str, ast.AST], where: str, source: str, scope: str, reader: Reader
) -> dict[str, object] | None:
    longs = [n for n in names if n.startswith("--")]
    if not longs:
        return None
    action = action_name(kwargs.get("action"))
    nargs, _ = literal(kwargs.get("nargs"))
    dest, dest_ok = literal(kwargs.get("dest"))
    record: dict[str, object] = {
        "flag": longs[0],
        "aliases": longs[1:],
        "dest": dest if dest_ok and isinstance(dest, str) else longs[0][2:].replace("-", "_"),
    }
    extra: dict[str, object] = {}
    if action in ("store_true", "store_false"):
        kind = action
    elif action == "BooleanOptionalAction":
        kind = "boolean_optional"
        negated = "--no-" + longs[0][2:]
        if negated not in record["aliases"]:
            record["aliases"] = [*record["aliases"], negated]
    elif action == "append":
        kind = "append"
    elif action in SWITCH_ACTIONS:
        kind = "store_true"
    elif nargs is not None:
        kind = "store_true" if nargs == 0 else "nargs"
    else:
        kind = "value"
    if action is not None and action not in ("store_true", "store_false", "append", "BooleanOptionalAction", "store"):
        extra["action"] = action
    if kind == "store_true" and nargs == 0:
        nargs = None
    type_node = kwargs.get("type")
    choices = reader.choices(kwargs.get("choices"))
    if "default" in kwargs:
        default, default_ok = reader.value(kwargs["default"])
    else:
        default, default_ok = ({"store_true": False, "store_false": True}.get(kind), True)
    record.update(
        {
            "kind": kind,
            "nargs": nargs if kind in ("nargs", "append") else None,
            "type": source_of(type_node, reader.text) if type_node is not None else None,
            "choices": choices,
            "default": default,
            "default_is_literal": default_ok,
            "source": source,
            "scope": scope,
            "where": where,
        }
    )
    if kwargs.get("choices") is not None and choices is None:
        extra["choices_note"] = f"choices not statically known: {source_of(kwargs['choices'], reader.text)}"
    if kind == "boolean_optional" and record["type"] is not None:
        # BooleanOptionalAction takes no value, so a type= never converts anything.
        extra["type_source"], record["type"] = record["type"], None
    if "const" in kwargs:
        extra["const"] = reader.value(kwargs["const"])[0]
    required, _ = literal(kwargs.get("required"))
    if required is True:
        extra["required"] = True
    record.update(extra)
    return record


# ----------------------------------------------------------------------------------------------
# Walking parser files


@dataclass
class FileScan:
    records: list[dict[str, object]] = field(default_factory=list)
    resets: list[tuple[str, dict[str, ast.AST], str, str, Reader]] = field(default_factory=list)
    factories: list[tuple[str, list[str], str, ast.Module, Path]] = field(default_factory=list)


class ParserVisitor(ast.NodeVisitor):
    def __init__(self, rel: str, source: str, default_scope: str, tree: ast.Module, path: Path, reader: Reader) -> None:
        self.rel = rel
        self.reader = reader
        self.source = source
        self.default_scope = default_scope
        self.tree = tree
        self.path = path
        self.functions: list[str] = []
        self.conditions: list[str] = []
        self.scan = FileScan()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:  # noqa: N802 - ast API
        self.functions.append(node.name)
        self.generic_visit(node)
        self.functions.pop()

    visit_AsyncFunctionDef = visit_FunctionDef  # noqa: N815

    def visit_If(self, node: ast.If) -> None:  # noqa: N802
        self.conditions.append(ast.unparse(node.test))
        for child in node.body:
            self.visit(child)
        self.conditions.pop()
        for child in node.orelse:
            self.visit(child)

    def where(self, node: ast.AST) -> str:
        function = self.functions[-1] if self.functions else "<module>"
        return f"{self.rel}:{node.lineno} ({function})"

    def scope(self) -> str:
        if any("KITCHEN" in c for c in self.conditions):
            return "megatron-kitchen-only"
        return self.default_scope

    def visit_Call(self, node: ast.Call) -> None:  # noqa: N802
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        kwargs = {k.arg: k.value for k in node.keywords if k.arg is not None}
        if name == "add_argument" and isinstance(func, ast.Attribute):
            names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            record = make_record(names, kwargs, self.where(node), self.source, self.scope(), self.reader)
            if record is not None:
                self.scan.records.append(record)
        elif name == "reset_arg" and len(node.args) >= 2:
            flag, ok = literal(node.args[1])
            if ok and isinstance(flag, str):
                self.scan.resets.append((flag, kwargs, self.where(node), self.scope(), self.reader))
        elif name == "ArgumentGroupFactory" and node.args:
            # Whether chained (`ArgumentGroupFactory(C).build_group(p)`) or kept in a variable first, a
            # factory exists to build its group; `exclude` may name a list assigned earlier.
            exclude_node = kwargs.get("exclude")
            exclude, ok = self.reader.value(exclude_node)
            excluded = list(exclude) if ok and isinstance(exclude, (list, tuple, set)) else []
            self.scan.factories.append((ast.unparse(node.args[0]), excluded, self.where(node), self.tree, self.path))
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:  # noqa: N802
        value = literal(node.value)
        for target in node.targets:
            if isinstance(target, ast.Name) and value[1]:
                self.reader.assigned[target.id] = value
        self.generic_visit(node)


def kwargs_of(call: ast.Call) -> dict[str, ast.AST]:
    return {k.arg: k.value for k in call.keywords if k.arg is not None}


def scan_file(root: Path, rel: str, source: str, classes: "ClassIndex") -> FileScan:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text, filename=str(path))
    if rel.startswith(HOOK_DIR):
        source, scope = "miles-generate-hook", f"generate-hook:{Path(rel).stem}"
    else:
        scope = "always"
    visitor = ParserVisitor(rel, source, scope, tree, path, Reader(text, path, classes))
    visitor.visit(tree)
    return visitor.scan


# ----------------------------------------------------------------------------------------------
# Megatron's dataclass-generated flags (ArgumentGroupFactory), read statically


class ClassIndex:
    """Finds class definitions by following a module's imports inside one checkout."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.parsed: dict[Path, ast.Module] = {}
        self.texts: dict[Path, str] = {}

    def module(self, path: Path) -> ast.Module:
        if path not in self.parsed:
            self.parsed[path] = ast.parse(self.text_of(path), filename=str(path))
        return self.parsed[path]

    def text_of(self, path: Path) -> str:
        if path not in self.texts:
            self.texts[path] = path.read_text(encoding="utf-8")
        return self.texts[path]

    def module_path(self, dotted: str, level: int, here: Path) -> Path | None:
        base = here.parent
        for _ in range(max(level - 1, 0)):
            base = base.parent
        parts = dotted.split(".") if dotted else []
        start = base if level > 0 else self.root
        candidate = start.joinpath(*parts)
        for path in (candidate.with_suffix(".py"), candidate / "__init__.py"):
            if path.is_file():
                return path
        return None

    def find(self, name: str, path: Path, depth: int = 0) -> tuple[ast.ClassDef, Path] | None:
        if depth > 8:
            return None
        tree = self.module(path)
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return node, path
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        target = self.module_path(node.module or "", node.level, path)
                        if target is not None:
                            found = self.find(alias.name, target, depth + 1)
                            if found:
                                return found
        return None


def annotation_kwargs(node: ast.AST, cls_path: Path, index: ClassIndex) -> dict[str, object] | None:
    """Megatron's _extract_type, on source: None when argparse could not be told the type."""
    text = ast.unparse(node)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return annotation_kwargs(ast.parse(node.value, mode="eval").body, cls_path, index)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        parts = [node.left, node.right]
        others = [p for p in parts if ast.unparse(p) != "None"]
        return annotation_kwargs(others[0], cls_path, index) if len(others) == 1 else None
    if isinstance(node, ast.Subscript):
        head = ast.unparse(node.value).split(".")[-1]
        inner = node.slice
        if head == "Optional":
            return annotation_kwargs(inner, cls_path, index)
        if head == "Union":
            items = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            others = [p for p in items if ast.unparse(p) != "None"]
            return annotation_kwargs(others[0], cls_path, index) if len(others) == 1 else None
        if head in ("list", "List"):
            kw = annotation_kwargs(inner, cls_path, index)
            return None if kw is None else {**kw, "nargs": "+"}
        if head == "Literal":
            items = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            values = [literal(i)[0] for i in items]
            return {"type": type(values[0]).__name__ if values else "str", "choices": values}
        return None
    if text in ("int", "float", "str", "bool"):
        return {"type": text}
    stdlib = stdlib_enum(text)
    if stdlib is not None:
        return {"type": f"{text}[<member name>]", "choices": stdlib}
    found = index.find(text.split(".")[-1], cls_path)
    if found and any(ast.unparse(b).split(".")[-1] in ("Enum", "IntEnum", "StrEnum") for b in found[0].bases):
        members = [
            t.id
            for stmt in found[0].body
            if isinstance(stmt, ast.Assign)
            for t in stmt.targets
            if isinstance(t, ast.Name) and not t.id.startswith("_")
        ]
        return {"type": f"{found[0].name}[<member name>]", "choices": members}
    return None


def stdlib_enum(dotted: str) -> list[str] | None:
    """Members of an Enum from Python's standard library (e.g. signal.Signals); checkout code is never imported."""
    module, _, name = dotted.rpartition(".")
    if not module or module.split(".")[0] not in sys.stdlib_module_names:
        return None
    try:
        value = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None
    return [m.name for m in value] if isinstance(value, type) and issubclass(value, enum.Enum) else None


def dataclass_fields(cls: ast.ClassDef, path: Path, index: ClassIndex) -> list[tuple[ast.AnnAssign, ast.ClassDef, Path]]:
    """Fields in dataclasses.fields() order: the first base's fields first, a redefinition keeps its place."""
    ordered: dict[str, tuple[ast.AnnAssign, ast.ClassDef, Path]] = {}
    if cls.bases:
        base = index.find(ast.unparse(cls.bases[0]).split(".")[-1], path)
        if base:
            for item in dataclass_fields(base[0], base[1], index):
                ordered[item[0].target.id] = item  # type: ignore[union-attr]
    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            if "ClassVar" in ast.unparse(stmt.annotation):
                continue
            ordered[stmt.target.id] = (stmt, cls, path)
    return list(ordered.values())


def factory_records(
    cls_name: str, exclude: list[str], where_call: str, tree_path: Path, root: Path, index: ClassIndex
) -> list[dict[str, object]]:
    found = index.find(cls_name.split(".")[-1], tree_path)
    if not found:
        raise RefreshError(f"ArgumentGroupFactory({cls_name}) at {where_call}: class not found in the checkout")
    cls, cls_path = found
    records = []
    for stmt, owner, owner_path in dataclass_fields(cls, cls_path, index):
        name = stmt.target.id  # type: ignore[union-attr]
        if name in exclude:
            continue
        value = stmt.value
        default_node = value
        meta: dict[str, object] = {}
        if isinstance(value, ast.Call) and ast.unparse(value.func).split(".")[-1] == "field":
            kw = kwargs_of(value)
            if literal(kw.get("init"))[0] is False:
                continue
            default_node = kw.get("default")
            if default_node is None and "default_factory" in kw:
                factory = source_of(kw["default_factory"], index.text_of(owner_path))
                simple = {"list": "[]", "dict": "{}"}.get(factory)
                default_node = ast.parse(simple, mode="eval").body if simple else ast.Name(id=f"<default_factory {factory}>()")
            metadata, ok = literal(kw.get("metadata"))
            if ok and isinstance(metadata, dict) and isinstance(metadata.get("argparse_meta"), dict):
                meta = dict(metadata["argparse_meta"])
            elif kw.get("metadata") is not None and "argparse_meta" in ast.unparse(kw["metadata"]):
                meta = source_meta(kw["metadata"])
        default, default_ok = (
            (default_node.id, False)
            if isinstance(default_node, ast.Name) and default_node.id.startswith("<default_factory")
            else literal(default_node, index.text_of(owner_path))
        )
        kwargs = annotation_kwargs(stmt.annotation, owner_path, index)
        if kwargs is None and not meta:
            continue  # Megatron raises TypeInferenceError; such a field is not a CLI flag
        kwargs = dict(kwargs or {})
        names = ["--" + name.replace("_", "-")]
        if kwargs.get("type") == "bool":
            kwargs.pop("type")
            if default is False:
                kind = "store_true"
            else:
                kind = "store_false"
                names = ["--no-" + name.replace("_", "-"), "--disable-" + name.replace("_", "-")]
        else:
            kind = "nargs" if "nargs" in kwargs else "value"
        rel_owner = owner_path.relative_to(root).as_posix()
        record: dict[str, object] = {
            "flag": names[0],
            "aliases": names[1:],
            "dest": name,
            "kind": kind,
            "nargs": kwargs.get("nargs"),
            "type": kwargs.get("type"),
            "choices": kwargs.get("choices"),
            "default": default if kind != "store_true" else False,
            "default_is_literal": default_ok,
            "source": "megatron",
            "scope": "always",
            "where": f"{rel_owner}:{stmt.lineno} ({cls.name}.{name} via ArgumentGroupFactory in {where_call.replace(' (', ' ').rstrip(')')})",
        }
        apply_meta(record, meta)
        records.append(record)
    return records


def source_meta(node: ast.AST) -> dict[str, object]:
    """argparse_meta whose values are not all literals: keep names, nargs and the type's source text."""
    if not isinstance(node, ast.Dict):
        return {}
    for key, value in zip(node.keys, node.values):
        if isinstance(key, ast.Constant) and key.value == "argparse_meta" and isinstance(value, ast.Dict):
            out: dict[str, object] = {}
            for k, v in zip(value.keys, value.values):
                if isinstance(k, ast.Constant) and isinstance(k.value, str):
                    lit, ok = literal(v)
                    out[k.value] = lit if ok else ast.unparse(v)
            return out
    return {}


def apply_meta(record: dict[str, object], meta: dict[str, object]) -> None:
    names = meta.get("arg_names")
    if isinstance(names, list) and names:
        record["flag"], record["aliases"] = names[0], list(names[1:])
    for key in ("dest", "type", "choices", "default"):
        if key in meta:
            record[key] = meta[key] if key != "type" else str(meta[key])
    if "nargs" in meta:
        record["nargs"] = meta["nargs"]
        record["kind"] = "nargs" if meta["nargs"] is not None else record["kind"]
    if meta.get("action") in ("store_true", "store_false"):
        record["kind"], record["nargs"], record["type"] = meta["action"], None, None


# ----------------------------------------------------------------------------------------------
# Putting it together


def git_source(root: Path, commit: str | None, date: str | None, option: str) -> tuple[str, str | None]:
    if commit:
        return commit, date
    def git(*words: str) -> str:
        return subprocess.run(["git", "-C", str(root), *words], capture_output=True, text=True, check=True).stdout.strip()

    try:
        # Only the checkout's own root counts: a folder inside some other repository has no commit of its own.
        if Path(git("rev-parse", "--show-toplevel")).resolve() != root:
            raise RefreshError(f"cannot tell the commit of {root}: it is not the root of a git checkout; pass {option}")
        return git("rev-parse", "HEAD"), date or git("log", "-1", "--format=%cI")
    except (OSError, subprocess.CalledProcessError) as error:
        raise RefreshError(f"cannot tell the commit of {root}: not a git checkout; pass {option}") from error


def files_to_scan(previous: dict, prefix: str, entry: str, extra: list[str], root: Path) -> list[str]:
    paths = {entry, *extra}
    for record in previous["flags"]:
        where = str(record.get("where", ""))
        first = where.split(" ")[0].split(":")[0]
        if first.startswith(prefix) and first.endswith(".py"):
            paths.add(first)
    return sorted(p for p in paths if (root / p).is_file())


def carried(record: dict) -> bool:
    """Records no checkout of Miles or Megatron can regenerate."""
    return record["source"] == "sglang" or "generated from FSDPArgs" in str(record["where"])


def refresh(args: argparse.Namespace) -> tuple[dict, list[str]]:
    previous = json.loads(Path(args.previous).read_text(encoding="utf-8"))
    if previous.get("format") != FORMAT:
        raise RefreshError(f"{args.previous} is not a {FORMAT} file")
    miles = Path(args.miles).resolve()
    megatron = Path(args.megatron).resolve() if args.megatron else None
    by_flag: dict[str, dict] = {}

    def put(record: dict) -> None:
        by_flag[record["flag"]] = record

    if megatron is not None:
        index = ClassIndex(megatron)
        for rel in files_to_scan(previous, "megatron/", MEGATRON_ENTRY, [], megatron):
            scan = scan_file(megatron, rel, "megatron", index)
            for record in scan.records:
                put(record)
            for cls, exclude, where, _tree, path in scan.factories:
                for record in factory_records(cls, exclude, where, path, megatron, index):
                    put(record)
    else:
        for record in previous["flags"]:
            if record["source"] == "megatron":
                put(copy.deepcopy(record))

    resets: list[tuple[str, dict, str, str, Reader]] = []
    miles_classes = ClassIndex(miles)
    hooks = sorted(p.relative_to(miles).as_posix() for p in (miles / HOOK_DIR).glob("*.py"))
    for rel in files_to_scan(previous, "miles/", MILES_ENTRY, [*hooks, *args.scan], miles):
        scan = scan_file(miles, rel, "miles", miles_classes)
        for record in scan.records:
            if rel.startswith("miles/backends/fsdp_utils/"):
                record["scope"] = "fsdp-only"
            put(record)
        resets.extend(scan.resets)
    for flag, kwargs, where, scope, reader in resets:
        record = by_flag.get(flag)
        if record is None:
            # reset_arg adds the flag when Megatron has none by that name.
            added = make_record([flag], kwargs, f"{where} (via reset_arg: Megatron has no such flag, so Miles adds it)", "miles", scope, reader)
            if added is not None:
                put(added)
            continue
        if "default" in kwargs:
            record["megatron_default"] = record.get("default")
            record["default"], record["default_is_literal"] = reader.value(kwargs["default"])
            record["where"] = f"{record['where']}; default reset by Miles reset_arg at {where}"
        else:
            record["where"] = f"{record['where']}; Miles reset_arg at {where} (no default given: nothing changed)"

    old = {r["flag"]: r for r in previous["flags"]}
    for record in previous["flags"]:
        if carried(record) and record["flag"] not in by_flag:
            put(copy.deepcopy(record))
    for flag, record in by_flag.items():
        before = old.get(flag) or {}
        # What the source cannot say (the FSDP parser's view, people's notes) stays as it was.
        for key in CARRIED_KEYS:
            if key in before and key not in record:
                record[key] = copy.deepcopy(before[key])

    names = {n for r in by_flag.values() for n in [r["flag"], *r["aliases"]]}
    overlays = []
    report: list[str] = []
    for overlay in previous.get("overlays", []):
        kept = [f for f in overlay["flags"] if f["flag"] not in names]
        for landed in (f for f in overlay["flags"] if f["flag"] in names):
            report.append(f"overlay flag now accepted by Miles itself, dropped from its overlay: {landed['flag']}")
        if kept:
            overlays.append({**overlay, "flags": kept})
        else:
            report.append(f"overlay {overlay['evidence']} dropped: all its flags landed")

    sources = copy.deepcopy(previous["sources"])
    sha, date = git_source(miles, args.miles_commit, args.miles_date, "--miles-commit")
    sources["miles"] = {**sources.get("miles", {}), "commit": sha, "date": date}
    if megatron is not None:
        sha, date = git_source(megatron, args.megatron_commit, args.megatron_date, "--megatron-commit")
        sources["megatron"] = {**sources.get("megatron", {}), "commit": sha, "date": date}

    flags = sorted(by_flag.values(), key=lambda r: r["flag"])
    result = {**previous, "sources": sources, "flags": flags, "overlays": overlays}
    new = {r["flag"]: r for r in flags}
    added = sorted(set(new) - set(old))
    removed = sorted(set(old) - set(new))
    changed = sorted(f for f in set(new) & set(old) if shape(new[f]) != shape(old[f]))
    report[:0] = [
        f"flags: {len(flags)} ({len(added)} added, {len(removed)} removed, {len(changed)} changed in shape)",
        *(f"added: {f}" for f in added),
        *(f"removed: {f}" for f in removed),
        *(f"changed: {f}" for f in changed),
    ]
    return result, report


def shape(record: dict) -> tuple:
    """What a check depends on; `where` and notes may move without the flag changing."""
    return tuple(json.dumps(record.get(k), sort_keys=True) for k in ("aliases", "dest", "kind", "nargs", "type", "choices", "default", "scope"))


# The surface schema's rule for a commit (recipe/drift/surface-schema.ts): 7 to 40 lowercase hex digits.
COMMIT = re.compile(r"[0-9a-f]{7,40}")


def usage_problems(args: argparse.Namespace) -> list[str]:
    """Usage errors found before any work: a folder that is not the checkout it claims to be (which would
    otherwise read as every flag removed), a commit the harness would refuse later, a missing input."""
    problems = []
    for option, root, entry in (("--miles", args.miles, MILES_ENTRY), ("--megatron", args.megatron, MEGATRON_ENTRY)):
        if root is None:
            continue
        path = Path(root)
        if not path.is_dir():
            problems.append(f"{option} {root}: no such folder; expected a checkout containing {entry}")
        elif not (path / entry).is_file():
            problems.append(f"{option} {root}: has no {entry}; expected the checkout's root folder")
    for option, commit in (("--miles-commit", args.miles_commit), ("--megatron-commit", args.megatron_commit)):
        if commit is not None and not COMMIT.fullmatch(commit):
            problems.append(f"{option} {commit!r}: expected a commit of 7 to 40 lowercase hex digits")
    if not Path(args.previous).is_file():
        problems.append(f"--previous {args.previous}: no such file; expected the current surface file")
    if args.out is not None and not Path(args.out).resolve().parent.is_dir():
        problems.append(f"--out {args.out}: its folder does not exist; expected a path in an existing folder")
    return problems


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="refresh-surface", description="Regenerate a miles-cli-surface/1 file from checkouts, statically.")
    parser.add_argument("--miles", required=True, help="a Miles checkout")
    parser.add_argument("--megatron", help="a Megatron-LM checkout (branch miles-main); without it Megatron records are kept")
    parser.add_argument("--previous", required=True, help="the current surface file (format, provenance and SGLang records)")
    parser.add_argument("--out", help="where to write the new surface (default: stdout)")
    parser.add_argument("--scan", action="append", default=[], help="another Miles file (repository-relative) that adds flags")
    parser.add_argument("--miles-commit")
    parser.add_argument("--miles-date")
    parser.add_argument("--megatron-commit")
    parser.add_argument("--megatron-date")
    args = parser.parse_args(argv)
    problems = usage_problems(args)
    if problems:
        parser.print_usage(sys.stderr)
        for problem in problems:
            print(f"refresh-surface: {problem}", file=sys.stderr)
        return 2
    try:
        result, report = refresh(args)
    except (RefreshError, OSError, SyntaxError, json.JSONDecodeError) as error:
        print(f"refresh-surface: {error}", file=sys.stderr)
        return 2
    text = json.dumps(result, indent=1, ensure_ascii=False) + "\n"
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    for line in report:
        print(f"refresh-surface: {line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.dont_write_bytecode = True
    sys.exit(main(sys.argv[1:]))
