#!/usr/bin/env python3
"""Python's own argparse as the oracle for the drift checker's arity and choices rules.

Builds one `argparse.ArgumentParser` from a miles-cli-surface/1 file (the records are data: kind,
nargs, type, choices) and parses a batch of argvs with it. Reads on stdin
{"surface": path, "overlays": [commit prefix, ...], "argvs": [[token, ...], ...]} and prints one JSON
result per argv:

- {"ok": false, "error": message, "option_strings": [...]} when argparse stops (its message as
  written, and the option strings of the argument it names, if any);
- {"ok": true, "values": {dest: bound value}, "extras": [...]} otherwise: only dests the argv set
  (argument_default=SUPPRESS), and the tokens no argument consumed (`parse_known_args`; train.py's
  parse_args would stop on them with "unrecognized arguments").

What the parser models: `value`/`nargs`/`append` take `nargs`; `store_true`/`store_false`;
`boolean_optional` is argparse.BooleanOptionalAction (it registers the `--no-` form itself); `type`
int and float are Python's int() and float(), every other converter is taken as text; `choices` as
listed. Megatron's parser is built with allow_abbrev=False, so is this one. Overlays named by commit
prefix add their `flags` and replace base records with their `changed_flags` (the surface's rule);
the `--eval-sglang-` family is derived as its prefix rule's `derive` text says.
"""

import argparse
import json
import sys

CONVERTERS = {"int": int, "float": float}


class ArgparseStop(Exception):
    def __init__(self, message: str, option_strings: list):
        super().__init__(message)
        self.message = message
        self.option_strings = option_strings


class OracleParser(argparse.ArgumentParser):
    def error(self, message):
        raise ArgparseStop(message, [])


def records_of(surface: dict, overlays: list) -> list:
    by_flag = {r["flag"]: r for r in surface["flags"]}
    for rule in surface["prefix_rules"]:
        if rule["enumerated"] or rule["prefix"] != "--eval-sglang-":
            continue
        for r in surface["flags"]:
            if r.get("origin") != "sglang-server-args":
                continue
            upstream = r["dest"][len("sglang_"):]
            if upstream in rule["skipped"]:
                continue
            swap = lambda name: "--eval-sglang-" + name[len("--sglang-"):]
            kind = "boolean_optional" if r["kind"] in ("store_true", "store_false") else r["kind"]
            derived = dict(r, flag=swap(r["flag"]), aliases=[swap(a) for a in r["aliases"]],
                           dest=rule["dest_prefix"] + upstream, kind=kind)
            by_flag.setdefault(derived["flag"], derived)
    for overlay in surface["overlays"]:
        commit = overlay["evidence"].split("@")[-1]
        if not any(commit.startswith(o) for o in overlays):
            continue
        for r in overlay.get("changed_flags", []) + overlay["flags"]:
            by_flag[r["flag"]] = r
    return list(by_flag.values())


def build_parser(records: list) -> argparse.ArgumentParser:
    parser = OracleParser(allow_abbrev=False, argument_default=argparse.SUPPRESS, add_help=False,
                          conflict_handler="resolve")
    for r in records:
        names = [r["flag"], *r["aliases"]]
        kwargs = {"dest": r["dest"]}
        kind = r["kind"]
        if kind == "store_true":
            kwargs["action"] = "store_true"
        elif kind == "store_false":
            kwargs["action"] = "store_false"
        elif kind == "boolean_optional":
            kwargs["action"] = argparse.BooleanOptionalAction
            names = [n for n in names if not n.startswith("--no-")]
        else:
            if kind == "append":
                kwargs["action"] = "append"
            if r["nargs"] is not None:
                kwargs["nargs"] = r["nargs"]
            kwargs["type"] = CONVERTERS.get(r["type"], str)
            if r["choices"] is not None:
                kwargs["choices"] = r["choices"]
        parser.add_argument(*names, **kwargs)
    return parser


def parse(parser: argparse.ArgumentParser, argv: list) -> dict:
    try:
        namespace, extras = parser.parse_known_args(argv)
    except argparse.ArgumentError as error:
        names = list(error.argument_name.split("/")) if error.argument_name else []
        return {"ok": False, "error": str(error), "option_strings": names}
    except ArgparseStop as stop:
        return {"ok": False, "error": stop.message, "option_strings": stop.option_strings}
    return {"ok": True, "values": vars(namespace), "extras": extras}


def main() -> None:
    request = json.load(sys.stdin)
    with open(request["surface"], encoding="utf-8") as f:
        surface = json.load(f)
    parser = build_parser(records_of(surface, request["overlays"]))
    # argparse raises ArgumentError (not error()) for argument problems when exit_on_error is off.
    parser.exit_on_error = False
    json.dump([parse(parser, argv) for argv in request["argvs"]], sys.stdout, allow_nan=False)


if __name__ == "__main__":
    main()
