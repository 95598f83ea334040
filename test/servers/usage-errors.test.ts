import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureIo } from '../../cli/io.ts';
import { main } from '../../cli/main.ts';

// Each mistake a new user made (issue 16 item 9), run as written: one `[harness]` line on stderr naming
// the option or path, what is wrong and what is expected, and the documented exit code (docs/cli.md).

const TRACE = 'fixtures/conformance/session-v2/trace-003.json';
const FIVE_MB_WORD = 'a'.repeat(5_000_000);

let dir: string;
let closedPort: number;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'usage-errors-'));
  await writeFile(join(dir, 'big.sh'), `python3 train.py --x ${FIVE_MB_WORD}\n`);
  // A port that was just free: nothing listens there, so a connection is refused.
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  closedPort = (probe.address() as { port: number }).port;
  await new Promise((done) => probe.close(done));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const cases: [string, string[], number, RegExp, string?][] = [
  ['an unknown host', ['serve', 'policy', '--host', '999.1.1.1'], 2, /--host 999\.1\.1\.1: cannot listen/],
  [
    'an unreachable --target',
    ['trace', 'replay', '--target', 'http://127.0.0.1:PORT', TRACE],
    2,
    /--target http:\/\/127\.0\.0\.1:\d+: cannot connect \(ECONNREFUSED\)/,
  ],
  [
    'a 5 MB word on stdin',
    ['surface', 'check', '--stdin'],
    2,
    /standard input: the command is 5000000 bytes; expected at most/,
    FIVE_MB_WORD,
  ],
  [
    'a 5 MB word in a recipe file',
    ['recipe', 'diff', 'builder', 'DIR/big.sh'],
    2,
    /big\.sh: the command is \d+ bytes/,
  ],
  [
    '--schema with --format env',
    ['recipe', '--schema', '--format', 'env'],
    2,
    /--schema .*--format env does not apply/,
  ],
  ['nothing after --', ['surface', 'check', '--'], 2, /nothing after --; expected the train\.py flags/],
  [
    '--output that is a file',
    ['smoke', '--dry-run', '--output', '/dev/null'],
    2,
    /--output \/dev\/null: is not a folder/,
  ],
  [
    'a huge --steps',
    ['replay', '--steps', '99999999999999999999'],
    2,
    /--steps 99999999999999999999: expected a whole number from 1 to 1000/,
  ],
  [
    'a negative --steps',
    ['replay', '--steps', '-1'],
    2,
    /--steps -1: expected a whole number from 1 to 1000/,
  ],
  [
    'a negative --port',
    ['serve', 'policy', '--port', '-1'],
    2,
    /--port -1: expected a whole number from 0 to 65535/,
  ],
  [
    'a negative --timeout',
    ['smoke', '--dry-run', '--timeout', '-5'],
    2,
    /--timeout -5: expected a whole number/,
  ],
  [
    'a --port that is not a number',
    ['serve', 'policy', '--port', 'abc'],
    2,
    /--port abc: expected a whole number/,
  ],
  [
    'an unknown surface subcommand',
    ['surface', 'frob'],
    2,
    /surface frob: unknown subcommand; expected 'check'/,
  ],
  ['trace replay without files', ['trace', 'replay'], 2, /trace replay: no trace FILE given; expected/],
  [
    'a directory as a trace file',
    ['trace', 'replay', 'fixtures'],
    2,
    /fixtures: is a directory; expected a session-trace\/1 JSON file/,
  ],
  [
    'a directory as a recipe side',
    ['recipe', 'diff', 'builder', 'fixtures'],
    2,
    /recipe side fixtures: .*is a directory/,
  ],
  [
    'a directory as the replay prompts',
    ['replay', '--prompts', 'fixtures'],
    2,
    /prompts .*fixtures: is a directory; expected a JSONL file of prompt rows/,
  ],
  [
    'a folder without episode scripts',
    ['replay', '--episodes', 'fixtures/prompts'],
    2,
    /episodes .*fixtures\/prompts: no episode scripts \(\*\.json\) in it; expected/,
  ],
  [
    'a directory as the surface file',
    ['surface', 'check', '--surface', 'fixtures', '--', '--lr', '1'],
    2,
    /surface file .*fixtures: is a directory; expected a miles-cli-surface\/1 JSON file/,
  ],
  [
    'a directory as generator parameters',
    ['episodes', 'generate', '--out', 'DIR/eps', '--params', 'fixtures'],
    2,
    /--params .*fixtures: is a directory; expected a JSON file of generator parameters/,
  ],
  [
    'an unclosed side bracket',
    ['recipe', 'diff', 'builder[--num-gpus-per-node 4', 'builder'],
    2,
    /never close; expected builder\[OPTIONS\]/,
  ],
  ['an unknown command', ['frob'], 2, /frob: unknown command; expected one of /],
  ['an unknown option', ['replay', '--bogus'], 2, /replay: --bogus: unknown option; expected/],
];

describe('every mistake is one [harness] line with its exit code', () => {
  it.each(cases)('%s', async (_name, argv, code, message, stdin) => {
    const args = argv.map((a) => a.replace('PORT', String(closedPort)).replace('DIR', dir));
    const io = captureIo(
      { PATH: process.env.PATH },
      {
        cwd: process.cwd(),
        ...(stdin === undefined ? {} : { stdin: Readable.from([stdin]) }),
      },
    );
    expect(await main(args, io)).toBe(code);
    const err = io.err();
    expect(err).toMatch(/^\[harness\] [^\n]+\n$/);
    expect(err).toMatch(message);
    expect(err).toMatch(/expected/);
    expect(io.out()).toBe('');
  });
});

describe('an error the harness did not raise on purpose', () => {
  it('exits 4 with its stack', async () => {
    const io = captureIo({}, { cwd: process.cwd() });
    // A stdin that fails while being read is no usage error: it surfaces as the bug it would be.
    const broken = new Readable({
      read() {
        this.destroy(new TypeError('stdin broke'));
      },
    });
    const code = await main(['surface', 'check', '--stdin'], { ...io, stdin: broken });
    expect(code).toBe(4);
    expect(io.err()).toMatch(
      /^\[harness\] internal error \(exit 4\); please report it with this stack:\nTypeError: stdin broke\n\s+at /,
    );
  });
});
