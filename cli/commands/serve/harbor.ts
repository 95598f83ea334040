import { resolve } from 'node:path';
import { z } from 'zod';
import { parseFlags, switchFlag, valueFlag } from '../../../common/cli-flags.ts';
import { wholeNumber } from '../../../common/whole-number.ts';
import { DEFAULT_EPISODES_DIR } from '../../../fakes/harbor/episode-catalog.ts';
import { DEFAULT_AGENT_TIMEOUT_S, DEFAULT_MAX_CONCURRENT } from '../../../fakes/harbor/harbor-options.ts';
import { startHarborServer } from '../../../fakes/harbor/server.ts';
import type { CliIo } from '../../io.ts';
import type { ServeTarget } from '../serve.ts';
import { hostFlag, portFlag } from './options.ts';
import { untilAborted } from './wait.ts';

const SPEC = {
  command: 'serve harbor',
  about: `Runs the mock Harbor agent server (POST /run, GET /health, POST /flush) until SIGINT/SIGTERM and prints
'listening <url>'. Each /run plays a scripted Terminus-2 episode against the request's base_url.`,
  flags: {
    port: portFlag,
    host: hostFlag,
    episodes: valueFlag(
      'DIR',
      z.string().min(1).optional(),
      'episode scripts, *.json searched recursively (default: the bundled fixtures/episodes)',
    ),
    'max-concurrent': valueFlag(
      'N',
      wholeNumber('--max-concurrent', 1, 4096).default(DEFAULT_MAX_CONCURRENT),
      `trials run at once; the rest wait (default ${DEFAULT_MAX_CONCURRENT})`,
    ),
    'agent-timeout': valueFlag(
      'S',
      z.coerce
        .number()
        .positive()
        .max(7 * 24 * 3600)
        .default(DEFAULT_AGENT_TIMEOUT_S),
      `agent-phase limit in seconds, fractions allowed; TimeLimitExceeded (default ${DEFAULT_AGENT_TIMEOUT_S})`,
    ),
    'allow-remote-base-url': switchFlag(
      'accept a /run base_url whose host is not loopback (default: 400 invalid_base_url);\nbase_url is trusted input: every model call of the trial goes there',
    ),
  },
  footer: `Environment: HARBOR_ADMIN_SECRET, when set, is the bearer token /flush requires (never printed).
Instance ids map to scripts as documented in docs/episodes.md.`,
};

export const harborTarget: ServeTarget = {
  summary: 'the mock Harbor agent server playing Terminus-2 episodes',
  async run(argv: readonly string[], io: CliIo): Promise<number> {
    const options = parseFlags(argv, SPEC, io)?.values;
    if (options === undefined) return 0;
    const secret = io.env.HARBOR_ADMIN_SECRET;
    const server = await startHarborServer({
      episodes: options.episodes === undefined ? DEFAULT_EPISODES_DIR : resolve(io.cwd, options.episodes),
      maxConcurrent: options.max_concurrent,
      agentTimeoutS: options.agent_timeout,
      allowRemoteBaseUrl: options.allow_remote_base_url,
      host: options.host,
      port: options.port,
      ...(secret !== undefined && secret !== '' ? { adminSecret: secret } : {}),
    });
    io.stdout.write(`listening ${server.url}\n`);
    io.stdout.write(`episodes ${server.catalog.scripts.length} (pool ${server.catalog.pool.length})\n`);
    io.stdout.write(`flush auth ${secret ? 'bearer (HARBOR_ADMIN_SECRET)' : 'none'}\n`);
    await untilAborted(io.signal);
    await server.close();
    return 0;
  },
};
