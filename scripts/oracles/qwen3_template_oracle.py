#!/usr/bin/env python3
"""Renders chat templates with Python's jinja2 the way Miles renders them, as an oracle for the TS renderer.

Reads {"template": str, "cases": [{"messages", "tools", "add_generation_prompt", "kwargs"}]} as JSON on
stdin and prints a JSON list with {"text": str} or {"error": str} per case.

What it reproduces (nothing of Miles or transformers imported; Debian's python3-jinja2 only):
- Miles' normalize_tool_arguments(messages, "dict") (radixark/miles@31f1ca96
  miles/utils/chat_template_utils/template.py): a deep copy, an assistant's content None -> "", each
  tool call's function.arguments JSON string -> json.loads of it.
- HF transformers' render_jinja_template environment, as the bridge sets it up once for Miles on CPU
  (miles-bridge/chat_template_render.py `compile_chat_template`: ImmutableSandboxedEnvironment with
  trim_blocks, lstrip_blocks, loopcontrols and `{% generation %}`, its tojson filter, raise_exception and
  strftime_now). Python's jinja2 is the oracle for the TypeScript renderer either way.
"""

import copy
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "miles-bridge"))
from chat_template_render import compile_chat_template  # noqa: E402


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


def main():
    request = json.load(sys.stdin)
    template = compile_chat_template(request["template"])
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
