import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { captureIo } from '../../cli/io.ts';
import { main } from '../../cli/main.ts';
import { LAUNCHER } from '../../replay/conformance/miles-server.ts';
import { bundledTraceFiles } from '../../replay/conformance/run-conformance.ts';
import { writeQwen3Traces } from '../helpers/qwen3-traces.ts';
import { announceGate, milesGate } from './gate.ts';

// `harness conformance --tokenizer qwen3` (docs/conformance.md): Miles' own Qwen3TITOTokenizer, template
// and comparator over the real Qwen3 tokenizer (miles-bridge/hf_bpe_tokenizer.py) against the fake's
// qwen3 family, on every bundled trace and on generated traces with thinking and tool calls.
const gate = await milesGate({ sessionServer: true, qwen3: true });

// A fresh seed each run (FC_SEED replays one), printed so a difference can be reproduced.
const seed = process.env.FC_SEED === undefined ? Date.now() % 2 ** 31 : Number(process.env.FC_SEED);
const GENERATED = 12;
const dir = await mkdtemp(join(tmpdir(), 'qwen3-traces-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

interface Report {
  traces: Array<{ trace: string; exchanges: number; differences: unknown[] }>;
  agree: number;
  total: number;
  replacements: string[];
  raw_requests: { exchanges: number; differences: unknown[] };
}

announceGate(gate, 'miles qwen3 suite');

describe.skipIf(gate.unmet.length > 0)(
  gate.unmet.length > 0
    ? `Miles session server on CPU with the Qwen3 tokenizer (skipped: ${gate.unmet.map((u) => u.split(':')[0]).join(', ')})`
    : 'Miles session server on CPU with the Qwen3 tokenizer',
  () => {
    it(`agrees with the fake on the bundled traces, ${GENERATED} generated ones (seed ${seed}) and the raw requests`, async () => {
      console.info(`[qwen3 conformance] generated traces: seed ${seed}`);
      const writes: Promise<void>[] = [];
      const generated = writeQwen3Traces(dir, { seed, count: GENERATED }, (path, text) => {
        writes.push(writeFile(path, text));
      });
      await Promise.all(writes);
      const bundled = await bundledTraceFiles();
      const io = captureIo({});
      const code = await main(
        [
          'conformance',
          '--miles-root',
          gate.milesRoot,
          '--python',
          gate.python,
          '--tokenizer',
          'qwen3',
          '--json',
          ...bundled,
          ...generated,
        ],
        io,
      );
      const report = JSON.parse(io.out()) as Report;
      expect(report.traces.filter((t) => t.differences.length > 0)).toEqual([]);
      expect(report.raw_requests.differences).toEqual([]);
      expect(code).toBe(0);
      expect(report.total).toBe(bundled.length + GENERATED);
      // Miles' own TITO family ran: only the tokenizer loader and third-party modules were replaced.
      expect(report.replacements.some((r) => r.includes('hf_bpe_tokenizer.py'))).toBe(true);
      expect(report.replacements.some((r) => r.includes('get_tito_tokenizer'))).toBe(false);
    });

    it('names python3-regex when Python cannot import it, and refuses a tokenizer file that is not the pinned one', async () => {
      await writeFile(join(dir, 'regex.py'), 'raise ImportError("shadowed by the test")\n');
      const wrapper = join(dir, 'python');
      await writeFile(wrapper, `#!/bin/sh\nPYTHONPATH='${dir}' exec '${gate.python}' "$@"\n`);
      await chmod(wrapper, 0o755);
      const io = captureIo({});
      const code = await main(
        ['conformance', '--miles-root', gate.milesRoot, '--python', wrapper, '--tokenizer', 'qwen3'],
        io,
      );
      expect(code).toBe(3);
      expect(io.err()).toContain('regex (Debian package python3-regex)');

      const fakeDir = join(dir, 'tokenizer');
      await rm(fakeDir, { recursive: true, force: true });
      await mkdir(fakeDir);
      await writeFile(join(fakeDir, 'tokenizer.json'), '{}');
      const wrong = await execa(
        gate.python,
        [
          LAUNCHER,
          '--miles-root',
          gate.milesRoot,
          '--tokenizer',
          'qwen3',
          '--tokenizer-dir',
          fakeDir,
          '--preflight',
        ],
        { reject: false, stdin: 'ignore' },
      );
      expect(wrong.exitCode).toBe(3);
      expect(wrong.stderr).toContain(
        'has sha256 44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a, expected aeb13307',
      );
    });
  },
);
