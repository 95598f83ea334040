import { readFile } from 'node:fs/promises';
import { HarnessError } from '../../common/errors.ts';
import { fsReason } from '../../common/fs-reason.ts';
import { pythonJsonLoads } from '../../common/python-json/loads.ts';
import { type FaultScenario, FaultScenarioSchema } from '../../contracts/fault-scenario.ts';
import { isTraceReply } from '../../contracts/trace.ts';
import { qwen3Tokenizer } from '../../fakes/tokenizer/qwen3-tokenizer.ts';
import { inexpressibleReason } from './kinds.ts';

/**
 * Reads a `fault-scenario/1` file (contracts/fault-scenario.ts) and refuses, with the reason, a scenario
 * the chosen tokenizer cannot play: a fault kind it cannot express, or stated ids it cannot decode.
 */

function refused(source: string, reason: string): HarnessError {
  return new HarnessError('config.scenario_refused', `${source}: refused: ${reason}`, {
    details: { source, reason },
  });
}

/** Why the scenario cannot be played as written, or null. */
export function scenarioRefusal(scenario: FaultScenario): string | null {
  const inexpressible = inexpressibleReason(scenario.kind, scenario.tokenizer);
  if (inexpressible !== null) return inexpressible;
  for (const [r, rollout] of scenario.rollouts.entries())
    for (const [t, turn] of rollout.turns.entries()) {
      if (!isTraceReply(turn.response) || turn.response.completion_ids === undefined) continue;
      const where = `rollouts.${r}.turns.${t}.response.completion_ids`;
      if (scenario.tokenizer === 'toy')
        return `${where}: the toy tokenizer cannot decode stated ids (its ids are CRC-32s of words it learns from messages); state ids on qwen3`;
      const tokenizer = qwen3Tokenizer();
      const unknown = turn.response.completion_ids.findIndex((id) => !tokenizer.knowsId(id));
      if (unknown !== -1)
        return `${where}.${unknown}: id ${turn.response.completion_ids[unknown]} is not in the Qwen3 vocabulary (0-151668), so no tokenizer can decode it`;
    }
  for (const [r, rollout] of scenario.rollouts.entries()) {
    const late = rollout.concurrent.find((k) => k >= rollout.turns.length);
    if (late !== undefined) return `rollouts.${r}.concurrent: turn ${late} does not exist`;
  }
  return null;
}

/** Validates parsed JSON as a scenario, then refuses one that cannot be played. */
export function parseFaultScenario(raw: unknown, source: string): FaultScenario {
  const result = FaultScenarioSchema.safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0];
    const field = issue?.path.join('.') ?? '';
    throw new HarnessError(
      'config.scenario_invalid',
      `${source}: not a fault-scenario/1 file (${field || '(root)'}: ${issue?.message ?? 'invalid'})`,
      { details: { source, field } },
    );
  }
  const reason = scenarioRefusal(result.data);
  if (reason !== null) throw refused(source, reason);
  return result.data;
}

export async function readFaultScenario(path: string): Promise<FaultScenario> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new HarnessError('config.input_unreadable', `scenario ${path}: ${fsReason(error)}`, {
      details: { path, reason: fsReason(error) },
    });
  }
  let raw: unknown;
  try {
    raw = pythonJsonLoads(text);
  } catch (error) {
    throw new HarnessError('config.scenario_invalid', `${path}: not JSON (${(error as Error).message})`, {
      details: { source: path },
    });
  }
  return parseFaultScenario(raw, path);
}
