import { Agent } from 'node:http';
import { PolicyRequestLog, startPolicyServer } from '../../fakes/policy/index.ts';
import { startSessionServer } from '../../fakes/session/server.ts';
import { startJsonBackend, startJsonProxy } from './baselines.ts';

/**
 * Servers of a realistic step in a process of their own, for `realistic-probe.ts`'s process layouts:
 * the probe's client (standing in for Harbor's agents, processes of their own in the real setup) runs in
 * the parent, and each process's CPU time is measured apart. Started as
 *
 *   node realistic-servers.ts ROLE LOG_SIZE [BACKEND_URL]
 *
 * ROLE: `fakes` (the fake policy and the fake session server together), `policy` (the fake policy
 * alone, as SGLang is a process of its own), `session` (the fake session server alone, its backend at
 * BACKEND_URL), `json-backend` or `json-proxy` (baseline (c)'s two hops, the proxy's backend at
 * BACKEND_URL). Forked with an IPC channel: sends `{ url }` when listening, answers `mark` (start of the
 * step), `cpu` (CPU time and peak RSS since the mark) and `clear` (the policy log, where there is one)
 * with the command's `seq`, and stops on `close`.
 */

type Command = { readonly type: 'mark' | 'cpu' | 'clear' | 'close'; readonly seq: number };
const ROLES = ['fakes', 'policy', 'session', 'json-backend', 'json-proxy'] as const;
type Role = (typeof ROLES)[number];

const [roleArg = '', logSizeArg = '10000', backendUrl = ''] = process.argv.slice(2);
if (!(ROLES as readonly string[]).includes(roleArg))
  throw new Error(
    `realistic-servers: ROLE must be one of ${ROLES.join(', ')}, got ${JSON.stringify(roleArg)}`,
  );
const role = roleArg as Role;
const needsBackend = role === 'session' || role === 'json-proxy';
if (needsBackend && !/^http:\/\//.test(backendUrl))
  throw new Error(
    `realistic-servers: ROLE ${role} needs BACKEND_URL (http://...), got ${JSON.stringify(backendUrl)}`,
  );

interface Served {
  readonly url: string;
  readonly clearLog: () => void;
  readonly close: () => Promise<void>;
}

async function serve(): Promise<Served> {
  const log = new PolicyRequestLog(Number(logSizeArg));
  if (role === 'fakes' || role === 'policy') {
    const policy = await startPolicyServer({ mode: 'synthetic', log });
    if (role === 'policy') return { url: policy.url, clearLog: () => log.clear(), close: policy.close };
    const session = await startSessionServer({ backendUrl: policy.url });
    return {
      url: session.url,
      clearLog: () => log.clear(),
      close: async () => {
        await session.close();
        await policy.close();
      },
    };
  }
  if (role === 'session') {
    const session = await startSessionServer({ backendUrl });
    return { url: session.url, clearLog: () => {}, close: session.close };
  }
  if (role === 'json-backend') {
    const backend = await startJsonBackend();
    return {
      url: backend.url,
      clearLog: () => {},
      close: async () => {
        await backend.close();
      },
    };
  }
  const agent = new Agent({ keepAlive: true, maxSockets: 1024 });
  const proxy = await startJsonProxy(agent, backendUrl);
  return {
    url: proxy.url,
    clearLog: () => {},
    close: async () => {
      await proxy.close();
      agent.destroy();
    },
  };
}

const served = await serve();
const send = (message: unknown) => {
  if (process.connected) process.send?.(message);
};
let mark = process.cpuUsage();

process.on('message', async (command: Command) => {
  if (command.type === 'mark') {
    mark = process.cpuUsage();
    send({ type: 'mark', seq: command.seq });
  } else if (command.type === 'cpu') {
    const cpu = process.cpuUsage(mark);
    send({
      type: 'cpu',
      seq: command.seq,
      user_ms: Math.round(cpu.user / 1000),
      system_ms: Math.round(cpu.system / 1000),
      peak_rss_mb: Math.round(((process.resourceUsage().maxRSS * 1024) / (1024 * 1024)) * 10) / 10,
    });
  } else if (command.type === 'clear') {
    served.clearLog();
    send({ type: 'clear', seq: command.seq });
  } else {
    await served.close();
    process.exit(0);
  }
});
// A parent that dies (or stops without `close`) must not leave a server listening behind it.
process.on('disconnect', () => process.exit(0));
send({ type: 'ready', url: served.url });
