#!/usr/bin/env python3
"""Runs Miles' own reward post-processing and pass@k on given rows, for the field-failure catalogue
(`harness catalogue --miles-root`, docs/field-failures.md): `_post_process_rewards` (radixark/miles
miles/ray/rollout/train_data_conversion.py: one reward per rollout, normalised per prompt group, or the
ValueError siblings with different rewards raise) and `_compute_passrate_from_samples`
(miles/ray/rollout/metrics.py: pass@k over complete groups only).

Reads the request (JSON) from --request: {"args": {advantage_estimator, rewards_normalization,
grpo_std_normalization, n_samples_per_prompt, rollout_batch_size}, "rows": [{group_index, index, rollout_id,
reward}]}; prints the result (JSON) on stdout: {"rewards": {"advantages": [...]} or {"raised": "Type: text"},
"passrate": {...}, "passrate_excluded_groups": N}. Exit 3 for an unmet precondition (no checkout, a Debian
module missing), as the other launchers here.
"""

import argparse
import json
import sys
from argparse import Namespace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import rollout_driver  # noqa: E402
import standins  # noqa: E402

CONVERSION = Path("miles/ray/rollout/train_data_conversion.py")


def newer_reward_args(miles_root: Path) -> list[tuple[str, object, str]]:
    """The flags this checkout's reward conversion reads that the request does not carry, at that Miles'
    defaults, read off the file (capabilities, never a commit string): the newer `_normalize_rewards_by_rollout`
    (sii-avalanche/miles@4d412b5a train_data_conversion.py) takes its baseline from `args.quantile_k`, whose
    `--quantile-k` defaults to None, the group mean (sii-avalanche/miles@379af027 miles/utils/arguments.py)."""
    text = (miles_root / CONVERSION).read_text(encoding="utf-8")
    if "args.quantile_k" not in text:
        return []
    return [("quantile_k", None, f"{CONVERSION} reads args.quantile_k; --quantile-k's default None (the group mean)")]


def main(argv) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--miles-root", required=True)
    parser.add_argument("--request", required=True)
    options = parser.parse_args(argv)
    miles_root = Path(options.miles_root).resolve()
    if not (miles_root / CONVERSION).is_file():
        standins.precondition(f"--miles-root {miles_root}: no {CONVERSION} (not a radixark/miles checkout)")
    if not standins.importable("torch"):
        standins.precondition("Python modules cannot be imported: torch (Debian package python3-torch)")
    request = json.loads(Path(options.request).read_text(encoding="utf-8"))

    replaced = standins.install_dependency_standins(miles_root)
    rollout_driver.install_ray_standin(replaced)
    rollout_driver.install_event_logger_standin(replaced)
    rollout_driver.install_placeholder_modules(replaced)
    for name, why in replaced.items:
        print(f"replaced {name}: {why}", file=sys.stderr, flush=True)

    from miles.ray.rollout.metrics import _compute_passrate_from_samples
    from miles.ray.rollout.train_data_conversion import _post_process_rewards
    from miles.utils.types import Sample

    args = Namespace(reward_key=None, **request["args"])
    for name, value, why in newer_reward_args(miles_root):
        setattr(args, name, value)
        print(f"adapted {name}: {why}", file=sys.stderr, flush=True)
    samples = [
        Sample(group_index=r["group_index"], index=r["index"], rollout_id=r["rollout_id"], reward=r["reward"])
        for r in request["rows"]
    ]
    try:
        _raw, normalized = _post_process_rewards(args, samples, None)
        rewards = {"advantages": [float(x) for x in normalized]}
    except Exception as error:  # Miles' own exception is the verdict
        rewards = {"raised": f"{type(error).__name__}: {error}"}
    groups = {}
    for sample in samples:
        groups.setdefault(sample.group_index, []).append(sample)
    excluded = (
        sum(1 for g in groups.values() if len(g) != args.n_samples_per_prompt)
        if args.n_samples_per_prompt > 1
        else 0
    )
    passrate = _compute_passrate_from_samples(args, samples) if samples else {}
    print(
        json.dumps(
            {
                "rewards": rewards,
                "passrate": {k: float(v) for k, v in passrate.items()},
                "passrate_excluded_groups": excluded,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
