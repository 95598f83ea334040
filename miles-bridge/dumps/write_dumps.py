#!/usr/bin/env python3
"""Runs Miles' own debug-dump writers on CPU, as RolloutManager.generate and the trainer call them.

For every step of the input: Miles' postprocess_rollout_data (validation, flattening), then
save_debug_rollout_data (rollout_data/<N>.pt and trajectory/<N>.jsonl), convert_samples_to_train_data,
the DP split (split_train_data_by_dp_scheduled_raw when can_schedule_on_rollout_side holds, else
split_train_data_by_dp_raw: split_train_data_by_dp without the object store), process_rollout_data_shard
and save_debug_train_data_for_rank for each rank (train_data/<N>_<rank>.pt). With --log FILE, Miles'
log_rollout_data runs after the dump, as RolloutManager.generate calls it, and its `perf N: {...}` line
(logger.info) is appended to FILE, so the log is what a run's launcher log holds. Eval entries go through
save_debug_rollout_data(evaluation=True) (rollout_data/eval_<N>.pt). Miles is imported from --miles-root;
only modules that fail to import here are replaced (miles-bridge/standins.py `install_dump_standins` names
each one and why).

What a real run adds is not reproduced: the trainer's own columns (log_probs, advantages, ...) and the
object store's codec between the split and the trainer.

Input (JSON file): {"repeat"?: R, "args": {global_batch_size, dp_size, n_samples_per_prompt, rollout_batch_size,
  allow_partial_train_step?, max_tokens_per_gpu?}, "steps": [{"rollout_id": N, "groups": [[[sample dict,
  ...] per rollout] per group], optional global_batch_size / dp_size / allow_partial_train_step overrides}],
  "eval": [{"rollout_id": N, "name": str, "samples": [sample dict, ...]}]}
Sample dicts use Miles' Sample field names (Sample.from_dict), plus an optional "reward_type" ("int" or
"float": the Python type of the reward, which JSON cannot keep).
Output (stdout, JSON): {"replaced": [[module, why], ...], "steps": [{"rollout_id", "mode", "num_rollouts",
  "partitions", "error"}]}.

A step where Miles raises (postprocess_rollout_data's "Not enough samples", a split assertion) is
reported with its message and writes no train data. Exit codes: 0 done; 1 anything else raised; 2 usage;
3 Miles or torch cannot be imported.

The writers are the tree's: --miles-root a newer Miles tree (e.g. /work/miles-next, with
sii-avalanche/miles@4d412b5a's debug_data.py and train_data_conversion.py, docs/conformance.md) writes
the newer dumps (span-dict weight versions, sample_occurrence rows), run with a Python that has pydantic 2;
--metrics-py FILE takes log_rollout_data from that file instead of the tree's metrics.py.

Usage: write_dumps.py --miles-root PATH --input FILE --details DIR [--log FILE [--metrics-py FILE]]
"""

import argparse
import copy
import json
import sys
from argparse import Namespace
from pathlib import Path

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_MISSING = 0, 1, 2, 3


def miles_args(spec, details):
    """The argparse values the writers read, as the recipe sets them (--dump-details, grpo, dynamic batch)."""
    return Namespace(
        # --dump-details DIR sets these three templates (miles/utils/arguments.py, post-parse).
        save_debug_rollout_data=f"{details}/rollout_data/{{rollout_id}}.pt",
        save_debug_train_data=f"{details}/train_data/{{rollout_id}}_{{rank}}.pt",
        save_debug_trajectory_data=f"{details}/trajectory/{{rollout_id}}.jsonl",
        qkv_format="thd",
        global_batch_size=spec["global_batch_size"],
        n_samples_per_prompt=spec["n_samples_per_prompt"],
        rollout_batch_size=spec["rollout_batch_size"],
        advantage_estimator="grpo",
        rewards_normalization=True,
        grpo_std_normalization=spec["n_samples_per_prompt"] > 1,
        reward_key=None,
        disable_rollout_trim_samples=False,
        use_dynamic_global_batch_size=False,
        use_dynamic_batch_size=True,
        max_tokens_per_gpu=spec.get("max_tokens_per_gpu", 16384),
        balance_data=True,
        balance_by_flops=False,
        allow_partial_train_step=spec.get("allow_partial_train_step", False),
        micro_batch_size=1,
        multi_lora=False,
        # What the newer train_data_conversion.py (sii-avalanche/miles@4d412b5a) reads besides: no top-k
        # logprobs (rollout_top_logprobs_num 0, its default in miles/utils/rollout_topk_logprobs.py) and
        # the group mean as the baseline (quantile_k None; 31f1ca96 has no such flag and always takes the mean).
        rollout_top_logprobs_num=0,
        quantile_k=None,
        # What log_rollout_data reads (miles/ray/rollout/metrics.py), as the recipe leaves them.
        custom_rollout_log_function_path=None,
        load_debug_rollout_data=None,
        log_passrate=False,
        rollout_num_gpus=spec.get("rollout_num_gpus"),
        use_session_server="v2",
        sglang_speculative_algorithm=None,
        log_reward_category=None,
        ci_test=False,
        wandb_always_use_train_step=False,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--miles-root", required=True)
    parser.add_argument("--input", required=True)
    parser.add_argument("--details", required=True)
    parser.add_argument("--log", help="append log_rollout_data's `perf N: {...}` lines here")
    parser.add_argument(
        "--metrics-py",
        help="with --log: log_rollout_data from this file instead of the tree's miles/ray/rollout/metrics.py "
        "(the newer Miles' normalised metrics.py, docs/replay.md), loaded as miles.ray.rollout.metrics",
    )
    try:
        options = parser.parse_args(argv)
    except SystemExit as exit_:
        return EXIT_OK if exit_.code == 0 else EXIT_USAGE

    # The bridge's one stand-in installer lives one folder up (miles-bridge/standins.py).
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import standins

    replacements = standins.install_dump_standins(Path(options.miles_root), tracking=options.log is not None)
    replaced = replacements.items
    try:
        from miles.ray.rollout.debug_data import save_debug_rollout_data
        from miles.ray.rollout.rollout_data_conversion import postprocess_rollout_data
        from miles.ray.rollout.train_data_conversion import (
            can_schedule_on_rollout_side,
            convert_samples_to_train_data,
            process_rollout_data_shard,
            split_train_data_by_dp_raw,
            split_train_data_by_dp_scheduled_raw,
        )
        from miles.utils.train_dump_utils import save_debug_train_data_for_rank
        from miles.utils.types import Sample

        if options.log and options.metrics_py:
            import miles.utils.types as types_module

            standins.install_adapter_ref(types_module, replacements)
            log_rollout_data = standins.load_module_from("miles.ray.rollout.metrics", options.metrics_py).log_rollout_data
        elif options.log:
            from miles.ray.rollout.metrics import log_rollout_data
    except ImportError as error:
        print(f"write_dumps: cannot import Miles from {options.miles_root}: {error}", file=sys.stderr)
        return EXIT_MISSING

    standins.install_sample_adapter(Sample, replacements)
    if options.log:
        import logging

        handler = logging.FileHandler(options.log)
        handler.setFormatter(logging.Formatter("%(message)s"))
        metrics_logger = logging.getLogger("miles.ray.rollout.metrics")
        metrics_logger.addHandler(handler)
        metrics_logger.setLevel(logging.INFO)
    spec = json.loads(Path(options.input).read_text())
    args = miles_args(spec["args"], options.details)

    def sample_of(record):
        # JSON writes a float 1.0 as 1: "reward_type" says which Python type the reward had (Harbor's
        # agent server gives floats), and Miles' zero-std metric keys on str(round(reward, 1)).
        record = dict(record)
        reward_type = record.pop("reward_type", None)
        reward = record.get("reward")
        if reward_type == "float" and isinstance(reward, int) and not isinstance(reward, bool):
            record["reward"] = float(reward)
        return Sample.from_dict(record)

    def samples_of(nested):
        return [[[sample_of(s) for s in rollout] for rollout in group] for group in nested]

    results = []
    # "repeat": R writes the steps R times under rollout ids offset by the number of steps (the scale
    # benchmark's long run, scripts/bench/check-run-bench.ts); a fresh copy each time, since the
    # trajectory writer pops metadata["messages"] from the samples it is given.
    repeat = int(spec.get("repeat", 1))
    planned = (
        dict(copy.deepcopy(step) if repeat > 1 else step, rollout_id=step["rollout_id"] + k * len(spec["steps"]))
        for k in range(repeat)
        for step in spec["steps"]
    )
    for step in planned:
        rollout_id = step["rollout_id"]
        # A step may override the batch settings, so one run can hold several schedule cases.
        args.global_batch_size = step.get("global_batch_size", spec["args"]["global_batch_size"])
        args.allow_partial_train_step = step.get(
            "allow_partial_train_step", spec["args"].get("allow_partial_train_step", False)
        )
        dp_size = step.get("dp_size", spec["args"]["dp_size"])
        # What the Megatron backend advertises (cp 1, no virtual pipeline), so the rollout side can schedule.
        parallel = dict(dp_size=dp_size, cp_size=1, vpp_size=1, microbatch_group_size_per_vp_stage=1)
        mode = None
        try:
            data, metadata = postprocess_rollout_data(args, samples_of(step["groups"]), parallel)
            save_debug_rollout_data(args, data, rollout_id=rollout_id, evaluation=False, metadata=metadata)
            if options.log:
                # RolloutManager.generate's order: the dump first (it moves messages to the sidecar), then the log.
                log_rollout_data(rollout_id, args, data, dict(step.get("extra_metrics", {})), step.get("rollout_time", 1.0))
            train_data = convert_samples_to_train_data(args, data, metadata, None, None)
            mode = "rollout_side" if can_schedule_on_rollout_side(args, train_data, parallel) else "legacy"
            if mode == "rollout_side":
                shards = split_train_data_by_dp_scheduled_raw(args, train_data, train_parallel_config=parallel)
            else:
                shards = split_train_data_by_dp_raw(args, train_data, dp_size=dp_size)
        except (AssertionError, ValueError) as error:
            # Miles would stop the run here; the caller compares the message.
            results.append(dict(rollout_id=rollout_id, mode=mode, num_rollouts=None, partitions=None, error=str(error)))
            continue
        partitions = [[int(i) for i in shard["partition"]] for shard in shards]
        num_rollouts = shards[0].get("num_rollouts")
        for rank, shard in enumerate(shards):
            shard = process_rollout_data_shard(args, shard)
            save_debug_train_data_for_rank(args, rollout_id=rollout_id, rollout_data=shard, rank=rank)
        results.append(
            dict(rollout_id=rollout_id, mode=mode, num_rollouts=num_rollouts, partitions=partitions, error=None)
        )
    for entry in spec.get("eval", []):
        data = {entry["name"]: {"samples": [sample_of(s) for s in entry["samples"]]}}
        save_debug_rollout_data(args, data, rollout_id=entry["rollout_id"], evaluation=True)

    print(json.dumps(dict(replaced=replaced, steps=results)))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
