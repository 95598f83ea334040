#!/usr/bin/env python3
"""Runs Miles' own Qwen3TITOTokenizer and TokenSeqComparator on the real Qwen3 tokenizer, as an oracle for
the fake's qwen3 family (fakes/tokenizer/qwen3-family.ts, fakes/session/mismatch.ts).

Usage: MILES_ROOT=/path/to/miles python3 qwen3_tito_oracle.py NODE PIPE_SCRIPT TEMPLATE < cases.json

Miles' modules are imported from MILES_ROOT at run time; nothing of them is copied. What Debian lacks is
stood in for, each named:
- the tokenizer: HF's Rust build over the pinned tokenizer.json, reached through a Node child
  (scripts/oracles/rust-tokenizer-pipe.ts), wrapped in the few methods Miles calls (encode, decode,
  convert_tokens_to_ids, all_special_ids, added_tokens_decoder, apply_chat_template);
- apply_chat_template renders the given template with jinja2 in HF's environment (the bridge's one set-up,
  miles-bridge/chat_template_render.py `compile_chat_template`) and encodes with add_special_tokens=False, as
  transformers does;
- sglang's Tool, huggingface_hub, transformers' render_jinja_template and pydantic 2's TypeAdapter are
  imported by Miles' template module but unused on this path (no tools in the cases): empty stand-ins.

Cases (a JSON list on stdin), one result each:
- {"op": "prompt", "messages", "kwargs"}: apply_chat_template(add_generation_prompt=True, tokenize=True)
- {"op": "canonical", "messages"}: apply_chat_template(add_generation_prompt=False, tokenize=True)
- {"op": "merge", "old", "new", "pretokenized"}: merge_tokens(old, new, pretokenized)
- {"op": "compare", "expected", "actual"}: [m.to_dict() for m in comparator.compare_sequences(...)]
Errors are answered as {"error": "Type: text"}.
"""

import json
import os
import subprocess
import sys
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "miles-bridge"))
from chat_template_render import compile_chat_template  # noqa: E402


def stub(name, **attrs):
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module
    return module


class Pipe:
    def __init__(self, node, script):
        self.proc = subprocess.Popen(
            [node, script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8"
        )

    def ask(self, request):
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


class RustQwen3Tokenizer:
    """The HF tokenizer surface Miles' TITO code uses, over the Rust tokenizer."""

    name_or_path = ""

    def __init__(self, pipe, template, tokenizer_json):
        self.pipe = pipe
        self.template = compile_chat_template(template)
        added = tokenizer_json["added_tokens"]
        self.vocab = {t["content"]: t["id"] for t in added}
        self.all_special_ids = [t["id"] for t in added if t["special"]]
        self.added_tokens_decoder = {t["id"]: types.SimpleNamespace(special=t["special"]) for t in added}

    def encode(self, text, add_special_tokens=True):
        # UTF-8 first: what PyO3 does with a str before the Rust tokenizer sees it (lone surrogates raise).
        text.encode("utf-8")
        return self.pipe.ask({"encode": text})["ids"]

    def decode(self, ids, skip_special_tokens=False):
        assert skip_special_tokens is False
        return self.pipe.ask({"decode": list(ids)})["text"]

    def convert_tokens_to_ids(self, token):
        return self.vocab[token]

    def apply_chat_template(self, messages, tokenize=True, tools=None, return_dict=False, add_generation_prompt=False, **kwargs):
        text = self.template.render(messages=messages, tools=tools, add_generation_prompt=add_generation_prompt, **kwargs)
        return self.encode(text, add_special_tokens=False) if tokenize else text


def main():
    node, pipe_script, template_path, tokenizer_path = sys.argv[1:5]
    miles_root = os.environ["MILES_ROOT"]
    sys.path.insert(0, miles_root)
    stub("huggingface_hub", hf_hub_download=None)
    stub("transformers")
    stub("transformers.utils")
    stub("transformers.utils.chat_template_utils", render_jinja_template=None)
    stub("sglang")
    stub("sglang.srt")
    stub("sglang.srt.entrypoints")
    stub("sglang.srt.entrypoints.openai", encoding_dsv4=stub("sglang.srt.entrypoints.openai.encoding_dsv4"))
    stub("sglang.srt.entrypoints.openai.protocol", Tool=dict)
    import pydantic

    if not hasattr(pydantic, "TypeAdapter"):
        # Debian's pydantic 1 has none; Miles uses it only to canonicalize tools (none here).
        pydantic.TypeAdapter = None

    from miles.utils.chat_template_utils.tito_tokenizer import Qwen3TITOTokenizer

    with open(template_path, encoding="utf-8") as f:
        template = f.read()
    with open(tokenizer_path, encoding="utf-8") as f:
        tokenizer_json = json.load(f)
    pipe = Pipe(node, pipe_script)
    tokenizer = RustQwen3Tokenizer(pipe, template, tokenizer_json)
    tito = Qwen3TITOTokenizer(tokenizer)
    comparator = tito.create_comparator()
    results = []
    for case in json.load(sys.stdin):
        try:
            op = case["op"]
            if op in ("prompt", "canonical"):
                scoped = tito.clone_with_chat_template_kwargs(case.get("kwargs", {}))
                out = scoped.apply_chat_template(case["messages"], add_generation_prompt=op == "prompt", tokenize=True)
                results.append({"ids": out})
            elif op == "merge":
                results.append({"ids": tito.merge_tokens(case["old"], case["new"], case["pretokenized"])})
            else:
                mismatches = comparator.compare_sequences(case["expected"], case["actual"])
                results.append({"mismatches": [m.to_dict() for m in mismatches]})
        except Exception as error:  # noqa: BLE001 - every failure is an answer of the oracle
            results.append({"error": f"{type(error).__name__}: {error}"})
    pipe.close()
    sys.stdout.write(json.dumps(results))


if __name__ == "__main__":
    main()
