import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MILES_PROFILES } from '../../contracts/miles-profile.ts';
import { replyMessage, startStack } from './support.ts';

/**
 * Under every Miles profile, the session server with all its speed switches on (the default) and all off
 * (fakes/session/options.ts `SessionServerPerformance`) answers the same bytes: the profile's rules run
 * before or after the fast paths, never inside them (docs/session-server.md "Miles profiles").
 */

type Stack = Awaited<ReturnType<typeof startStack>>;
const ALL_OFF = {
  foldAsRuns: false,
  shareRecordMemory: false,
  reuseChatBodyBytes: false,
  poolForwardedBodies: false,
  chatBodyBuffers: false,
  indexAttachSearch: false,
} as const;

const U1 = { role: 'user', content: 'task: make the tests pass é 😀' };
const tool = (content: string) => ({ role: 'tool', content });

/** Three turns, a branch off the first reply, a re-send of it; then GET and samples, ids masked. */
async function answers(stack: Stack): Promise<string[]> {
  const { client } = stack;
  const id = await client.create();
  const history: Array<Record<string, unknown>> = [U1];
  for (const next of [tool('first output'), tool('second output'), null]) {
    const answer = await client.chat(id, { messages: [...history], temperature: 1.0 });
    if (next !== null) history.push(replyMessage(answer.json), next);
  }
  const branch = [...history.slice(0, 2), tool('another way')];
  await client.chat(id, { messages: branch });
  await client.chat(id, { messages: branch });
  const view = await (await fetch(`${stack.session.url}/sessions/${id}`)).text();
  const samples = await fetch(`${stack.session.url}/sessions/${id}/samples`, {
    method: 'POST',
    body: '{"metadata": {"reward": 1.0}}',
  });
  const bytes = Buffer.from(await samples.arrayBuffer()).toString('latin1');
  const digest = (text: string) =>
    createHash('sha256').update(text.replaceAll(id, '<session>'), 'latin1').digest('hex');
  return [digest(view), `${samples.status} ${digest(bytes)}`];
}

describe.each(MILES_PROFILES.map((p) => [p.name, p] as const))('profile %s', (_name, profile) => {
  let stacks: Stack[];
  beforeAll(async () => {
    stacks = await Promise.all(
      [{}, ALL_OFF].map((performance) =>
        startStack({ clock: () => 1_700_000_000, milesProfile: profile, performance }),
      ),
    );
  });
  afterAll(() => Promise.all(stacks.map((s) => s.close())));

  it('answers GET and samples with the same bytes, speed switches on or off', async () => {
    const [fast, plain] = await Promise.all(stacks.map(answers));
    expect(fast![1]).toMatch(/^200 /);
    expect(plain).toEqual(fast);
  });
});
