import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { captureIo } from '../../cli/io.ts';
import { main } from '../../cli/main.ts';
import { bundledTraceFiles } from '../../replay/conformance/run-conformance.ts';
import { announceGate, milesGate } from './gate.ts';

// `harness conformance` against Miles' real session server v2 on CPU (docs/conformance.md): every bundled
// conformance trace must get the same answers from the fake as from Miles' own code.
const gate = await milesGate();

announceGate(gate, 'miles suite');

describe.skipIf(gate.unmet.length > 0)(
  gate.unmet.length > 0
    ? `Miles session server on CPU (skipped: ${gate.unmet.map((u) => u.split(':')[0]).join(', ')})`
    : 'Miles session server on CPU',
  () => {
    it('agrees with the fake on every exchange of every bundled trace and on the raw requests', async () => {
      const io = captureIo({});
      const code = await main(
        ['conformance', '--miles-root', gate.milesRoot, '--python', gate.python, '--json'],
        io,
      );
      const report = JSON.parse(io.out()) as {
        traces: Array<{ trace: string; exchanges: number; differences: unknown[] }>;
        agree: number;
        total: number;
        replacements: string[];
        raw_requests: { exchanges: number; differences: unknown[] };
      };
      expect(report.traces.filter((t) => t.differences.length > 0)).toEqual([]);
      expect(report.raw_requests.differences).toEqual([]);
      expect(code).toBe(0);
      expect(report.total).toBe((await bundledTraceFiles()).length);
      expect(report.agree).toBe(report.total);
      // The tokenizer is always the toy; nothing else is replaced where the real module imports.
      expect(
        report.replacements.some((r) => r.startsWith('replaced miles.utils.processing_utils.load_tokenizer')),
      ).toBe(true);
    });

    it('exits 3 naming the Debian package of a module Python cannot import', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'miles-shadow-'));
      try {
        await writeFile(join(dir, 'httpx.py'), 'raise ImportError("shadowed by the test")\n');
        const wrapper = join(dir, 'python');
        await writeFile(wrapper, `#!/bin/sh\nPYTHONPATH='${dir}' exec '${gate.python}' "$@"\n`);
        await chmod(wrapper, 0o755);
        const io = captureIo({});
        const code = await main(['conformance', '--miles-root', gate.milesRoot, '--python', wrapper], io);
        expect(code).toBe(3);
        expect(io.err()).toContain('httpx (Debian package python3-httpx)');
        expect(io.out()).toBe('');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  },
);
