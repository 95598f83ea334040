#!/usr/bin/env python3
"""Renders chat templates with Python's jinja2 the way Miles renders them, as an oracle for the TS renderer.

Reads {"template": str, "cases": [{"messages", "tools", "add_generation_prompt", "kwargs"}]} as JSON on
stdin and prints a JSON list with {"text": str} or {"error": str} per case.

What it reproduces (written here, nothing of Miles or transformers imported; Debian's python3-jinja2 only):
- Miles' normalize_tool_arguments(messages, "dict") (radixark/miles@31f1ca96
  miles/utils/chat_template_utils/template.py): a deep copy, an assistant's content None -> "", each
  tool call's function.arguments JSON string -> json.loads of it.
- HF transformers' render_jinja_template environment: ImmutableSandboxedEnvironment with
  trim_blocks, lstrip_blocks and the loopcontrols extension, and its tojson filter
  (json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)).
"""

import copy
import json
import sys

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment


def normalize(messages):
    out = copy.deepcopy(messages)
    for msg in out:
        if msg.get("role") == "assistant":
            if msg.get("content") is None:
                msg["content"] = ""
            if isinstance(msg.get("tool_calls"), list):
                for item in msg["tool_calls"]:
                    func = item.get("function")
                    if not func:
                        continue
                    args = func.get("arguments")
                    if isinstance(args, str):
                        func["arguments"] = json.loads(args)
    return out


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def main():
    request = json.load(sys.stdin)
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    template = env.from_string(request["template"])
    results = []
    for case in request["cases"]:
        try:
            messages = normalize(case["messages"])
            tools = case.get("tools") or None
            text = template.render(
                messages=messages,
                tools=tools,
                add_generation_prompt=case["add_generation_prompt"],
                **case.get("kwargs", {}),
            )
            # The JS side cannot hold a lone surrogate in a str the tokenizer would take: say so.
            try:
                text.encode("utf-8")
                results.append({"text": text})
            except UnicodeEncodeError as error:
                results.append({"text": text, "encode_error": str(error)})
        except Exception as error:  # noqa: BLE001 - every failure is an answer of the oracle
            results.append({"error": f"{type(error).__name__}: {error}"})
    sys.stdout.write(json.dumps(results))


if __name__ == "__main__":
    main()
