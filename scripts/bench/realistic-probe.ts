import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { PolicyRequestLog, startPolicyServer } from '../../fakes/policy/index.ts';
import { createSessionClient } from '../../fakes/session/client.ts';
import { startSessionServer } from '../../fakes/session/server.ts';
import { postBaselineChat, startBaselines } from './baselines.ts';
import { resets, retryOnReset } from './reset-retry.ts';

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
 * With a fifth argument `split`, the two fakes run in a child process (realistic-servers.ts) and only
 * the client here, as Harbor's agent is a process of its own in the real setup; the result then also
 * gives each side's CPU time (`client_cpu_ms`, `servers_cpu_ms`; `step_cpu_ms` is their sum) and the
 * servers' peak RSS. Not what `npm run bench` runs: it measures the single process, as before.
 *
 * With `two-hop-json` instead, the same rollouts (same histories, same observations, a reply of the
 * fake policy's size each turn) go to baseline (c) of baselines.ts, in this process: the bare two-hop
 * proxy that parses and writes JSON natively at each hop. What the same traffic costs without the
 * fakes' work (no tree, no records, no samples to collect), for the step's ratio in realistic-bench.ts.
 */

const [rollouts, turns, context, steps] = process.argv.slice(2, 6).map(Number) as [
  number,
  number,
  number,
  number,
];
const mode = process.argv[6] ?? 'fake';
if (!['fake', 'split', 'two-hop-json'].includes(mode)) throw new Error(`unknown probe mode ${mode}`);
const split = mode === 'split';
const baseline = mode === 'two-hop-json';
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

/** Where the fakes run: in this process, or in a forked child (`split`). */
interface Stack {
  readonly sessionUrl: string;
  clearLog(): Promise<void>;
  /** Starts the servers' CPU count (split only). */
  mark(): Promise<void>;
  /** The servers' CPU time since `mark` and their peak RSS; null when they share this process. */
  serversUsage(): Promise<{ user_ms: number; system_ms: number; peak_rss_mb: number } | null>;
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
    serversUsage: async () => null,
    close: async () => {
      await session.close();
      await policy.close();
    },
  };
}

async function forkedStack(): Promise<Stack> {
  const script = fileURLToPath(new URL('./realistic-servers.ts', import.meta.url));
  const child = fork(script, [String(rollouts * turns + 100)], { stdio: 'inherit' });
  type Reply = {
    type: string;
    sessionUrl?: string;
    user_ms?: number;
    system_ms?: number;
    peak_rss_mb?: number;
  };
  // Replies carry the request's number: the rollouts ask for `clear` concurrently.
  const waiting = new Map<number, (reply: Reply) => void>();
  let asked = 0;
  const ask = (type: string): Promise<Reply> =>
    new Promise((resolve) => {
      asked += 1;
      waiting.set(asked, resolve);
      child.send({ type, seq: asked });
    });
  const [ready] = (await once(child, 'message')) as [Reply];
  child.on('message', (reply: Reply & { seq?: number }) => {
    const resolve = waiting.get(reply.seq ?? 0);
    waiting.delete(reply.seq ?? 0);
    resolve?.(reply);
  });
  return {
    sessionUrl: ready.sessionUrl ?? '',
    clearLog: async () => {
      await ask('clear');
    },
    mark: async () => {
      await ask('mark');
    },
    serversUsage: async () => {
      const usage = await ask('cpu');
      return {
        user_ms: usage.user_ms ?? 0,
        system_ms: usage.system_ms ?? 0,
        peak_rss_mb: usage.peak_rss_mb ?? 0,
      };
    },
    close: async () => {
      const exited = once(child, 'exit');
      child.send({ type: 'close' });
      await exited;
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
    serversUsage: async () => null,
    close: servers.close,
  };
}

const stack = baseline ? await baselineStack() : split ? await forkedStack() : await inProcessStack();
const client = createSessionClient(stack.sessionUrl);

type Message = Record<string, unknown>;

/** The rollout's turns: the whole history sent each turn, then the reply and a new observation appended. */
async function playTurns(r: number, send: (history: readonly Message[]) => Promise<Message>): Promise<void> {
  const history: Message[] = [
    { role: 'system', content: 'You are Terminus, solving a task in a Linux terminal.' },
    { role: 'user', content: `Task ${r}: build the project in /app and make the tests pass.` },
  ];
  for (let t = 0; t < turns; t += 1)
    history.push(await send(history), { role: 'user', content: observation(r, t) });
}

/** One rollout against baseline (c): the same turns, answered by the canned reply; no samples. */
async function baselineRollout(r: number): Promise<number> {
  await playTurns(r, (history) => postBaselineChat(stack.sessionUrl, history));
  return 0;
}

async function rollout(r: number): Promise<number> {
  if (baseline) return baselineRollout(r);
  const id = await retryOnReset(() => client.create());
  await playTurns(r, async (history) => {
    let answer = await retryOnReset(() => client.chat(id, { messages: history }));
    // The same race one hop further: the session server answers it 502 without committing, so the turn
    // can be sent again as it is.
    for (let k = 0; k < 3 && answer.status === 502 && answer.text.includes('transport error'); k += 1) {
      resets.count += 1;
      answer = await retryOnReset(() => client.chat(id, { messages: history }));
    }
    if (answer.status !== 200)
      throw new Error(`chat answered ${answer.status}: ${answer.text.slice(0, 300)}`);
    return (answer.json as { choices: Array<{ message: Message }> }).choices[0]?.message as Message;
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
let serversPeakRssMb: number | null = null;
const heapMb: number[] = [];
let maxTokens = 0;
for (let s = 0; s < steps; s += 1) {
  const t0 = performance.now();
  await stack.mark();
  const cpu0 = process.cpuUsage();
  const lengths = await Promise.all(Array.from({ length: rollouts }, (_, r) => rollout(r)));
  stepMs.push(Math.round(performance.now() - t0));
  // User + system CPU of the whole process (client, session server and policy): on a shared machine
  // the wall time varies with the load, the CPU time much less.
  const cpu = process.cpuUsage(cpu0);
  const servers = await stack.serversUsage();
  const here = Math.round((cpu.user + cpu.system) / 1000);
  if (servers === null) stepCpuMs.push(here);
  else {
    const serversMs = servers.user_ms + servers.system_ms;
    stepCpuMs.push(here + serversMs);
    clientCpuMs.push(here);
    serversCpuMs.push(serversMs);
    serversPeakRssMb = servers.peak_rss_mb;
  }
  for (const length of lengths) maxTokens = Math.max(maxTokens, length);
  if (gc !== undefined) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    gc();
    gc();
    heapMb.push(round(process.memoryUsage().heapUsed / MB));
  }
}
await stack.close();
process.stdout.write(
  `${JSON.stringify({
    rollouts,
    turns,
    context_tokens: context,
    max_sample_tokens: maxTokens,
    step_ms: stepMs,
    step_cpu_ms: stepCpuMs,
    heap_mb_after_step: heapMb,
    // process.resourceUsage().maxRSS is in KiB: the peak resident set of this whole process.
    peak_rss_mb: round((process.resourceUsage().maxRSS * 1024) / MB),
    connection_resets_retried: resets.count,
    ...(split
      ? {
          client_cpu_ms: clientCpuMs,
          servers_cpu_ms: serversCpuMs,
          client_peak_rss_mb: round((process.resourceUsage().maxRSS * 1024) / MB),
          servers_peak_rss_mb: serversPeakRssMb,
        }
      : {}),
  })}\n`,
);
