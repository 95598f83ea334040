#!/usr/bin/env python3
"""Writes fixtures/miles-oracle/rollout-metrics-next.json: what a newer Miles' rollout logging gives on
sample cases, run on CPU with /usr/bin/python3 (Debian's packages), as metrics_oracle.py does for 31f1ca96.

The newer `miles/ray/rollout/metrics.py` (normalised zero_std buckets, `zero_std/percentage`,
`all_negative_one_percentage`, episode metrics keyed with the adapter) is given as a file (--metrics-py):
no coherent newer Miles tree can be brought here (../shared/specs/miles-next.md). It is the version the
public-code index stores with 16275 characters (read_file id 69838327182; the index does not name its
repo and commit; its companion test file is radixark/miles tests/fast/ray/rollout/test_metrics.py, id
69543867190). Its imports resolve in --miles-root, a tree holding the newer `miles/utils/types.py`
(sii-avalanche/miles@4d412b5a, e.g. /work/miles-next) and 31f1ca96's `metric_utils`, `iter_utils` and
dynamic filters.

For each case the groups go through Miles' dynamic filter, the kept groups are sorted and flattened as in
metrics_oracle.py, and the newer `log_rollout_data` logs them: the dict handed to `tracking.log` is the
case's `logged`. The cases are metrics_oracle.py's plus ones for what changed: reward normalisation, exact
endpoint rates, compacted groups under `--log-passrate`, adapter-keyed episodes.

What is replaced (printed, and recorded in the file): the launcher's stand-ins (miles-bridge/standins.py),
`miles.utils.tracking_utils` (records `tracking.log`), and where the tree's `Sample` predates Multi-LoRA,
`AdapterRef` and `Sample.adapter` (the adapter identity is an opaque hashable value to the metrics; the
recipe has none). Weight versions become one span per call (`WeightVersionsPerCall`), the newer wire form.

Usage: /usr/bin/python3 scripts/oracles/metrics_next_oracle.py --miles-root PATH --metrics-py FILE
       [--out fixtures/miles-oracle]
"""

import argparse
import hashlib
import importlib.util
import json
import sys
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "miles-bridge"))

import metrics_oracle  # noqa: E402
import standins  # noqa: E402

sample = metrics_oracle.sample
group = metrics_oracle.group


def next_cases():
    """The 31f1ca96 cases, then the ones that exercise what the newer metrics.py changed."""
    yield from metrics_oracle.cases()
    yield {
        "name": "normalised-buckets",
        "filter": "check_no_aborted",
        "args": {"n_samples_per_prompt": 2},
        # int and float share a bucket, -0.0 is 0.0, 0.04 rounds to the 0.0 bucket but is not a zero reward.
        "groups": [
            group(0, 0, [1, 1]),
            group(1, 2, [1.0, 1.0]),
            group(2, 4, [0, 0]),
            group(3, 6, [-0.0, -0.0]),
            group(4, 8, [0.04, 0.04]),
            group(5, 10, [0.96, 0.96]),
            group(6, 12, [-1, -1]),
            group(7, 14, [-0.96, -0.96]),
            group(8, 16, [-1.0, 1.0]),
            group(9, 18, [2, 2]),
        ],
        "rollout_time": 2.0,
    }
    yield {
        "name": "passrate-complete-groups",
        "filter": "check_no_aborted",
        "args": {"n_samples_per_prompt": 4, "log_passrate": True},
        "groups": [group(0, 0, [1.0, 0.0, 0.0, 0.0]), group(1, 4, [0.0, 1.0, 1.0, 0.0]),
                   group(2, 8, [1, 1, 1, 1])],
        "rollout_time": 1.0,
    }
    yield {
        "name": "episode-rollout-keys",
        "filter": "check_no_aborted",
        "args": {"n_samples_per_prompt": 2},
        # Rollout ids repeat across groups; keys are scoped by group, then by the rollout/sample kind.
        "groups": [
            [
                [sample(0, 0, 1.0, rollout_id=7, response_length=5, loss_mask=[1, 1, 0, 0, 0]),
                 sample(0, 0, 1.0, rollout_id=7, response_length=7, loss_mask=[1, 1, 1, 0, 0, 0, 0])],
                [sample(0, 1, 0.0, rollout_id=8, response_length=4)],
            ],
            [
                [sample(1, 2, 0.5, rollout_id=7, response_length=8, loss_mask=[1] * 6 + [0, 0])],
                [sample(1, 3, 0.25, response_length=2)],
            ],
        ],
        "rollout_time": 1.0,
    }
    yield {
        "name": "adapter-keyed-episodes",
        "filter": "check_no_aborted",
        "args": {"n_samples_per_prompt": 2},
        # Two adapters number their rollouts independently: same (group, rollout id), different episodes;
        # any adapter present drops episode_response_length/* altogether.
        "adapters": {"0": "lora-a", "1": "lora-b"},
        "groups": [
            [[sample(0, 0, 1.0, rollout_id=0)], [sample(0, 1, 0.0, rollout_id=1)]],
            [[sample(0, 2, 0.0, rollout_id=0), sample(0, 2, 0.0, rollout_id=0)], [sample(0, 3, 0.0, rollout_id=1)]],
        ],
        "rollout_time": 1.0,
    }


def install_adapter_standin(types_module, replaced):
    if not hasattr(types_module, "AdapterRef"):
        types_module.AdapterRef = object
        replaced.add(
            "miles.utils.types.AdapterRef / Sample.adapter",
            "this tree's Sample predates Multi-LoRA adapters; metrics.py only hashes and compares the adapter "
            "(None on every sample unless a case names one)",
        )


def to_next_sample(types_module, record, adapter):
    Sample = types_module.Sample
    fields = dict(record)
    fields["status"] = Sample.Status(record["status"])
    fields["prefix_cache_info"] = Sample.PrefixCacheInfo(**record["prefix_cache_info"])
    fields["metadata"] = json.loads(json.dumps(record["metadata"]))
    fields["weight_versions"] = [
        types_module.WeightVersionsPerCall(spans=[types_module.WeightVersionSpan(str(v), i, i + 1)])
        for i, v in enumerate(record["weight_versions"])
    ]
    built = Sample(**fields)
    built.adapter = adapter
    return built


def run_case(case, miles, logged):
    args = metrics_oracle.make_args(case)
    dynamic_filter = miles["load_function"](metrics_oracle.FILTERS[case["filter"]])
    gatherer = miles["MetricGatherer"]()
    adapters = case.get("adapters", {})
    data, verdicts = [], []
    for gi, record_group in enumerate(case["groups"]):
        adapter = adapters.get(str(gi))
        built = [[to_next_sample(miles["types"], s, adapter) for s in rollout] for rollout in record_group]
        output = miles["call_dynamic_filter"](dynamic_filter, args, built)
        verdicts.append({"keep": bool(output.keep), "reason": output.reason})
        if not output.keep:
            gatherer.on_dynamic_filter_drop(reason=output.reason)
            continue
        data.append(built)
    data = sorted(data, key=lambda g: g[0][0].index)
    extra = gatherer.collect()
    flat = [s for g in data for rollout in g for s in rollout]
    logged.clear()
    miles["metrics"].log_rollout_data(case.get("rollout_id", 0), args, flat, extra, case["rollout_time"])
    (call,) = logged
    return {"filter_verdicts": verdicts, "logged": call["log_dict"], "step_key": call["step_key"]}


def load_metrics_module(path):
    spec = importlib.util.spec_from_file_location("miles.ray.rollout.metrics", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["miles.ray.rollout.metrics"] = module
    spec.loader.exec_module(module)
    return module


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--miles-root", required=True)
    parser.add_argument("--metrics-py", required=True)
    parser.add_argument("--out", default=str(HERE.parents[1] / "fixtures" / "miles-oracle"))
    options = parser.parse_args(argv)
    miles_root = Path(options.miles_root).resolve()
    metrics_path = Path(options.metrics_py).resolve()
    replaced = standins.install_dependency_standins(miles_root)
    logged = []
    metrics_oracle.install_tracking_capture(replaced, logged)

    import miles.utils.types as types_module
    from miles.rollout.filter_hub.base_types import MetricGatherer, call_dynamic_filter
    from miles.utils.function_registry import load_function

    install_adapter_standin(types_module, replaced)
    metrics = load_metrics_module(metrics_path)
    for name, why in replaced.items:
        print(f"[metrics-next-oracle] replaced {name}: {why}", file=sys.stderr)
    miles = {
        "types": types_module,
        "metrics": metrics,
        "MetricGatherer": MetricGatherer,
        "call_dynamic_filter": call_dynamic_filter,
        "load_function": load_function,
    }
    text = metrics_path.read_bytes()
    results = [{**case, **run_case(case, miles, logged)} for case in next_cases()]
    document = {
        "metrics_py": {
            "chars": len(text.decode("utf-8")),
            "sha256": hashlib.sha256(text).hexdigest(),
            "source": "miles/ray/rollout/metrics.py as the public-code index stores it (read_file id 69838327182,"
            " repo and commit not named by the index); normalised zero_std buckets, adapter-keyed episodes",
        },
        "types_py": "sii-avalanche/miles@4d412b5a miles/utils/types.py (in --miles-root)",
        "produced_by": "scripts/oracles/metrics_next_oracle.py: Miles' call_dynamic_filter + MetricGatherer, "
        "the newer log_rollout_data (tracking.log captured)",
        "replaced": [{"name": name, "why": why} for name, why in replaced.items],
        "cases": results,
    }
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "rollout-metrics-next.json").write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(results)} cases to {out / 'rollout-metrics-next.json'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
