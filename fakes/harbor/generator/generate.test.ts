import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readTb2Tasks } from '../episode-catalog.ts';
import { EpisodeScriptSchema } from '../episode-schema.ts';
import { generateEpisodes, generateTask } from './generate.ts';
import { DEFAULT_GENERATOR_PARAMS, GeneratorParamsSchema } from './params.ts';
import { selectTasks } from './task-selection.ts';

const tasks = await readTb2Tasks();

describe('episode generator', () => {
  it('takes its scale from the recipe: 8 variants, a 32768-token context, an 8192-token response limit', () => {
    // The recipe (docs/recipe.md): --n-samples-per-prompt 8 --max-seq-len 32768 --rollout-max-response-len
    // 8192; Terminus 2 (Harbor 6c9ba3f0 terminus_2.py): proactive threshold 8000, unwind target 4000.
    expect(DEFAULT_GENERATOR_PARAMS.samples_per_task).toBe(8);
    expect(DEFAULT_GENERATOR_PARAMS.context_limit).toBe(32768);
    expect(DEFAULT_GENERATOR_PARAMS.response_limit).toBe(8192);
    expect(DEFAULT_GENERATOR_PARAMS.proactive_threshold).toBe(8000);
    expect(DEFAULT_GENERATOR_PARAMS.unwind_target).toBe(4000);
    const [task] = generateEpisodes({ seed: 3, tasks: ['fix-git'] });
    const script = EpisodeScriptSchema.parse(task!.script);
    expect(script.variants).toHaveLength(8);
    expect(script.context).toEqual({
      limit: 32768,
      threshold: 8000,
      unwind_target: 4000,
      tokens_per_word: 1,
    });
  });

  it('writes valid episode scripts for any seed and task', () => {
    fc.assert(
      fc.property(fc.nat(), fc.constantFrom(...tasks), (seed, name) => {
        const { script, rollouts } = generateTask(seed, name, DEFAULT_GENERATOR_PARAMS);
        expect(EpisodeScriptSchema.safeParse(script).success).toBe(true);
        expect(script.instance_id).toBe(name);
        for (const r of rollouts) {
          const turns = r.variant.turns ?? [];
          expect(turns.length).toBe(r.turns);
          // A rollout ends where its ending says: a complete-twice submission, or the ending's turn.
          if (r.end === 'submitted') expect(turns.slice(-2).every((t) => t.complete === true)).toBe(true);
          if (r.end === 'timeout') expect(turns.at(-1)?.timeout).toBe(true);
          if (r.end === 'crash') expect(turns.at(-1)?.crash).toBeDefined();
          if (r.end === 'truncation') expect(turns.at(-1)?.words).toBeGreaterThan(8192);
          if (r.end === 'first_turn_failure') expect(turns).toHaveLength(1);
          if (r.variant.reward === 1) expect(r.end).toBe('submitted');
        }
      }),
      { numRuns: 40 },
    );
  });

  it('is a function of the seed: the same seed gives the same scripts, another seed different ones', () => {
    const names = tasks.slice(0, 6);
    const a = generateEpisodes({ seed: 7, tasks: names }).map((t) => t.script);
    const b = generateEpisodes({ seed: 7, tasks: names }).map((t) => t.script);
    const c = generateEpisodes({ seed: 8, tasks: names }).map((t) => t.script);
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(JSON.stringify(a)).not.toBe(JSON.stringify(c));
    // A task's script does not depend on which other tasks are generated with it.
    const alone = generateEpisodes({ seed: 7, tasks: [names[3]!] }).map((t) => t.script);
    expect(JSON.stringify(alone[0])).toBe(JSON.stringify(a[3]));
  });

  it('spreads group success rates, endings, compactions and unwinds over the 89 tasks', () => {
    const generated = generateEpisodes({ seed: 1, tasks });
    const rollouts = generated.flatMap((t) => t.rollouts);
    const perGroup = generated.map((t) => t.rollouts.filter((r) => r.variant.reward === 1).length);
    expect(perGroup).toContain(0);
    expect(perGroup).toContain(8);
    expect(perGroup.some((n) => n > 0 && n < 8)).toBe(true);
    const ends = new Set(rollouts.map((r) => r.end));
    for (const end of ['submitted', 'crash', 'policy_failure', 'timeout', 'truncation'] as const)
      expect(ends).toContain(end);
    const unwinds = new Set(rollouts.flatMap((r) => r.unwinds));
    expect([...unwinds].sort()).toEqual([0, 1, 2]);
    const twice = rollouts.filter((r) => r.compactions.filter((c) => c !== 'proactive_failed').length >= 2);
    expect(twice.length).toBeGreaterThan(0);
    expect(rollouts.some((r) => r.reasoning) && rollouts.some((r) => !r.reasoning)).toBe(true);
    expect(rollouts.some((r) => (r.variant.turns ?? []).some((t) => t.discard === 1))).toBe(true);
  });

  it('generates, for the pinned seeds, the scripts the generator gave before its restructure', async () => {
    const pinned = JSON.parse(
      await readFile(new URL('../../../fixtures/generator-digests.json', import.meta.url), 'utf8'),
    ) as { digests: Record<string, string> };
    const seeds = Object.keys(pinned.digests);
    expect(seeds.length).toBeGreaterThan(0);
    for (const seed of seeds) {
      const scripts = generateEpisodes({ seed: Number(seed), tasks }).map((t) => t.script);
      expect(scripts).toHaveLength(89);
      const digest = createHash('sha256').update(JSON.stringify(scripts)).digest('hex');
      expect({ seed, digest }).toEqual({ seed, digest: pinned.digests[seed] });
    }
  });

  it('picks tasks by seed and rejects a count beyond the task list', () => {
    expect(selectTasks(tasks, 1, 5)).toEqual(selectTasks(tasks, 1, 5));
    expect(new Set(selectTasks(tasks, 1, 89))).toEqual(new Set(tasks));
    expect(() => selectTasks(tasks, 1, 90)).toThrow(/--count must be at most 89/);
  });

  it('rejects bad parameters naming the field', () => {
    const bad = GeneratorParamsSchema.safeParse({ reactive_rate: 2 });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(['reactive_rate']);
    expect(GeneratorParamsSchema.safeParse({ unknown_knob: 1 }).success).toBe(false);
  });
});
