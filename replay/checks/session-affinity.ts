import { checkResult, evidence } from './evidence.ts';
import type { Evidence } from './evidence-schema.ts';
import type { CheckData, InvariantCheck } from './types.ts';

const NAME = 'session_affinity';
const TITLE = 'every call of a session reaches the one worker that owns it';

/**
 * Under `--session-server-workers N` each worker is its own instance with its own sessions: the rollout
 * side picks one per session and every later call must use the URL it made (radixark/miles@067dc320
 * miles/rollout/generate_utils/openai_endpoint_utils.py `OpenAIEndpointTracer.create`). A session whose
 * calls reached two workers fails: its other worker has no such session (404s), or two halves of one
 * trajectory live apart. Runs on the routing the replay's fake workers report; a source without it
 * (a Miles dump, Miles' own server) gives mode `none` and nothing to judge.
 */
export const sessionAffinityCheck: InvariantCheck = {
  name: NAME,
  title: TITLE,
  requires: [],
  uses: [],
  run(data: CheckData) {
    const out: Evidence[] = [];
    let seen = false;
    for (const step of data.steps) {
      if (step.session_routing === undefined) continue;
      seen = true;
      for (const routing of step.session_routing) {
        if (routing.workers.length < 2) continue;
        out.push(
          evidence(
            'session_split_across_workers',
            'fail',
            `session ${routing.session_id} was called on ${routing.workers.length} workers (${routing.workers.join(', ')}); its calls must all reach the worker its URL names`,
            { step: step.step, data: { session_id: routing.session_id, workers: [...routing.workers] } },
          ),
        );
      }
    }
    return checkResult(NAME, TITLE, seen ? 'workers' : 'none', out);
  },
};
