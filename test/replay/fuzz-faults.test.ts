import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runApplicableChecks } from '../../replay/checks/run-checks.ts';
import { faultParams } from '../../replay/fuzz/faults.ts';
import { materializeBatch } from '../../replay/fuzz/materialize.ts';
import { runReplay } from '../../replay/run-replay.ts';

/**
 * A catalogue fault mixed into generated episodes (`harness fuzz --faults`): `endoftext_turn_end` at rate 1
 * on qwen3 makes every main reply end with `<|endoftext|>`, and the replay's samples then carry the
 * mismatch Miles' own session server gives that fault (`special_token_count`, recorded in
 * fixtures/field-failures/endoftext-turn-end.json under profile 31f1ca96); the same batch without it has none.
 */

const dir = await mkdtemp(join(tmpdir(), 'fuzz-faults-'));
afterAll(() => rm(dir, { recursive: true, force: true }));
const batch = { groupSeeds: [11], samples: 2, contextLimit: 4096, maxTurns: 6 };

async function mismatchTypes(faults: string, sub: string): Promise<string[]> {
  const materialized = await materializeBatch(
    batch,
    join(dir, sub),
    ['task-a'],
    faultParams(faults, 'qwen3'),
    'qwen3',
  );
  const { checkData } = await runReplay(materialized.options, {
    signal: new AbortController().signal,
    progress: { write: () => true },
  });
  const tito = runApplicableChecks(checkData).results.find((r) => r.name === 'tito_session_consistent')!;
  return [...new Set(tito.evidence.flatMap((e) => (e.data as { types: string[] }).types))].sort();
}

describe('fuzz --faults endoftext_turn_end', () => {
  it("gives the replay's samples Miles' mismatch for the fault, and none without it", async () => {
    expect(await mismatchTypes('endoftext_turn_end:1', 'with')).toEqual(['special_token_count']);
    expect(await mismatchTypes('endoftext_turn_end:0', 'without')).toEqual([]);
  });
});
