import { PolicyRequestLog, startPolicyServer } from '../../fakes/policy/index.ts';
import { startSessionServer } from '../../fakes/session/server.ts';

/**
 * The fake policy and the fake session server of a realistic step, alone in their own process, for
 * `realistic-probe.ts … split`: the probe's client (standing in for Harbor's agent, a separate process
 * in the real setup) then runs in the parent, and each side's CPU time is measured apart. Forked with
 * an IPC channel: sends `{ sessionUrl }` when listening, answers `mark` (start of the step), `cpu`
 * (CPU time and peak RSS since the mark) and `clear` (the policy log) with the command's `seq`, and
 * stops on `close`.
 */

type Command = { readonly type: 'mark' | 'cpu' | 'clear' | 'close'; readonly seq: number };

const logSize = Number(process.argv[2] ?? 10_000);
const policy = await startPolicyServer({ mode: 'synthetic', log: new PolicyRequestLog(logSize) });
const session = await startSessionServer({ backendUrl: policy.url });
const send = (message: unknown) => process.send?.(message);
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
    policy.log.clear();
    send({ type: 'clear', seq: command.seq });
  } else {
    await session.close();
    await policy.close();
    process.disconnect();
  }
});
send({ type: 'ready', sessionUrl: session.url });
