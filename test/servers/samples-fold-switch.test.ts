import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replyMessage, startStack } from './support.ts';

/**
 * The session server with the samples op's fold as runs (the default) and on plain lists
 * (`performance: { foldAsRuns: false }`, fakes/session/options.ts), driven with the same chats: every
 * samples reply must be the same bytes, so the switch reaches the op and changes nothing a client sees.
 */

type Stack = Awaited<ReturnType<typeof startStack>>;
let stacks: Stack[];
beforeAll(async () => {
  stacks = await Promise.all(
    [true, false].map((foldAsRuns) =>
      startStack({ clock: () => 1_700_000_000, performance: { foldAsRuns } }),
    ),
  );
});
afterAll(() => Promise.all(stacks.map((s) => s.close())));

const U1 = { role: 'user', content: 'task: make the tests pass é 😀' };
const tool = (content: string) => ({ role: 'tool', content });

/**
 * A chain of three turns, a branch off its first reply, and the samples reply: its status and the sha256
 * of its bytes (the session id masked; the reply is binary).
 */
async function samplesBytes(stack: Stack, body: string): Promise<string> {
  const { client } = stack;
  const id = await client.create();
  const history: Array<Record<string, unknown>> = [U1];
  for (const next of [tool('first output'), tool('second output'), null]) {
    const answer = await client.chat(id, { messages: [...history] });
    if (next !== null) history.push(replyMessage(answer.json), next);
  }
  await client.chat(id, { messages: [...history.slice(0, 2), tool('another way')] });
  const response = await fetch(`${stack.session.url}/sessions/${id}/samples`, { method: 'POST', body });
  const bytes = Buffer.from(await response.arrayBuffer())
    .toString('latin1')
    .replaceAll(id, '<session>');
  return `${response.status} ${createHash('sha256').update(bytes, 'latin1').digest('hex')}`;
}

describe('samples op fold switch', () => {
  it('answers the same samples bytes with the fold as runs and on plain lists', async () => {
    for (const body of ['{"metadata": {"reward": 1.0}}', '{"max_seq_len": 40}', '{}']) {
      const [runs, plain] = await Promise.all(stacks.map((s) => samplesBytes(s, body)));
      expect(runs).toMatch(/^200 /);
      expect(plain).toBe(runs);
    }
  });
});
