#!/usr/bin/env python3
"""Writes the Miles oracle fixtures under fixtures/miles-oracle/ by running Miles' own code from a checkout
(--miles-root) with /usr/bin/python3 and Debian's packages, the launcher's stand-ins, and the toy tokenizer:

- codec/*.safetensors: samples payloads from Miles' `encode_samples(..., fields=COMPUTED_FIELDS_V2)`
  (miles/rollout/session/samples/codec.py): which tensors, names, dtypes and the `_samples_meta` JSON are
  Miles'; the container is written by the reference `safetensors` package when it is installed, else by
  miles-bridge/safetensors_format.py (said in codec/provenance.json);
- mismatch.json: `TokenSeqComparator.compare_sequences` (miles/utils/chat_template_utils/
  token_seq_comparator.py) on toy-token sequences, configured as the default family configures it;
- merge.json: `merge_samples` (miles/rollout/generate_utils/sample_utils.py) on toy turn samples.

Usage: /usr/bin/python3 scripts/oracles/oracle_vectors.py --miles-root PATH [--out fixtures/miles-oracle]
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "miles-bridge"))

import standins  # noqa: E402
from toy_tokenizer import ToyTokenizer, word_id  # noqa: E402

WORDS = "run ls -la then cat the file done ok tool output summary of progress so far continue".split()


def words(text):
    return [word_id(w) for w in text.split()]


def codec_cases(Sample, np):
    """(name, samples, session_metadata, empty_reason) in the shapes the v2 samples op produces."""
    tree = {
        "nodes": [
            {"id": 0, "parent": None, "seq": 0, "truncated": False, "committed_at": 1796094247.8608978,
             "completion_span": [4, 7], "num_tokens": 7, "response_id": "resp-0"},
            {"id": 1, "parent": 0, "seq": 1, "truncated": False, "committed_at": 1796094247.9305961,
             "completion_span": [10, 12], "num_tokens": 12, "response_id": "resp-1"},
        ],
        "leaves": [{"node_id": 1, "path_node_ids": [0, 1]}],
    }
    tokens = [1, *words("run ls"), 3, *words("ok done"), 5, 4, *words("tool output"), 3, *words("summary"), 5]
    session_metadata = {
        "tito_session_mismatch": [],
        "accumulated_token_ids": tokens,
        "max_trim_tokens": 0,
        "tree": tree,
        "agent": {"reward": 1.0, "note": "x"},
    }
    merged = Sample(
        tokens=tokens,
        response="ok done <|end|><|tool|> tool output <|assistant|>summary <|end|>",
        response_length=8,
        loss_mask=[1, 1, 1, 0, 0, 0, 0, 1, 1][:8],
        rollout_log_probs=[-0.1, -0.25, 0.0, 0.0, 0.0, 0.0, -1.5, -0.0],
        status=Sample.Status.COMPLETED,
        reward=1.0,
        metadata={
            "lifecycle": [
                {"t0": None, "t1": 1796094247.8608978, "turn": 1, "req_ts": 1796094247.85},
                {"t0": 1796094247.9, "t1": 1796094247.9305961, "turn": 2, "req_ts": 1796094247.9,
                 "prev_t1": 1796094247.8608978},
            ],
            "accumulated_token_ids": tokens,
            "tito_session_mismatch": [],
            "leaf": {"node_id": 1, "parent": 0, "path_node_ids": [0, 1], "response_id": "resp-1"},
            "reward": 1.0,
            "note": "x",
        },
    )
    merged.prefix_cache_info.cached_tokens = 4
    merged.prefix_cache_info.total_prompt_tokens = 14
    truncated = Sample(
        tokens=[1, *words("continue"), 3, *words("so far")],
        response="so far",
        response_length=2,
        loss_mask=[1, 1],
        rollout_log_probs=[-0.5, -2.0],
        status=Sample.Status.TRUNCATED,
        reward=0.0,
        weight_versions=["7"],
        metadata={"leaf": {"node_id": 2, "parent": None, "path_node_ids": [2], "response_id": "résumé ✓"},
                  "score": float("nan"), "big": 1e16, "small": 1.5e-05, "count": 3},
    )
    replayed = Sample(
        tokens=[1, 3, *words("ok")],
        response="ok",
        response_length=1,
        loss_mask=None,
        rollout_log_probs=None,
        rollout_routed_experts=np.array([[1, 2], [3, 4], [5, -6]], dtype=np.int32),
        rollout_indexer_topk=np.zeros((0, 4), dtype=np.int32),
        status=Sample.Status.ABORTED,
        reward=None,
        metadata={"leaf": {"node_id": 0, "parent": None, "path_node_ids": [0], "response_id": None}},
    )
    many = [
        Sample(tokens=[1, 3, 1000 + i], response=f"w{i}", response_length=1, loss_mask=[1],
               rollout_log_probs=[-0.01 * i], status=Sample.Status.COMPLETED, reward=0.5,
               metadata={"leaf": {"node_id": i, "parent": None, "path_node_ids": [i], "response_id": f"r{i}"}})
        for i in range(12)
    ]
    empty_metadata = {"accumulated_token_ids": [], "max_trim_tokens": 0, "tree": {"nodes": [], "leaves": []}}
    return [
        ("merged-compaction-leaf", [merged], session_metadata, None),
        ("truncated-unicode-nonfinite", [truncated], session_metadata, None),
        ("null-tensors-and-replay-tensors", [replayed], session_metadata, None),
        ("twelve-samples-name-order", many, session_metadata, None),
        ("empty-no-records", [], empty_metadata, "no_records"),
    ]


def mismatch_cases(tokenizer):
    """(name, expected_ids, actual_ids): the canonical render against stored tokens."""
    u, a, t = words("run ls"), words("ok done"), words("tool output")
    canonical = [1, *u, 3, *a, 5, 4, *t, 3, *a, 5]
    return [
        ("canonical", canonical, list(canonical)),
        ("carried-assistant-count", [1, *u, 3, *a, 5, 2, *u, 3, *a, 5], [1, *u, 3, *a, 2, *u, 3, *a, 5]),
        ("structure-pattern", [1, *u, 3, 5], [1, *u, 3, *a]),
        ("special-type", [1, *u, 3, *a, 5], [1, *u, 4, *a, 5]),
        ("content-text", [1, *u, 3, *a, 5], [1, *words("cat the file"), 3, *words("summary"), 5]),
        ("empty-expected", [], [1, *u]),
    ]


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--miles-root", required=True)
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[2] / "fixtures" / "miles-oracle"))
    options = parser.parse_args(argv)
    miles_root = Path(options.miles_root).resolve()
    replaced = standins.install_dependency_standins(miles_root)
    # The package's template module cannot be imported here; its comparator submodule can.
    standins.install_toy_tokenizer(miles_root, WORDS, replaced)

    import numpy as np

    from miles.rollout.generate_utils.sample_utils import merge_samples
    from miles.rollout.session.samples.codec import COMPUTED_FIELDS_V2, encode_samples
    from miles.utils.chat_template_utils.token_seq_comparator import TokenSeqComparator
    from miles.utils.types import Sample

    out = Path(options.out)
    (out / "codec").mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(
        ["git", "-C", str(miles_root), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip() or "unknown"
    container = next((why for name, why in replaced.items if name == "safetensors.numpy"), None)
    tokenizer = ToyTokenizer(WORDS)

    codec = []
    for name, samples, session_metadata, empty_reason in codec_cases(Sample, np):
        payload = encode_samples(samples, session_metadata, empty_reason, fields=COMPUTED_FIELDS_V2)
        (out / "codec" / f"{name}.safetensors").write_bytes(payload)
        codec.append({"file": f"{name}.safetensors", "bytes": len(payload)})
    provenance = {
        "miles_commit": commit,
        "produced_by": "scripts/oracles/oracle_vectors.py: Miles' encode_samples(..., fields=COMPUTED_FIELDS_V2)",
        "container_writer": (
            "miles-bridge/safetensors_format.py (the safetensors package is not installed: " + container + ")"
            if container
            else "the safetensors package (safetensors.numpy.save)"
        ),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "files": codec,
    }
    (out / "codec" / "provenance.json").write_text(json.dumps(provenance, indent=2) + "\n", encoding="utf-8")

    comparator = TokenSeqComparator(tokenizer, assistant_start_str=None)
    mismatch = [
        {"name": name, "expected_ids": e, "actual_ids": a,
         "result": [m.to_dict() for m in comparator.compare_sequences(e, a)]}
        for name, e, a in mismatch_cases(tokenizer)
    ]

    def turn(tokens, response_length, status=Sample.Status.COMPLETED, per_token=True):
        output = tokens[len(tokens) - response_length :]
        return Sample(tokens=tokens, response=tokenizer.decode(output), response_length=response_length,
                      loss_mask=[1] * response_length if per_token else None,
                      rollout_log_probs=[-0.5] * response_length if per_token else None, status=status)

    def bare(tokens, response_length):
        """A turn without its per-token lists: `_merge_sample_pair` fills them in (`_fill_defaults`)."""
        return turn(tokens, response_length, per_token=False)

    first = [1, *words("run ls"), 3, *words("ok done"), 5]
    second = [*first, 4, *words("tool output"), 3, *words("summary"), 5]
    third = [*second, 2, *words("continue"), 3]
    merge = []
    for name, turns in [
        ("two-turns", [turn(first, 3), turn(second, 2)]),
        ("three-turns-empty-last", [turn(first, 3), turn(second, 2), turn(third, 0)]),
        ("without-per-token-lists", [bare(first, 3), bare(second, 2)]),
        ("without-per-token-lists-empty-first", [bare(first, 0), turn(second, 2)]),
        ("without-per-token-lists-empty-last", [turn(first, 3), bare(second, 2), bare(third, 0)]),
    ]:
        inputs = [{"tokens": s.tokens, "response": s.response, "response_length": s.response_length,
                   "per_token_lists": s.loss_mask is not None} for s in turns]
        merged = merge_samples(turns, tokenizer)
        merge.append({"name": name, "turns": inputs, "response": merged.response,
                      "response_length": merged.response_length, "loss_mask": merged.loss_mask,
                      "rollout_log_probs": merged.rollout_log_probs})
    header = {"miles_commit": commit, "vocabulary": WORDS}
    (out / "mismatch.json").write_text(
        json.dumps({**header, "produced_by": "Miles' TokenSeqComparator (default family: no assistant start, "
                    "the toy's special ids)", "cases": mismatch}, indent=1) + "\n", encoding="utf-8")
    (out / "merge.json").write_text(
        json.dumps({**header, "produced_by": "Miles' merge_samples with the toy tokenizer", "cases": merge},
                   indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(codec)} codec payloads, {len(mismatch)} mismatch and {len(merge)} merge cases to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
