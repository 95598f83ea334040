#!/usr/bin/env python3
"""Convert the debug dumps of a Miles run to JSON for the harness's smoke validator.

Reads what `--dump-details DIR` makes Miles write (radixark/miles@31f1ca96):
  DIR/rollout_data/<step>.pt        dict(rollout_id, metadata, samples=[Sample.to_dict(), ...])
  DIR/train_data/<step>_<rank>.pt   dict(rollout_id, rank, rollout_data={column: ...}, cp_rank, cp_size, qkv_format)
and writes, under OUT:
  OUT/rollout_data/<step>.json      {"kind": "rollout_data", "source", "rollout_id", "metadata", "samples"}
  OUT/train_data/<step>_<rank>.json {"kind": "train_data", "source", "rollout_id", "rank", "cp_rank", "cp_size",
                                     "qkv_format", "rollout_data"}
Tensors and numpy values become (nested) lists, enums their value, dataclasses dicts. JSON has no NaN or
infinity, so non-finite floats become null; their count is reported in the summary printed on stdout.

Standard library plus torch (only to read the .pt files). Exit codes: 0 converted; 1 a dump could not be
read or written; 2 usage; 3 torch is not importable; 4 no dumps found.

Usage: convert_dumps.py --details DIR --out DIR [--miles-root PATH]
       convert_dumps.py --serve [--miles-root PATH]

--serve keeps one process (and one torch import) for a whole run, as `harness check-run` reads it one step
at a time: it prints {"ready": true, "python": ..., "torch": ...} (or exits 3 without torch), then answers
each stdin line {"kind": "rollout_data"|"train_data", "path": FILE, "omit"?: [key, ...]} (sample keys, or
train columns, left out) with one answer, in request order: a JSON header line
{"ok": true, "document": <as above>, "non_finite": n, "blobs": [...], "bytes": N} followed by N bytes, the
long numeric lists as binary blocks (dump_frames.py), or {"ok": false, "error": "<Type>: <message>", ...},
so a truncated or unreadable .pt is named and the next file is still read. EOF on stdin ends it (exit 0).
"""

import argparse
import dataclasses
import enum
import json
import math
import os
import re
import sys
from pathlib import Path

from dump_frames import Packer, header_line

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NO_TORCH, EXIT_NO_DUMPS = 0, 1, 2, 3, 4

ROLLOUT_FILE = re.compile(r"^(?P<step>(?:eval_)?\d+)\.pt$")
TRAIN_FILE = re.compile(r"^(?P<step>\d+)_(?P<rank>\d+)\.pt$")


class Stats:
    def __init__(self):
        self.non_finite = 0


def to_jsonable(value, stats, packer=None, path=()):
    """Turns whatever a dump holds into JSON-ready values, without importing torch or numpy:
    tensors and numpy values are recognised by their `tolist` method. With a `packer` (dump_frames.py),
    long numeric lists go to its binary blocks instead, None in their place (`path` names that place)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        stats.non_finite += 1
        return None
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value, stats, packer, path)
    if isinstance(value, dict):
        return {str(k): to_jsonable(v, stats, packer, (*path, str(k))) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and packer is not None and packer.pack(value, path):
        return None
    if isinstance(value, (list, tuple)) and all(type(v) is int for v in value):
        return list(value)  # token ids, masks: the bulk of a dump, already JSON (the fast path)
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v, stats, packer, (*path, i)) for i, v in enumerate(value)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: to_jsonable(getattr(value, f.name), stats, packer, (*path, f.name))
            for f in dataclasses.fields(value)
        }
    if hasattr(value, "tolist"):
        # torch.Tensor (GPU tensors were saved from the device; bf16 has no Python scalar) or numpy.
        if hasattr(value, "detach"):
            value = value.detach()
        if hasattr(value, "cpu"):
            value = value.cpu()
        if hasattr(value, "is_floating_point") and value.is_floating_point():
            value = value.float()
        return to_jsonable(value.tolist(), stats, packer, path)
    if hasattr(value, "item"):
        return to_jsonable(value.item(), stats, packer, path)
    if isinstance(value, (bytes, bytearray)):
        return {"__bytes__": len(value)}
    return {"__repr__": repr(value)}


def find_dumps(details_dir):
    """The dump files under a details folder, in step order: (kind, step, rank, path)."""
    found = []
    rollout_dir = Path(details_dir) / "rollout_data"
    train_dir = Path(details_dir) / "train_data"
    if rollout_dir.is_dir():
        for path in rollout_dir.iterdir():
            m = ROLLOUT_FILE.match(path.name)
            if m:
                found.append(("rollout_data", m.group("step"), None, path))
    if train_dir.is_dir():
        for path in train_dir.iterdir():
            m = TRAIN_FILE.match(path.name)
            if m:
                found.append(("train_data", m.group("step"), int(m.group("rank")), path))

    def order(item):
        kind, step, rank, _ = item
        is_eval = step.startswith("eval_")
        return (kind, is_eval, int(step.removeprefix("eval_")), rank or 0)

    return sorted(found, key=order)


def load_torch_file(path):
    try:
        import torch
    except ImportError as error:
        raise TorchMissing(str(error)) from error
    try:
        return torch.load(path, map_location="cpu", weights_only=False)
    except TypeError:  # torch older than 1.13 has no weights_only
        return torch.load(path, map_location="cpu")


class TorchMissing(Exception):
    pass


def without(document, omit):
    """A dict without the keys a reader asked to leave out (bulky columns it does not read); "outer.inner"
    leaves out a key of a nested dict (a sample's metadata)."""
    if not omit or not isinstance(document, dict):
        return document
    kept = {k: v for k, v in document.items() if k not in omit}
    for key in omit:
        outer, dot, inner = key.partition(".")
        if dot and isinstance(kept.get(outer), dict) and inner in kept[outer]:
            kept[outer] = {k: v for k, v in kept[outer].items() if k != inner}
    return kept


def with_reward_type(sample, stats, packer=None, path=()):
    """The sample as JSON, plus `reward_python_type` ("int" or "float") for a numeric reward: JSON keeps
    1 and 1.0 apart only as text, and Miles' zero-std metric names its keys by str(round(reward, 1))."""
    converted = to_jsonable(sample, stats, packer, path)
    reward = sample.get("reward") if isinstance(sample, dict) else None
    if isinstance(converted, dict) and isinstance(reward, (int, float)) and not isinstance(reward, bool):
        converted["reward_python_type"] = "int" if isinstance(reward, int) else "float"
    return converted


def convert_one(kind, path, payload, stats, omit=(), packer=None):
    if not isinstance(payload, dict):
        raise ValueError(f"{path}: expected a dict, got {type(payload).__name__}")
    if kind == "rollout_data":
        samples = payload.get("samples")
        if not isinstance(samples, list):
            raise ValueError(f"{path}: no 'samples' list")
        return {
            "kind": kind,
            "source": str(path),
            "rollout_id": to_jsonable(payload.get("rollout_id"), stats),
            "metadata": to_jsonable(payload.get("metadata") or {}, stats),
            "samples": [
                with_reward_type(
                    without(s.to_dict() if hasattr(s, "to_dict") else s, omit), stats, packer, ("samples", i)
                )
                for i, s in enumerate(samples)
            ],
        }
    data = payload.get("rollout_data")
    if not isinstance(data, dict):
        raise ValueError(f"{path}: no 'rollout_data' dict")
    return {
        "kind": kind,
        "source": str(path),
        "rollout_id": to_jsonable(payload.get("rollout_id"), stats),
        "rank": to_jsonable(payload.get("rank"), stats),
        "cp_rank": to_jsonable(payload.get("cp_rank", 0), stats),
        "cp_size": to_jsonable(payload.get("cp_size", 1), stats),
        "qkv_format": to_jsonable(payload.get("qkv_format"), stats),
        "rollout_data": to_jsonable(without(data, omit), stats, packer, ("rollout_data",)),
    }


def write_json(path, document):
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(document, f, allow_nan=False, separators=(",", ":"))
    os.replace(tmp, path)


def convert(details_dir, out_dir, load=load_torch_file):
    """Converts every dump under details_dir; returns the summary printed on stdout."""
    dumps = find_dumps(details_dir)
    stats = Stats()
    summary = {"details": str(details_dir), "out": str(out_dir), "rollout_data": [], "train_data": []}
    for kind, step, rank, path in dumps:
        document = convert_one(kind, path, load(path), stats)
        name = f"{step}.json" if kind == "rollout_data" else f"{step}_{rank}.json"
        target = Path(out_dir) / kind / name
        write_json(target, document)
        summary[kind].append(str(target))
    summary["non_finite_replaced"] = stats.non_finite
    return summary


def serve(stdin, stdout, load=load_torch_file):
    """One JSON request per line in, one framed answer out (see the module's docstring); `stdout` is binary."""
    try:
        import torch
    except ImportError as error:
        print(
            f"convert_dumps: torch is not importable by {sys.executable} ({error}); "
            "reading Miles' .pt dumps needs it: run this with the Python that runs Miles",
            file=sys.stderr,
        )
        return EXIT_NO_TORCH
    stdout.write(header_line({"ready": True, "python": sys.executable, "torch": getattr(torch, "__version__", "unknown")}))
    stdout.flush()
    for line in stdin:
        if not line.strip():
            continue
        stats = Stats()
        packer = Packer()
        try:
            request = json.loads(line)
            omit = frozenset(request.get("omit", ()))
            document = convert_one(request["kind"], request["path"], load(request["path"]), stats, omit, packer)
        except Exception as error:  # named per file; the next request is still served
            stdout.write(header_line({"ok": False, "error": f"{type(error).__name__}: {error}", "blobs": [], "bytes": 0}))
        else:
            packer.write(stdout, {"ok": True, "document": document, "non_finite": stats.non_finite})
        stdout.flush()
    return EXIT_OK


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--details", help="the run's --dump-details folder")
    parser.add_argument("--out", help="where the JSON goes")
    parser.add_argument("--serve", action="store_true", help="convert files named on stdin, one JSON line each")
    parser.add_argument("--miles-root", help="a Miles checkout to import from (pickled Miles classes)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return EXIT_OK if exit_.code == 0 else EXIT_USAGE
    if args.miles_root:
        sys.path.insert(0, args.miles_root)
    if args.serve:
        return serve(sys.stdin, sys.stdout.buffer)
    if not args.details or not args.out:
        print("convert_dumps: --details and --out are required (or --serve)", file=sys.stderr)
        return EXIT_USAGE
    if not Path(args.details).is_dir():
        print(f"convert_dumps: no such folder: {args.details}", file=sys.stderr)
        return EXIT_NO_DUMPS
    if not find_dumps(args.details):
        print(f"convert_dumps: no rollout_data/*.pt or train_data/*.pt under {args.details}", file=sys.stderr)
        return EXIT_NO_DUMPS
    try:
        summary = convert(args.details, args.out)
    except TorchMissing as error:
        print(
            f"convert_dumps: torch is not importable by {sys.executable} ({error}); "
            "reading Miles' .pt dumps needs it: run this with the Python that runs Miles",
            file=sys.stderr,
        )
        return EXIT_NO_TORCH
    except Exception as error:  # one bad dump fails the conversion, with the file named
        print(f"convert_dumps: {type(error).__name__}: {error}", file=sys.stderr)
        return EXIT_FAILED
    print(json.dumps(summary))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
