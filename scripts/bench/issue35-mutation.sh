#!/usr/bin/env bash
# Issue 35's mutation scores before (c776157) and after, one configuration (stryker.house.config.mjs,
# vitest.mutate-house.config.ts) at concurrency 1. Each module set runs on the tree before, then on the
# tree after, against the same test files (`--testFiles`, globs that name the set's unit tests in either
# spelling), so a first set's figures exist even when a later one is cut short.
# Usage: scripts/bench/issue35-mutation.sh BEFORE_TREE AFTER_TREE OUT_DIR [SET...]
# then: npx node scripts/bench/mutation-scores.ts --reports OUT_DIR --out benchmarks/results/mutation-issue35.json
# BEFORE_TREE is a worktree of c776157 with node_modules linked; the two config files are copied into it.
set -uo pipefail
before=$1 after=$2 out=$3
shift 3
sets=${*:-session key harbor json}
mkdir -p "$out"
here=$(cd "$(dirname "$0")/../.." && pwd)
(cd "$here" && npx node scripts/bench/mutation-scores.ts --machine "$out/machine.json")
cp "$here/stryker.house.config.mjs" "$here/vitest.mutate-house.config.ts" "$before/"
cp "$here/stryker.house.config.mjs" "$here/vitest.mutate-house.config.ts" "$after/"

# The modules issue 35 moved, as each tree spells them, and the tests that guard them.
declare -A mutate_before mutate_after tests
mutate_before[session]=fakes/session/tree.ts,fakes/session/fast/run-fold.ts,fakes/session/fast/shared-ones.ts
mutate_after[session]=fakes/session/tree.ts,fakes/session/fast/message-trie.ts,fakes/session/fast/attach-hints.ts,fakes/session/fast/run-fold.ts,fakes/session/fast/shared-ones.ts
tests[session]='fakes/session/tree.test.ts,fakes/session/fast/*.test.ts,fakes/session/assembly*.test.ts,fakes/session/turn-sample.test.ts'
# The rollout key: the lines that spell it in the six callers (and, after, replay/model/rollout-key.ts).
mutate_before[key]=replay/grpo/normalize.ts:33-39,replay/grpo/loss-weights.ts:13-20,replay/metrics/compaction-metrics.ts:40-44,replay/model/rollout.ts:77-79,replay/checks/flat-samples.ts:19-19,replay/differential/harness-side.ts:42-42
mutate_after[key]=replay/model/rollout-key.ts,replay/grpo/normalize.ts:34-37,replay/grpo/loss-weights.ts:14-20,replay/metrics/compaction-metrics.ts:53-54,replay/checks/flat-samples.ts:20-20,replay/differential/harness-side.ts:43-43
tests[key]='replay/grpo/**/*.test.ts,replay/metrics/**/*.test.ts,replay/model/**/*.test.ts,replay/checks/**/*.test.ts,replay/differential/**/*.test.ts'
mutate_before[harbor]=fakes/harbor/engine/play-episode.ts
mutate_after[harbor]=fakes/harbor/engine/play-episode.ts,fakes/harbor/engine/compaction.ts,fakes/harbor/engine/episode-calls.ts,fakes/harbor/engine/episode-counters.ts,fakes/harbor/engine/episode-history.ts
tests[harbor]='fakes/harbor/engine/**/*.test.ts'
mutate_before[json]=common/python-json.ts,common/python-json-redump.ts
mutate_after[json]=common/python-json/faithful-loads.ts,common/python-json/loads.ts,common/python-json/dumps.ts,common/python-json/faithful-dumps.ts,common/python-json/redump.ts,common/python-json/values.ts
tests[json]='common/python-json*.test.ts,common/python-json/*.test.ts,common/json-elements.test.ts,common/native-json-keys.test.ts'

run() { # tree label mutate tests
  echo "$(date -u +%T) start $2" >>"$out/times.txt"
  (cd "$1" && npx stryker run stryker.house.config.mjs --mutate "$3" --testFiles "$4" >"$out/$2.log" 2>&1 &&
    cp reports/mutation/mutation.json "$out/$2.json") || echo "stryker $2 failed" >>"$out/failures.txt"
  echo "$(date -u +%T) end $2" >>"$out/times.txt"
}
for set in $sets; do
  run "$before" "$set-before" "${mutate_before[$set]}" "${tests[$set]}"
  run "$after" "$set-after" "${mutate_after[$set]}" "${tests[$set]}"
done
