#!/usr/bin/env python3
"""Writes fixtures/miles-oracle/rollout-metrics.json: what Miles' own rollout logging gives on sample cases,
run from a checkout (--miles-root) with /usr/bin/python3 and Debian's packages.

For each case the groups go through Miles' dynamic filter (`call_dynamic_filter` with `check_no_aborted` or
`check_reward_nonzero_std`, drops counted by `MetricGatherer`), the kept groups are sorted and flattened as
`generate_rollout_async` and `postprocess_rollout_data` do, and `log_rollout_data`
(miles/ray/rollout/metrics.py) logs them: the dict it hands `tracking.log` is the case's `logged`. The
recipe's `RolloutFn._call_train` (examples/swe-agent-harbor-docker/generate.py) runs on the same kept groups
in session server v2's shape (each rollout a list of samples): `agent_logged` is what it adds to the
metrics, `agent_would_log` what `aggregate_agent_metrics` gives on the samples themselves.

What is replaced (printed, and recorded in the file):
- the launcher's stand-ins (miles-bridge/standins.py) for modules Debian lacks;
- `miles.utils.tracking_utils`: it needs pydantic 2; the stand-in records the `tracking.log` call, which is
  the value under test (nothing is sent anywhere);
- generate.py's imports (`RolloutFnTrainInput`/`Output`, `InferenceRolloutFn`): their modules pull ray and
  pydantic 2 through the data source. generate.py's own definitions are executed from the checkout's file
  with stand-ins for those three names; the base class's `_call_train` returns the case's kept groups,
  which is what the real one returns to it.

Usage: /usr/bin/python3 scripts/oracles/metrics_oracle.py --miles-root PATH [--out fixtures/miles-oracle]
"""

import argparse
import ast
import asyncio
import dataclasses
import json
import random
import subprocess
import sys
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "miles-bridge"))

import standins  # noqa: E402

FILTERS = {
    "check_no_aborted": "miles.rollout.filter_hub.dynamic_sampling_filters.check_no_aborted",
    "check_reward_nonzero_std": "miles.rollout.filter_hub.dynamic_sampling_filters.check_reward_nonzero_std",
}


def install_tracking_capture(replaced, logged):
    package = types.ModuleType("miles.utils.tracking_utils")
    package.__path__ = []
    tracking = types.ModuleType("miles.utils.tracking_utils.tracking")

    def log(args, log_dict, step_key=None):
        logged.append({"log_dict": dict(log_dict), "step_key": step_key})

    tracking.log = log
    package.tracking = tracking
    sys.modules["miles.utils.tracking_utils"] = package
    sys.modules["miles.utils.tracking_utils.tracking"] = tracking
    replaced.add(
        "miles.utils.tracking_utils",
        "its backends need pydantic 2 (TypeAdapter); the stand-in records tracking.log's dict, the value compared",
    )


def load_generate(miles_root, replaced):
    """generate.py's definitions, executed from the checkout's file with stand-ins for what it imports."""
    path = miles_root / "examples" / "swe-agent-harbor-docker" / "generate.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    body = [node for node in tree.body if not isinstance(node, (ast.Import, ast.ImportFrom))]

    @dataclasses.dataclass
    class RolloutFnTrainInput:
        rollout_id: int

    @dataclasses.dataclass
    class RolloutFnTrainOutput:
        samples: list
        metrics: dict | None = None

    class InferenceRolloutFn:
        def __init__(self, output):
            self._output = output

        async def _call_train(self, input):
            return self._output

    import logging

    namespace = {
        "__name__": "generate",
        "logging": logging,
        "RolloutFnTrainInput": RolloutFnTrainInput,
        "RolloutFnTrainOutput": RolloutFnTrainOutput,
        "InferenceRolloutFn": InferenceRolloutFn,
        "Sample": sys.modules["miles.utils.types"].Sample,
    }
    exec(compile(ast.Module(body=body, type_ignores=[]), str(path), "exec"), namespace)
    replaced.add(
        "generate.py imports (RolloutFnTrainInput/Output, InferenceRolloutFn)",
        "their modules import ray and pydantic 2 via the data source; the base _call_train returns the kept groups",
    )
    return namespace, RolloutFnTrainInput, RolloutFnTrainOutput


# ---------------------------------------------------------------- cases


def sample(group, index, reward, *, rollout_id=None, status="completed", response="ok done", response_length=3,
           loss_mask=None, cached=0, prompt=10, versions=("default",), ngt=0.0, mismatch=None, agent=None):
    metadata = {}
    if mismatch is not None:
        metadata["tito_session_mismatch"] = mismatch
    if agent is not None:
        metadata["agent_metrics"] = agent
    return {
        "group_index": group,
        "index": index,
        "rollout_id": rollout_id,
        "tokens": list(range(1, prompt + response_length + 1)),
        "response": response,
        "response_length": response_length,
        "loss_mask": [1] * response_length if loss_mask is None else loss_mask,
        "reward": reward,
        "status": status,
        "weight_versions": list(versions),
        "non_generation_time": ngt,
        "prefix_cache_info": {"cached_tokens": cached, "total_prompt_tokens": prompt},
        "metadata": metadata,
    }


def agent_metrics(k):
    """An agent_metrics dict as the mock Harbor server reports it (the keys generate.py aggregates)."""
    return {
        "turns": 3 + k, "tool_calls": 2 + k, "total_time": 10.5 + k, "agent_run_time": 8.25 + k,
        "eval_time": 1.0, "model_query_time_sum": 4.0 + k, "model_query_time_avg": 1.25,
        "env_execution_time_sum": 2.0, "env_execution_time_avg": 0.5, "time_per_turn": 2.5,
        "model_time_ratio": 0.4, "env_time_ratio": 0.2, "eval_time_ratio": 0.1, "total_tool_time": 2.0,
    }


def group(g, first_index, rewards, **kw):
    """One prompt group: one single-sample rollout per reward, v2-shaped (each rollout a list)."""
    return [[sample(g, first_index + k, r, **kw)] for k, r in enumerate(rewards)]


def noise_text(seed, n):
    rng = random.Random(seed)
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789 .,;:-_") for _ in range(n))


def cases():
    mm = [{"type": "assistant_text", "detail": "x"}]
    compaction = [
        [
            sample(0, 0, 1.0, rollout_id=0, response_length=4, loss_mask=[1, 1, 0, 1], cached=6, prompt=12,
                   mismatch=[], agent=agent_metrics(0)),
            sample(0, 0, 1.0, rollout_id=0, response_length=5, cached=0, prompt=20, mismatch=mm,
                   agent=agent_metrics(0)),
        ],
        [sample(0, 1, 1.0, response_length=7, cached=4, prompt=9, mismatch=[], agent=agent_metrics(1))],
    ]
    yield {
        "name": "recipe-shape",
        "filter": "check_no_aborted",
        "args": {"n_samples_per_prompt": 2},
        "groups": [
            compaction,
            group(1, 2, [0.0, 1.0], cached=3, mismatch=[{"type": "special_token_count"}], agent=agent_metrics(2)),
            group(2, 4, [0.0, 0.0], response_length=2, mismatch=[], agent=agent_metrics(3)),
        ],
        "rollout_time": 12.5,
    }
    yield {
        "name": "integer-rewards",
        "filter": "check_no_aborted",
        "args": {"n_samples_per_prompt": 2},
        # Python's 1 == 1.0: a group of an int and a float is zero-std, keyed by its first reward.
        "groups": [group(0, 0, [1, 1]), group(1, 2, [0, 0]), group(2, 4, [0, 1]), group(3, 6, [1, 1.0]),
                   group(4, 8, [0.0, 0])],
        "rollout_time": 3.0,
    }
    yield {
        "name": "dropped-aborted-group",
        "filter": "check_no_aborted",
        "args": {"n_samples_per_prompt": 2},
        "groups": [
            group(0, 0, [1.0, 0.0]),
            [[sample(1, 2, 0.0, status="aborted")], [sample(1, 3, 1.0)]],
            [[sample(2, 4, None, status="aborted", response="", response_length=0)], [sample(2, 5, 0.0)]],
            group(3, 6, [1.0, 1.0], status="truncated"),
        ],
        "rollout_time": 4.0,
    }
    yield {
        "name": "zero-std-filter",
        "filter": "check_reward_nonzero_std",
        "args": {"n_samples_per_prompt": 3},
        "groups": [
            group(0, 0, [1.0, 1.0, 1.0]),
            group(1, 3, [0.0, 0.0, 0.0]),
            group(2, 6, [0.0, 0.0, 0.0]),
            group(3, 9, [0.0, 1.0, 0.0]),
        ],
        "rollout_time": 2.0,
    }
    yield {
        "name": "reward-rounding",
        "filter": "check_no_aborted",
        "args": {"n_samples_per_prompt": 2},
        "groups": [
            group(0, 0, [0.25, 0.25]),
            group(1, 2, [0.35, 0.35]),
            group(2, 4, [0.96, 0.96]),
            group(3, 6, [-0.04, -0.04]),
            group(4, 8, [0.05, 0.05]),
            group(5, 10, [2, 2]),
            group(6, 12, [0.15, 0.15]),
            group(7, 14, [1e-05, 1e-05]),
        ],
        "rollout_time": 1.5,
    }
    yield {
        "name": "tool-time",
        "filter": "check_no_aborted",
        "args": {"n_samples_per_prompt": 2},
        "groups": [
            [[sample(0, 0, 1.0, response_length=9, ngt=2.5)], [sample(0, 1, 0.0, response_length=9, ngt=1.5)]],
            [[sample(1, 2, 1.0, response_length=4, ngt=0.0)], [sample(1, 3, 1.0, response_length=2, ngt=3.0)]],
        ],
        "rollout_time": 6.0,
    }
    yield {
        "name": "zero-length-responses",
        "filter": "check_no_aborted",
        "args": {"n_samples_per_prompt": 2, "rollout_num_gpus": 0},
        "groups": [group(0, 0, [0.0, 1.0], response="", response_length=0, prompt=0)],
        "rollout_time": 0.75,
    }
    repeated = "run ls -la then cat the file. " * 400
    yield {
        "name": "repetition",
        "filter": "check_no_aborted",
        "args": {"n_samples_per_prompt": 5},
        "groups": [
            [
                [sample(0, 0, 1.0, response=repeated, response_length=8)],
                [sample(0, 1, 0.0, response=noise_text(7, 12000), response_length=8)],
                [sample(0, 2, 0.0, response="\u00e9t\u00e9 " * 2600, response_length=8)],
                # Exactly 10000 characters: not "more than 10000", however repetitive.
                [sample(0, 3, 0.0, response="run ls " * 1428 + "done", response_length=8)],
                # 10200 UTF-16 units but 6800 code points: Python counts code points.
                [sample(0, 4, 0.0, response="\U0001f600 " * 3400, response_length=8)],
            ]
        ],
        "rollout_time": 1.0,
    }
    yield {
        "name": "float-sums",
        "filter": "check_no_aborted",
        "args": {"n_samples_per_prompt": 19, "rollout_num_gpus": 3},
        "groups": [
            [
                # np.mean sums pairwise: these 19 differ in the last bit from a left-to-right sum.
                [sample(0, k, 0.1 * k, response_length=3 + (k * 7) % 11, ngt=round(0.6 * k + 1 / 3, 6) + k / 7,
                        mismatch=[{"type": "assistant_text"}] if k % 3 == 0 else [])]
                for k in range(19)
            ]
        ],
        "rollout_time": 7.3,
    }
    yield {
        "name": "weight-versions-ppo",
        "filter": "check_no_aborted",
        "args": {"n_samples_per_prompt": 2, "advantage_estimator": "ppo", "rollout_num_gpus": 4},
        "groups": [
            [[sample(0, 0, 1.0, versions=("3", "4"))], [sample(0, 1, 1.0, versions=("4", "4"))]],
            [[sample(1, 2, 0.0, versions=("default", "5"))], [sample(1, 3, 0.0, versions=())]],
        ],
        "rollout_time": 2.25,
        "rollout_id": 3,
    }
    compacted = [
        [
            sample(0, 0, 1.0, rollout_id=0, response_length=4, loss_mask=[1, 1, 0, 1]),
            sample(0, 0, 1.0, rollout_id=0, response_length=5),
        ],
        [sample(0, 1, 0.0, rollout_id=1, response_length=3)],
    ]
    yield {
        "name": "passrate-compacted-group",
        "filter": "check_no_aborted",
        "args": {"n_samples_per_prompt": 2, "log_passrate": True},
        # Group 0 has 3 rows for 2 rollouts (one compacted): pass@k keeps only groups of exactly 2 rows.
        "groups": [
            compacted,
            [[sample(1, 2, 1.0, rollout_id=2)], [sample(1, 3, 0.0, rollout_id=3)]],
            [[sample(2, 4, 0.0, rollout_id=4)], [sample(2, 5, 0.0, rollout_id=5)]],
        ],
        "rollout_time": 3.0,
    }
    yield {
        "name": "passrate-every-group-compacted",
        "filter": "check_no_aborted",
        "args": {"n_samples_per_prompt": 2, "log_passrate": True},
        "groups": [compacted],
        "rollout_time": 1.0,
    }


# ---------------------------------------------------------------- running Miles


def make_args(case):
    args = {
        "advantage_estimator": "grpo",
        "rollout_num_gpus": 8,
        "use_session_server": "v2",
        "ci_test": False,
        "custom_rollout_log_function_path": None,
        "load_debug_rollout_data": None,
        "log_passrate": False,
        "sglang_speculative_algorithm": None,
        "log_reward_category": None,
        "reward_key": None,
        "wandb_always_use_train_step": False,
        "rollout_batch_size": len(case["groups"]),
        "global_batch_size": 1,
    }
    args.update(case["args"])
    return types.SimpleNamespace(**args)


def to_sample(Sample, record):
    fields = dict(record)
    fields["status"] = Sample.Status(record["status"])
    fields["prefix_cache_info"] = Sample.PrefixCacheInfo(**record["prefix_cache_info"])
    fields["metadata"] = json.loads(json.dumps(record["metadata"]))
    return Sample(**fields)


def run_case(case, miles, logged, generate):
    Sample = miles["Sample"]
    args = make_args(case)
    dynamic_filter = miles["load_function"](FILTERS[case["filter"]])
    gatherer = miles["MetricGatherer"]()
    data = []
    verdicts = []
    for record_group in case["groups"]:
        built = [[to_sample(Sample, s) for s in rollout] for rollout in record_group]
        output = miles["call_dynamic_filter"](dynamic_filter, args, built)
        verdicts.append({"keep": bool(output.keep), "reason": output.reason})
        if not output.keep:
            gatherer.on_dynamic_filter_drop(reason=output.reason)
            continue
        data.append(built)
    data = sorted(data, key=lambda g: g[0][0].index)
    extra = gatherer.collect()

    namespace, train_input, train_output = generate
    rollout_fn = namespace["RolloutFn"](train_output(samples=data, metrics=dict(extra)))
    output = asyncio.run(rollout_fn._call_train(train_input(rollout_id=case.get("rollout_id", 0))))
    agent_logged = {k: v for k, v in (output.metrics or {}).items() if k.startswith("agent/")}
    flat = data
    while flat and isinstance(flat[0], list):
        flat = [s for g in flat for s in g]
    agent_would_log = namespace["aggregate_agent_metrics"](flat)

    logged.clear()
    miles["log_rollout_data"](case.get("rollout_id", 0), args, flat, extra, case["rollout_time"])
    (call,) = logged
    return {
        "filter_verdicts": verdicts,
        "logged": call["log_dict"],
        "step_key": call["step_key"],
        "agent_logged": agent_logged,
        "agent_would_log": agent_would_log,
    }


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--miles-root", required=True)
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[2] / "fixtures" / "miles-oracle"))
    options = parser.parse_args(argv)
    miles_root = Path(options.miles_root).resolve()
    replaced = standins.install_dependency_standins(miles_root)
    logged = []
    install_tracking_capture(replaced, logged)

    from miles.ray.rollout.metrics import log_rollout_data
    from miles.rollout.filter_hub.base_types import MetricGatherer, call_dynamic_filter
    from miles.utils.misc import load_function
    from miles.utils.types import Sample

    generate = load_generate(miles_root, replaced)
    for name, why in replaced.items:
        print(f"[metrics-oracle] replaced {name}: {why}", file=sys.stderr)
    miles = {
        "Sample": Sample,
        "log_rollout_data": log_rollout_data,
        "MetricGatherer": MetricGatherer,
        "call_dynamic_filter": call_dynamic_filter,
        "load_function": load_function,
    }
    commit = subprocess.run(
        ["git", "-C", str(miles_root), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip() or "unknown"
    results = []
    for case in cases():
        results.append({**case, **run_case(case, miles, logged, generate)})
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    document = {
        "miles_commit": commit,
        "produced_by": "scripts/oracles/metrics_oracle.py: Miles' call_dynamic_filter + MetricGatherer, "
        "log_rollout_data (tracking.log captured) and generate.py's RolloutFn._call_train",
        "replaced": [{"name": name, "why": why} for name, why in replaced.items],
        "cases": results,
    }
    (out / "rollout-metrics.json").write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(results)} rollout-metrics cases to {out / 'rollout-metrics.json'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
