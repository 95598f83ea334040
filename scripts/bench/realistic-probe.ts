import { fork } from 'node:child_process';
import { once } from 'node:events';
import { Agent } from 'node:http';
import { fileURLToPath } from 'node:url';
import { PolicyRequestLog, startPolicyServer } from '../../fakes/policy/index.ts';
import { createSessionClient } from '../../fakes/session/client.ts';
import { startSessionServer } from '../../fakes/session/server.ts';
import { startBaselines } from './baselines.ts';
import { HistoryBody } from './history-body.ts';
import { postJson } from './post-json.ts';
import { resets, retryOnReset, sendChatTurn } from './reset-retry.ts';

/**
 * A replay step at the recipe's scale, self-contained (a built-in profile, not generated episodes):
 * `rollouts` agents at once, each a session that sends its whole history every turn for `turns` turns,
 * every turn adding a tool observation sized so the context reaches `context` tokens by the last turn,
 * then collects its samples (assembly, hooks, safetensors both ways) and deletes the session. That is
 * the traffic a compaction step puts through the fake session server and fake policy; the Harbor engine
 * and the replay's checks are not in it. Runs `steps` such steps in one process and, with
 * `--expose-gc`, records the live heap after a forced GC at the end of every step. Prints one JSON
 * object. Started by realistic-bench.ts as
 *
 *   node --expose-gc scripts/bench/realistic-probe.ts ROLLOUTS TURNS CONTEXT STEPS
 *
 * A fifth argument picks where the servers run:
 * - `fake` (the default): the fake policy and the fake session server in this process, with the client.
 * - `split`: the two fakes together in one child process (realistic-servers.ts), the client here.
 * - `processes`: the fake policy in one child and the fake session server in another, the client here:
 *   the real layout, where Harbor's agents, Miles' session server and SGLang are processes of their own,
 *   so a 2-core machine can run two of them at once.
 * - `two-hop-json`: baseline (c) of baselines.ts in this process: the same rollouts (same histories, same
 *   observations, a reply of the fake policy's size each turn) through a bare two-hop proxy that parses
 *   and writes JSON natively at each hop. What the same traffic costs without the fakes' work (no tree,
 *   no records, no samples to collect), for the step's ratio in realistic-bench.ts.
 * - `two-hop-json-processes`: baseline (c)'s proxy and backend each in a child, the client here, for the
 *   ratio of the `processes` layout.
 * With children, `step_cpu_ms` is the CPU time of every process (this one's and the children's), and the
 * result also gives `client_cpu_ms`, `servers_cpu_ms` (the children's sum) and each child's peak RSS;
 * `peak_rss_mb` is then the sum of all the processes' peaks (an upper bound on their total at any time).
 */

const [rollouts, turns, context, steps] = process.argv.slice(2, 6).map(Number) as [
  number,
  number,
  number,
  number,
];
const MODES = ['fake', 'split', 'processes', 'two-hop-json', 'two-hop-json-processes'] as const;
const mode = process.argv[6] ?? 'fake';
if (!(MODES as readonly string[]).includes(mode))
  throw new Error(`unknown probe mode ${mode}: one of ${MODES.join(', ')}`);
const baseline = mode.startsWith('two-hop-json');
const MB = 1024 * 1024;
const round = (v: number) => Math.round(v * 10) / 10;
const gc = (globalThis as { gc?: () => void }).gc;

// The toy tokenizer makes one token per word; the reply adds about 20 tokens a turn.
const wordsPerObservation = Math.max(1, Math.floor(context / turns) - 20);
const observation = (rollout: number, turn: number) =>
  Array.from(
    { length: wordsPerObservation },
    (_, k) => `w${(rollout * 7919 + turn * 104_729 + k) % 20_011}`,
  ).join(' ');
// Made before any step is timed: the load's data is not what the step measures.
const observations = Array.from({ length: rollouts }, (_, r) =>
  Array.from({ length: turns }, (_, t) => observation(r, t)),
);

/** A child's CPU time since `mark` and its peak RSS. */
interface Usage {
  readonly user_ms: number;
  readonly system_ms: number;
  readonly peak_rss_mb: number;
}

/** Where the servers run: in this process, or in forked children. */
interface Stack {
  readonly sessionUrl: string;
  clearLog(): Promise<void>;
  /** Starts the children's CPU count. */
  mark(): Promise<void>;
  /** Each child's usage since `mark`, by role; empty when the servers share this process. */
  childUsage(): Promise<Record<string, Usage>>;
  close(): Promise<void>;
}

async function inProcessStack(): Promise<Stack> {
  const policy = await startPolicyServer({
    mode: 'synthetic',
    log: new PolicyRequestLog(rollouts * turns + 100),
  });
  const session = await startSessionServer({ backendUrl: policy.url });
  return {
    sessionUrl: session.url,
    clearLog: async () => policy.log.clear(),
    mark: async () => {},
    childUsage: async () => ({}),
    close: async () => {
      await session.close();
      await policy.close();
    },
  };
}

interface Child {
  readonly role: string;
  readonly url: string;
  ask(type: string): Promise<Partial<Usage>>;
  close(): Promise<void>;
}

/** realistic-servers.ts in a child process, in `role`, once it listens. */
async function forkServers(role: string, backendUrl = ''): Promise<Child> {
  const script = fileURLToPath(new URL('./realistic-servers.ts', import.meta.url));
  const child = fork(script, [role, String(rollouts * turns + 100), backendUrl], { stdio: 'inherit' });
  type Reply = Partial<Usage> & { type: string; url?: string; seq?: number };
  // Replies carry the request's number: the rollouts ask for `clear` concurrently.
  const waiting = new Map<number, (reply: Reply) => void>();
  let asked = 0;
  const exited = once(child, 'exit');
  const first = await Promise.race([once(child, 'message'), exited.then(() => null)]);
  if (first === null) throw new Error(`realistic-servers ${role} exited before listening`);
  const ready = first[0] as Reply;
  child.on('message', (reply: Reply) => {
    const resolve = waiting.get(reply.seq ?? 0);
    waiting.delete(reply.seq ?? 0);
    resolve?.(reply);
  });
  return {
    role,
    url: ready.url ?? '',
    ask: (type) =>
      new Promise((resolve) => {
        asked += 1;
        waiting.set(asked, resolve);
        child.send({ type, seq: asked });
      }),
    close: async () => {
      child.send({ type: 'close', seq: 0 });
      await exited;
    },
  };
}

/** The children in start order; the client talks to the last one. */
function childStack(children: readonly Child[]): Stack {
  const front = children.at(-1) as Child;
  const all = async (type: string) => Promise.all(children.map((c) => c.ask(type)));
  return {
    sessionUrl: front.url,
    clearLog: async () => {
      await all('clear');
    },
    mark: async () => {
      await all('mark');
    },
    childUsage: async () => {
      const usages = await all('cpu');
      return Object.fromEntries(
        usages.map((u, i) => [
          children[i]?.role,
          { user_ms: u.user_ms ?? 0, system_ms: u.system_ms ?? 0, peak_rss_mb: u.peak_rss_mb ?? 0 },
        ]),
      );
    },
    close: async () => {
      // The front first, so nothing is still calling its backend.
      for (const child of [...children].reverse()) await child.close();
    },
  };
}

/** Baseline (c) in this process; it keeps no sessions, so there is no log and nothing to collect. */
async function baselineStack(): Promise<Stack> {
  const servers = await startBaselines();
  return {
    sessionUrl: servers.twoHopJsonUrl,
    clearLog: async () => {},
    mark: async () => {},
    childUsage: async () => ({}),
    close: servers.close,
  };
}

async function startStack(): Promise<Stack> {
  if (mode === 'two-hop-json') return baselineStack();
  if (mode === 'fake') return inProcessStack();
  if (mode === 'split') return childStack([await forkServers('fakes')]);
  if (mode === 'processes') {
    const policy = await forkServers('policy');
    return childStack([policy, await forkServers('session', policy.url)]);
  }
  const backend = await forkServers('json-backend');
  return childStack([backend, await forkServers('json-proxy', backend.url)]);
}

const stack = await startStack();
const client = createSessionClient(stack.sessionUrl);

type Message = Record<string, unknown>;

/**
 * The client's hop: `node:http` with a keep-alive agent (what the fake session server's own hop and the
 * baselines' use), the history's bytes built once per message (history-body.ts). The same for the fakes
 * and for baseline (c).
 */
const agent = new Agent({ keepAlive: true, maxSockets: 1024 });

/** The rollout's turns: the whole history sent each turn, then the reply and a new observation appended. */
async function playTurns(r: number, send: (body: Buffer) => Promise<Message>): Promise<void> {
  const body = new HistoryBody();
  body.push(
    { role: 'system', content: 'You are Terminus, solving a task in a Linux terminal.' },
    { role: 'user', content: `Task ${r}: build the project in /app and make the tests pass.` },
  );
  for (let t = 0; t < turns; t += 1)
    body.push(await send(body.bytes()), { role: 'user', content: observations[r]?.[t] ?? '' });
}

/** The assistant message of a 200 chat reply; anything else stops the step with what the server said. */
function assistantMessage(reply: { status: number; body: Buffer }): Message {
  const text = reply.body.toString('utf8');
  if (reply.status !== 200) throw new Error(`chat answered ${reply.status}: ${text.slice(0, 300)}`);
  return (JSON.parse(text) as { choices: Array<{ message: Message }> }).choices[0]?.message as Message;
}

/** One rollout against baseline (c): the same turns, answered by the canned reply; no samples. */
async function baselineRollout(r: number): Promise<number> {
  const url = `${stack.sessionUrl}/v1/chat/completions`;
  await playTurns(r, async (body) => assistantMessage(await retryOnReset(() => postJson(agent, url, body))));
  return 0;
}

async function rollout(r: number): Promise<number> {
  if (baseline) return baselineRollout(r);
  const id = await retryOnReset(() => client.create());
  const url = `${stack.sessionUrl}/sessions/${encodeURIComponent(id)}/v1/chat/completions`;
  await playTurns(r, async (body) => {
    const answer = await sendChatTurn(
      () => postJson(agent, url, body),
      (a) => a.body.toString('utf8'),
    );
    return assistantMessage(answer);
  });
  const reply = await retryOnReset(() => client.collectSamples(id, { metadata: { reward: 1 } }));
  await retryOnReset(() => client.delete(id));
  await stack.clearLog();
  return reply.samples.reduce((n, s) => Math.max(n, s.tokens.length), 0);
}

const stepMs: number[] = [];
const stepCpuMs: number[] = [];
const clientCpuMs: number[] = [];
const serversCpuMs: number[] = [];
let children: Record<string, Usage> = {};
const heapMb: number[] = [];
let maxTokens = 0;
for (let s = 0; s < steps; s += 1) {
  const t0 = performance.now();
  await stack.mark();
  const cpu0 = process.cpuUsage();
  const lengths = await Promise.all(Array.from({ length: rollouts }, (_, r) => rollout(r)));
  stepMs.push(Math.round(performance.now() - t0));
  // User + system CPU of every process of the step (client, session server and policy): on a shared
  // machine the wall time varies with the load, the CPU time much less.
  const cpu = process.cpuUsage(cpu0);
  children = await stack.childUsage();
  const here = Math.round((cpu.user + cpu.system) / 1000);
  const serversMs = Object.values(children).reduce((sum, u) => sum + u.user_ms + u.system_ms, 0);
  stepCpuMs.push(here + serversMs);
  clientCpuMs.push(here);
  serversCpuMs.push(serversMs);
  for (const length of lengths) maxTokens = Math.max(maxTokens, length);
  if (gc !== undefined) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    gc();
    gc();
    heapMb.push(round(process.memoryUsage().heapUsed / MB));
  }
}
await stack.close();
agent.destroy();
// process.resourceUsage().maxRSS is in KiB: the peak resident set of this whole process.
const ownPeakRssMb = round((process.resourceUsage().maxRSS * 1024) / MB);
const forked = Object.keys(children).length > 0;
process.stdout.write(
  `${JSON.stringify({
    rollouts,
    turns,
    context_tokens: context,
    mode,
    max_sample_tokens: maxTokens,
    step_ms: stepMs,
    step_cpu_ms: stepCpuMs,
    heap_mb_after_step: heapMb,
    peak_rss_mb: round(ownPeakRssMb + Object.values(children).reduce((sum, u) => sum + u.peak_rss_mb, 0)),
    connection_resets_retried: resets.count,
    ...(forked
      ? {
          client_cpu_ms: clientCpuMs,
          servers_cpu_ms: serversCpuMs,
          client_peak_rss_mb: ownPeakRssMb,
          children: Object.fromEntries(
            Object.entries(children).map(([role, u]) => [
              role,
              { cpu_ms: u.user_ms + u.system_ms, peak_rss_mb: u.peak_rss_mb },
            ]),
          ),
        }
      : {}),
  })}\n`,
);
