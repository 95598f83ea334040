import { PolicyRequestLog, startPolicyServer } from '../../fakes/policy/index.ts';
import { createSessionClient } from '../../fakes/session/client.ts';
import { startSessionServer } from '../../fakes/session/server.ts';
import { postBaselineChat, startBaselines } from './baselines.ts';
import { sendChatTurn } from './reset-retry.ts';
import { type LatencySummary, type LoopMeasure, measureClosedLoop, pooledSummary } from './stats.ts';

/**
 * Benchmark 1: chat latency and throughput of the fake session server (with the synthetic fake policy
 * behind it) against a bare `node:http` server answering one canned completion, same client, same
 * request bodies, same run. Each session is an agent: it sends its whole history plus a new tool
 * result every turn, and waits for the reply before the next turn (a closed loop).
 */

export interface ChatBenchOptions {
  readonly sessions: number;
  readonly turns: number;
  /** Context sizes (tokens of the first user message) for the per-context runs; empty skips them. */
  readonly contexts?: readonly number[];
  /** Sessions and turns of each per-context run. */
  readonly contextSessions?: number;
  readonly contextTurns?: number;
  /**
   * Measured rounds of the short-context runs (default 3): each round runs the fake and the three
   * baselines in turn, and each server's figures pool its calls over the rounds, so a change in the
   * machine's load during the run falls on every server alike.
   */
  readonly rounds?: number;
}

export interface ContextRun {
  readonly context_tokens: number;
  readonly session_server_p50_ms: number;
  readonly two_hop_json_p50_ms: number;
  readonly bare_http_p50_ms: number;
  /** Session server over the two-hop with native JSON, same run. */
  readonly p50_ratio_two_hop_json: number;
  /** Process CPU per call (see `LatencySummary.cpu_ms_per_request`) and its ratio, same run. */
  readonly session_server_cpu_ms_per_request: number;
  readonly two_hop_json_cpu_ms_per_request: number;
  readonly cpu_ratio_two_hop_json: number;
}

export interface ChatBenchResult {
  readonly session_server: LatencySummary & {
    readonly sessions: number;
    readonly turns: number;
    readonly rounds: number;
    /** Fake over bare one-hop, same run. */
    readonly p50_ratio: number;
    readonly p99_ratio: number;
    readonly throughput_ratio: number;
    /** Fake over the bare two-hop proxy and over the two-hop that parses and writes JSON, same run. */
    readonly p50_ratio_two_hop: number;
    readonly p50_ratio_two_hop_json: number;
    /** CPU per call over the two-hop with native JSON's: the ratio a shared machine disturbs least. */
    readonly cpu_ratio_two_hop_json: number;
  };
  readonly bare_http: LatencySummary;
  readonly two_hop: LatencySummary;
  readonly two_hop_json: LatencySummary;
  readonly contexts: readonly ContextRun[];
}

type Message = Record<string, unknown>;

const SYSTEM: Message = { role: 'system', content: 'You are Terminus, solving a task in a Linux terminal.' };
const TASK: Message = { role: 'user', content: 'Build the project in /app and make the tests pass.' };

function toolResult(turn: number): Message {
  const words = Array.from({ length: 20 }, (_, i) => `w${(turn * 31 + i) % 97}`).join(' ');
  return { role: 'tool', content: `output of step ${turn}: ${words}` };
}

/** A first user message of about `tokens` tokens (the toy tokenizer makes one token per word). */
function longTask(session: number, tokens: number): Message {
  const words = Array.from({ length: tokens }, (_, i) => `t${(session * 131 + i) % 4099}`).join(' ');
  return { role: 'user', content: words };
}

/** One agent's conversation; `send` posts the messages and returns the assistant message. */
type Send = (session: number, messages: readonly Message[]) => Promise<Message>;

async function drive(
  sessions: number,
  turns: number,
  send: Send,
  start: (session: number) => Message[] = () => [SYSTEM, TASK],
): Promise<LoopMeasure> {
  const histories = Array.from({ length: sessions }, (_, s) => start(s));
  return measureClosedLoop(sessions, turns, async (s, t) => {
    const history = histories[s] as Message[];
    const reply = await send(s, history);
    history.push(reply, toolResult(t));
  });
}

/** Measured rounds of the short-context runs unless told otherwise. */
const DEFAULT_ROUNDS = 3;

const ROUND = (v: number) => Math.round(v * 100) / 100;

/** Each baseline's URL as a `Send` (the same client code for all three). */
async function startBaselineSenders() {
  const servers = await startBaselines();
  const sendTo =
    (url: string): Send =>
    (_s, messages) =>
      postBaselineChat(url, messages);
  return {
    bare: sendTo(servers.bareUrl),
    twoHop: sendTo(servers.twoHopUrl),
    twoHopJson: sendTo(servers.twoHopJsonUrl),
    close: servers.close,
  };
}

/**
 * Each server's load run once unmeasured, so every figure is what a call costs once the JIT has
 * compiled the code it runs (a few short conversations left most of the fake's code to be optimized
 * during its measured run, while the baselines' little code was warm by then); then `rounds` rounds
 * that run every server in turn, in the order given, each server's calls pooled over the rounds, so a
 * change in the machine's load during the run falls on every server alike.
 */
async function warmedRounds<K extends string>(
  servers: Record<K, () => Promise<LoopMeasure>>,
  rounds: number,
): Promise<Record<K, LatencySummary>> {
  const entries = Object.entries(servers) as Array<[K, () => Promise<LoopMeasure>]>;
  for (const [, run] of entries) await run();
  const measured = entries.map((): LoopMeasure[] => []);
  for (let round = 0; round < rounds; round += 1)
    for (const [k, [, run]] of entries.entries()) measured[k]?.push(await run());
  return Object.fromEntries(entries.map(([name], k) => [name, pooledSummary(measured[k] ?? [])])) as Record<
    K,
    LatencySummary
  >;
}

export async function benchChat(options: ChatBenchOptions): Promise<ChatBenchResult> {
  const contexts = options.contexts ?? [];
  const contextSessions = options.contextSessions ?? 8;
  const contextTurns = options.contextTurns ?? 6;
  const policy = await startPolicyServer({
    mode: 'synthetic',
    log: new PolicyRequestLog(options.sessions * options.turns + 1000),
  });
  const session = await startSessionServer({ backendUrl: policy.url });
  const client = createSessionClient(session.url);
  const baselines = await startBaselineSenders();

  try {
    const sessionSend = (ids: string[]): Send => {
      return async (s, messages) => {
        const answer = await sendChatTurn(
          () => client.chat(ids[s] as string, { messages }),
          (a) => a.text,
        );
        if (answer.status !== 200)
          throw new Error(`session server answered ${answer.status}: ${answer.text}`);
        return (answer.json as { choices: Array<{ message: Message }> }).choices[0]?.message as Message;
      };
    };
    const openSessions = async (n: number) => Promise.all(Array.from({ length: n }, () => client.create()));

    // One run of the fake: the policy's log emptied, fresh sessions driven, then deleted, so the
    // baselines do not run beside its live trees.
    const fakeRunOf =
      (sessions: number, turns: number, start?: (session: number) => Message[]) => async () => {
        policy.log.clear();
        const ids = await openSessions(sessions);
        const measure = await drive(sessions, turns, sessionSend(ids), start);
        await Promise.all(ids.map((id) => client.delete(id)));
        return measure;
      };
    const rounds = options.rounds ?? DEFAULT_ROUNDS;
    const { fake, plain, twoHop, twoHopJson } = await warmedRounds(
      {
        fake: fakeRunOf(options.sessions, options.turns),
        plain: () => drive(options.sessions, options.turns, baselines.bare),
        twoHop: () => drive(options.sessions, options.turns, baselines.twoHop),
        twoHopJson: () => drive(options.sessions, options.turns, baselines.twoHopJson),
      },
      rounds,
    );

    // Each context size the same way: one 48-call run alone gave ratios from ×1.0 to ×2.8 for the same code.
    const contextRuns: ContextRun[] = [];
    for (const tokens of contexts) {
      const start = (s: number) => [SYSTEM, longTask(s, tokens)];
      const {
        fake: f,
        json: j,
        bare: b,
      } = await warmedRounds(
        {
          fake: fakeRunOf(contextSessions, contextTurns, start),
          json: () => drive(contextSessions, contextTurns, baselines.twoHopJson, start),
          bare: () => drive(contextSessions, contextTurns, baselines.bare, start),
        },
        rounds,
      );
      contextRuns.push({
        context_tokens: tokens,
        session_server_p50_ms: f.p50_ms,
        two_hop_json_p50_ms: j.p50_ms,
        bare_http_p50_ms: b.p50_ms,
        p50_ratio_two_hop_json: ROUND(f.p50_ms / j.p50_ms),
        session_server_cpu_ms_per_request: f.cpu_ms_per_request,
        two_hop_json_cpu_ms_per_request: j.cpu_ms_per_request,
        cpu_ratio_two_hop_json: ROUND(f.cpu_ms_per_request / j.cpu_ms_per_request),
      });
    }
    return {
      session_server: {
        ...fake,
        sessions: options.sessions,
        turns: options.turns,
        rounds,
        p50_ratio: ROUND(fake.p50_ms / plain.p50_ms),
        p99_ratio: ROUND(fake.p99_ms / plain.p99_ms),
        throughput_ratio: ROUND(fake.throughput_rps / plain.throughput_rps),
        p50_ratio_two_hop: ROUND(fake.p50_ms / twoHop.p50_ms),
        p50_ratio_two_hop_json: ROUND(fake.p50_ms / twoHopJson.p50_ms),
        cpu_ratio_two_hop_json: ROUND(fake.cpu_ms_per_request / twoHopJson.cpu_ms_per_request),
      },
      bare_http: plain,
      two_hop: twoHop,
      two_hop_json: twoHopJson,
      contexts: contextRuns,
    };
  } finally {
    await baselines.close();
    await session.close();
    await policy.close();
  }
}
