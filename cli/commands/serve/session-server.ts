import { z } from 'zod';
import { parseFlags, valueFlag } from '../../../common/cli-flags.ts';
import { clipForLog } from '../../../common/log-text.ts';
import { wholeNumber } from '../../../common/whole-number.ts';
import { milesProfileLine } from '../../../contracts/miles-profile.ts';
import { milesProfileFlag } from '../../../contracts/miles-profile-flag.ts';
import { startPolicyServer } from '../../../fakes/policy/server.ts';
import { DEFAULT_SESSION_WARNING_THRESHOLD } from '../../../fakes/session/app.ts';
import { startSessionServerWorkers } from '../../../fakes/session/workers.ts';
import { familyModel } from '../../../fakes/tokenizer/tito.ts';
import type { CliIo } from '../../io.ts';
import type { ServeTarget } from '../serve.ts';
import { hostFlag, portFlag, titoModelFlag, tokenizerFlag, UrlSchema } from './options.ts';
import { type Drainable, shutdownGraceFlag, stopGracefully } from './shutdown.ts';
import { untilAborted } from './wait.ts';

const SPEC = {
  command: 'serve session-server',
  about: "Runs the fake Miles session server v2 until SIGINT/SIGTERM and prints 'listening <url>'.",
  flags: {
    port: portFlag,
    host: hostFlag,
    backend: valueFlag(
      'URL',
      UrlSchema.optional(),
      "the policy backend (e.g. 'harness serve policy'); without it a synthetic fake\npolicy is started in-process and its address printed as 'backend <url>'",
    ),
    'tito-model': titoModelFlag(
      'toy TITO family: default (plain concatenation) or glm47 (junction trim of 1)',
    ),
    tokenizer: tokenizerFlag(
      "toy (default: the word tokenizer, fast) or qwen3 (Qwen3's real tokenizer, Miles'\nqwen3_fixed.jinja and the qwen3 TITO family; about 1.5 s to load)",
    ),
    'miles-router-timeout': valueFlag(
      'S',
      z.coerce.number().positive().optional(),
      "backend call timeout in seconds (Miles' flag of that name); past it a chat answers\n502 'backend transport error: ReadTimeout' (default: none, wait forever)",
    ),
    'max-sessions': valueFlag(
      'N',
      z.coerce.number().int().positive().optional(),
      `live sessions allowed at once; POST /sessions past it answers 503 (default: no\nlimit, as in Miles: a session is freed only by DELETE). A warning goes to stderr\nat 80% of N, or at ${DEFAULT_SESSION_WARNING_THRESHOLD} sessions without a limit`,
    ),
    workers: valueFlag(
      'N',
      wholeNumber('--workers', 1, 256).default(1),
      "newer Miles' --session-server-workers (PR #2774): N independent session servers,\neach its own instance on its own port (with --port P: P, P+1, …), one\n'listening <url>' line each (default 1)",
    ),
    'shutdown-grace': shutdownGraceFlag,
    'miles-profile': milesProfileFlag,
    'session-sample-picker-path': valueFlag(
      'PATH',
      z.string().min(1).optional(),
      "the samples op's picker by Miles' import path, e.g.\nmiles.rollout.session.v2.picker_hub.drop_rolled_back_leaves (default: the profile's)",
    ),
  },
};

/** The workers as one server to drain: in-flight counts and shutdown reports summed. */
function drainAll(workers: readonly Drainable[]): Drainable {
  return {
    inFlight: () => workers.reduce((n, w) => n + w.inFlight(), 0),
    async shutdown(graceMs) {
      const reports = await Promise.all(workers.map((w) => w.shutdown(graceMs)));
      const sum = (key: 'inFlight' | 'dropped' | 'refused') => reports.reduce((n, r) => n + r[key], 0);
      return { inFlight: sum('inFlight'), dropped: sum('dropped'), refused: sum('refused') };
    },
  };
}

export const sessionServerTarget: ServeTarget = {
  summary: 'the fake Miles session server v2',
  async run(argv: readonly string[], io: CliIo): Promise<number> {
    const options = parseFlags(argv, SPEC, io)?.values;
    if (options === undefined) return 0;
    const titoModel = familyModel(options.tokenizer, options.tito_model);
    const policy =
      options.backend === undefined
        ? await startPolicyServer({ mode: 'synthetic', tokenizer: titoModel })
        : undefined;
    const backendUrl = options.backend ?? policy!.url;
    const workers = await startSessionServerWorkers(
      {
        backendUrl,
        titoModel,
        ...(options.miles_router_timeout === undefined
          ? {}
          : { backendTimeoutMs: options.miles_router_timeout * 1000 }),
        host: options.host,
        port: options.port,
        ...(options.max_sessions === undefined ? {} : { maxSessions: options.max_sessions }),
        milesProfile: options.miles_profile,
        ...(options.session_sample_picker_path === undefined
          ? {}
          : { pickerPath: options.session_sample_picker_path }),
        onInternalError: (error) =>
          io.stderr.write(`internal error: ${clipForLog((error as Error).message ?? String(error))}\n`),
        onClientGone: (request) =>
          io.stderr.write(
            `client disconnected before sending its body: ${request.method} ${clipForLog(request.url)}\n`,
          ),
        onWarning: (message) => io.stderr.write(`warning: ${message}\n`),
      },
      options.workers,
    );
    for (const worker of workers.workers) io.stdout.write(`listening ${worker.url}\n`);
    if (policy) io.stdout.write(`backend ${policy.url}\n`);
    io.stderr.write(`${milesProfileLine(options.miles_profile)}\n`);
    await untilAborted(io.signal);
    const code = await stopGracefully(io, drainAll(workers.workers), options.shutdown_grace);
    await policy?.close();
    return code;
  },
};
