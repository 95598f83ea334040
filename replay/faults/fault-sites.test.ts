import { Tokenizer as RustTokenizer } from 'tokenizers';
import { beforeAll, describe, expect, it } from 'vitest';
import type { FaultScenario } from '../../contracts/fault-scenario.ts';
import { isTraceReply } from '../../contracts/trace.ts';
import { qwen3TokenizerPath } from '../../fakes/tokenizer/qwen3-tokenizer.ts';
import { catalogueFiles, readCatalogue } from './catalogue.ts';
import { type FaultSite, faultSites } from './fault-sites.ts';

/**
 * Where each catalogue row's fault shows in ids (docs/field-failures.md "The HTML page"). The expected
 * sites are the rows' designs (scripts/fixtures/field-failures.ts states which turn carries the fault);
 * the ids at a site are checked against the row file's own `completion_ids` and messages, decoded by HF's
 * Rust tokenizer (the npm `tokenizers` package), not by the code under test.
 */

const rows = new Map((await readCatalogue(await catalogueFiles())).map((r) => [r.scenario.id, r.scenario]));
let rust: RustTokenizer;
beforeAll(() => {
  rust = RustTokenizer.fromFile(qwen3TokenizerPath());
}, 60_000);

const row = (id: string): FaultScenario => rows.get(id)!;
const where = (s: FaultSite) => `r${s.rollout} t${s.turn} ${s.rule}`;
const decode = (ids: readonly number[]): Promise<string> => rust.decode([...ids], false);
const actualSpan = (s: FaultSite) => s.actual.slice(s.actualSpan[0], s.actualSpan[1]);
const expectedSpan = (s: FaultSite) => s.expected.slice(s.expectedSpan[0], s.expectedSpan[1]);
function emitted(scenario: FaultScenario, r: number, t: number): number[] {
  const response = scenario.rollouts[r]!.turns[t]!.response;
  if (!isTraceReply(response) || response.completion_ids === undefined) throw new Error('no ids stated');
  return response.completion_ids;
}

/** Each row's sites: the turns its design puts the fault in, and by which comparison they show. */
const SITES: Record<string, string[]> = {
  'resent-first-turn': ['r0 t2 not_an_extension'],
  'retry-after-rollback': ['r0 t2 not_an_extension', 'r0 t3 not_an_extension'],
  'rollback-then-longer': ['r0 t3 not_an_extension'],
  'concurrent-requests': ['r0 t2 concurrent_diverge', 'r0 t3 not_an_extension'],
  'upstream-abort': ['r0 t1 emitted_vs_render', 'r0 t2 not_an_extension'],
  // The aborted reply is the first, so the retry re-sends the first request.
  'upstream-abort-first-turn': ['r0 t0 emitted_vs_render', 'r0 t1 not_an_extension'],
  'infra-abort-scored-zero': [],
  'infra-abort-group-dropped': [],
  'length-recover': ['r0 t1 emitted_vs_render', 'r0 t2 not_an_extension'],
  'length-abort': ['r0 t1 emitted_vs_render'],
  'endoftext-turn-end': ['r0 t0 emitted_vs_render', 'r0 t1 not_an_extension'],
  // Every sample re-renders an empty think block, the clean sibling's too (miles #3113: on every sample).
  'empty-think-rerendered': ['r0 t1 rerendered_think', 'r0 t2 rerendered_think', 'r1 t1 rerendered_think'],
  'newline-after-im-end': ['r0 t1 template_newline'],
  'thinking-stripped': ['r0 t1 not_an_extension'],
  'retokenized-text': ['r0 t0 emitted_vs_render', 'r0 t1 not_an_extension'],
  'tool-call-zero-args': ['r0 t0 emitted_vs_render', 'r0 t1 not_an_extension'],
  // The literal marker re-encodes to the marker token either way: no id differs (its not_caught_why).
  'tool-call-literal-end': [],
  'tool-call-split-markers': ['r0 t0 emitted_vs_render', 'r0 t1 not_an_extension'],
  'tool-call-numbers-as-strings': ['r0 t0 emitted_vs_render', 'r0 t1 not_an_extension'],
  // The compacted rollout's resumed segment starts a new trajectory.
  'group-rows-grpo': ['r0 t3 not_an_extension'],
  'group-rows-metrics': ['r0 t3 not_an_extension'],
  'group-rows-pass-at-k': ['r0 t3 not_an_extension'],
  'sibling-rewards-differ': ['r0 t3 not_an_extension'],
};

describe('faultSites on the catalogue', () => {
  it("finds each row's fault in the turns its design puts it, and no other", () => {
    expect([...rows.keys()].sort()).toEqual(Object.keys(SITES).sort());
    for (const [id, scenario] of rows) {
      const { sites, none } = faultSites(scenario);
      expect(sites.map(where), id).toEqual(SITES[id]);
      expect(none === null, id).toBe(sites.length > 0);
    }
  });

  it('says why a row has no ids to show: an error answer, or no id differs', () => {
    for (const id of ['infra-abort-scored-zero', 'infra-abort-group-dropped'])
      expect(faultSites(row(id)).none, id).toMatch(/^the fault is an error answer \(503\) with no ids/);
    expect(faultSites(row('tool-call-literal-end')).none).toMatch(/the fault is not in the ids$/);
  });

  it('highlights <|endoftext|> where the render has <|im_end|>, at the end of the emitted ids', async () => {
    const scenario = row('endoftext-turn-end');
    const [site, next] = faultSites(scenario).sites;
    const ids = emitted(scenario, 0, 0);
    expect(site!.actual.slice(-ids.length)).toEqual(ids);
    expect(site!.actualSpan).toEqual([site!.actual.length - 1, site!.actual.length]);
    expect(await decode(actualSpan(site!))).toBe('<|endoftext|>');
    expect(await decode(expectedSpan(site!))).toBe('<|im_end|>');
    // The next request renders <|im_end|> where the session holds <|endoftext|>.
    expect(next!.actualSpan[0]).toBe(site!.actualSpan[0]);
    expect(await decode(expectedSpan(next!))).toBe('<|endoftext|>');
    expect(await decode(actualSpan(next!))).toMatch(/^<\|im_end\|>\n<\|im_start\|>user\n1 failed/);
  });

  it('highlights the unquoted number the model wrote against the quoted one the agent re-sends', async () => {
    const [site, next] = faultSites(row('tool-call-numbers-as-strings')).sites;
    expect(await decode(actualSpan(site!))).toContain(' 30}');
    expect(await decode(expectedSpan(site!))).toContain(' "30"}');
    expect(await decode(actualSpan(next!))).toContain(' "30"}');
  });

  it('highlights the one-character-a-token reply as the row states it', async () => {
    const scenario = row('retokenized-text');
    const [site] = faultSites(scenario).sites;
    const ids = emitted(scenario, 0, 0);
    // From the reply's first id on; the tail the render shares (`q<|im_end|>`) is not highlighted.
    expect(site!.actual.slice(site!.actualSpan[0])).toEqual(ids);
    expect('I will run the tests first: pytest -q'.startsWith(await decode(actualSpan(site!)))).toBe(true);
    expect(await decode(site!.actual.slice(site!.actualSpan[1]))).toBe('q<|im_end|>');
  });

  it("highlights the reasoning the history leaves out, from the reply's reasoning_content", async () => {
    const scenario = row('thinking-stripped');
    const [site] = faultSites(scenario).sites;
    const reply = scenario.rollouts[0]!.turns[0]!.response as unknown as {
      message: { reasoning_content: string };
    };
    expect(await decode(expectedSpan(site!))).toContain(reply.message.reasoning_content);
    expect(await decode(actualSpan(site!))).not.toContain(reply.message.reasoning_content);
  });

  it('marks where a re-sent or retried request stops short of the tokens before it', async () => {
    // The turn sent with the same request before: what the session went on with starts with its reply.
    for (const [id, turn, same] of [
      ['resent-first-turn', 2, 0],
      ['retry-after-rollback', 2, 1],
    ] as const) {
      const site = faultSites(row(id)).sites.find((s) => s.turn === turn)!;
      expect(site.actualSpan, id).toEqual([site.actual.length, site.actual.length]);
      expect(await decode(site.actual), id).toMatch(/<\|im_start\|>assistant\n$/);
      expect(row(id).rollouts[0]!.turns[same]!.request).toEqual(row(id).rollouts[0]!.turns[turn]!.request);
      const went = await decode(expectedSpan(site));
      expect(went.startsWith(await decode(emitted(row(id), 0, same))), id).toBe(true);
    }
  });

  it('highlights the \\n the template writes after <|im_end|> before a tool message', async () => {
    const scenario = row('newline-after-im-end');
    const [site] = faultSites(scenario).sites;
    const ids = emitted(scenario, 0, 0);
    const [start, end] = site!.actualSpan;
    expect(end - start).toBe(1);
    expect(site!.actual.slice(start - ids.length, start)).toEqual(ids);
    expect(await decode([site!.actual[start - 1]!])).toBe('<|im_end|>');
    expect(await decode(actualSpan(site!))).toBe('\n');
    expect(await decode(site!.actual.slice(end, end + 4))).toBe('<|im_start|>user\n<tool_response>');
  });
});
