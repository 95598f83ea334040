#!/usr/bin/env python3
"""Runs Harbor's own Terminus-2 reply parsers (and CPython's json.loads) on a batch of inputs.

An oracle for fakes/harbor/engine's parsers: reads a JSON list of {"parser": "xml"|"json"|"loads",
"text": str} on stdin and prints one result per input. Harbor's parser modules are loaded from
HARBOR_SRC (default /work/ext/harbor) at run time, nothing of them is copied; they import only the
standard library.
"""

import importlib.util
import json
import os
import sys
from pathlib import Path

T2 = Path(os.environ.get("HARBOR_SRC", "/work/ext/harbor")) / "src/harbor/agents/terminus_2"


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, T2 / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PARSERS = {
    "xml": load("terminus_xml_plain_parser").TerminusXMLPlainParser(),
    "json": load("terminus_json_plain_parser").TerminusJSONPlainParser(),
}


def run(item: dict) -> dict:
    if item["parser"] == "loads":
        try:
            json.loads(item["text"])
            return {"ok": True}
        except json.JSONDecodeError as error:
            return {"ok": False, "error": str(error)}
    try:
        result = PARSERS[item["parser"]].parse_response(item["text"])
    except Exception as error:  # Harbor's parser raising ends the agent run
        return {"raised": type(error).__name__}
    return {
        "commands": [{"keystrokes": c.keystrokes, "duration": str(c.duration)} for c in result.commands],
        "is_task_complete": bool(result.is_task_complete),
        "error": result.error,
        "warning": result.warning,
    }


print(json.dumps([run(item) for item in json.load(sys.stdin)]))
