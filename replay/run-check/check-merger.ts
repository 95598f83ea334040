import { MAX_EVIDENCE, type SmokeCheck } from './check-result.ts';

const RANK: Record<SmokeCheck['verdict'], number> = { fail: 3, finding: 2, pass: 1, undecided: 0 };

/**
 * The dump checks run step by step (a step's dumps are let go once checked); this folds one check's
 * per-step results into the run's: the worst verdict (undecided only when every step was), the evidence
 * in step order up to the cap, and a summary naming the steps that did not pass.
 */
export class CheckMerger {
  private readonly byName = new Map<
    string,
    {
      first: SmokeCheck;
      verdict: SmokeCheck['verdict'];
      evidence: SmokeCheck['evidence'];
      notes: string[];
      steps: number;
    }
  >();

  add(step: number, check: SmokeCheck): void {
    let state = this.byName.get(check.name);
    if (!state) {
      state = { first: check, verdict: check.verdict, evidence: [], notes: [], steps: 0 };
      this.byName.set(check.name, state);
    }
    state.steps += 1;
    if (RANK[check.verdict] > RANK[state.verdict]) state.verdict = check.verdict;
    for (const e of check.evidence) if (state.evidence.length < MAX_EVIDENCE) state.evidence.push(e);
    if (check.verdict !== 'pass') state.notes.push(`step ${step}: ${check.summary}`);
  }

  finish(): SmokeCheck[] {
    return [...this.byName.values()].map(({ first, verdict, evidence, notes, steps }) => ({
      name: first.name,
      source: first.source,
      verdict,
      summary:
        notes.length === 0
          ? `${steps} steps: ${first.summary}`
          : `${steps - notes.length} of ${steps} steps pass; ${notes.join('; ')}`,
      evidence,
    }));
  }
}
