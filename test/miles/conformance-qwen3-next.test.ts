import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { captureIo } from '../../cli/io.ts';
import { main } from '../../cli/main.ts';
import { milesProfileNamed } from '../../contracts/miles-profile.ts';
import { LAUNCHER } from '../../replay/conformance/miles-server.ts';
import { bundledTraceFiles } from '../../replay/conformance/run-conformance.ts';
import { writeQwen3Traces } from '../helpers/qwen3-traces.ts';
import { newerMilesGate } from './gate.ts';

// `harness conformance --tokenizer qwen3` against the newer Miles tree (docs/conformance.md "A newer Miles"):
// Miles' own Qwen3TITOTokenizer from its tito_tokenizer package (qwen.py, radixark/miles@3abe1f8c), made by
// the package's factory, over the real Qwen3 tokenizer, against the fake under profile 4d412b5a. Gated on
// MILES_NEXT_ROOT (the tree) and MILES_NEXT_PYTHON (a Python with pydantic 2), as conformance-next.test.ts.
const gate = await newerMilesGate({ sessionServer: true, qwen3: true });
const unmet = gate.unmet;
if (unmet.length > 0)
  console.warn(`[skip] newer Miles qwen3 conformance, unmet preconditions:\n  ${unmet.join('\n  ')}`);

// A fresh seed each run (FC_SEED replays one), printed so a difference can be reproduced.
const seed = process.env.FC_SEED === undefined ? Date.now() % 2 ** 31 : Number(process.env.FC_SEED);
const GENERATED = 12;
const dir = await mkdtemp(join(tmpdir(), 'qwen3-next-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

const QWEN_FAMILY = 'miles/utils/chat_template_utils/tito_tokenizer/qwen.py';

interface Report {
  miles_profile: { name: string; commits: string[] };
  traces: Array<{ trace: string; differences: unknown[] }>;
  total: number;
  replacements: string[];
  adaptations: string[];
  raw_requests: { differences: unknown[] };
}

/** The tree's Python packages copied, then `without` removed: a checkout missing one of Miles' files. */
async function treeWithout(without: string): Promise<string> {
  const root = await mkdtemp(join(dir, 'tree-'));
  for (const top of ['miles', 'miles_plugins'])
    await cp(join(gate.milesRoot, top), join(root, top), { recursive: true });
  await rm(join(root, without));
  return root;
}

async function conformance(
  root: string,
  traces: readonly string[],
): Promise<{ code: number; report: Report }> {
  const io = captureIo({});
  const args = ['conformance', '--miles-root', root, '--python', gate.python, '--tokenizer', 'qwen3'];
  const code = await main([...args, '--json', ...traces], io);
  return { code, report: JSON.parse(io.out()) as Report };
}

describe.skipIf(unmet.length > 0)(
  unmet.length > 0
    ? `newer Miles session server with the Qwen3 tokenizer (skipped: ${unmet.map((u) => u.split(':')[0]).join(', ')})`
    : 'newer Miles session server with the Qwen3 tokenizer',
  () => {
    it(`runs Miles' own qwen.py family and agrees on the bundled traces, ${GENERATED} generated ones (seed ${seed}) and the raw requests`, async () => {
      console.info(`[qwen3 next conformance] generated traces: seed ${seed}`);
      const writes: Promise<void>[] = [];
      const generated = writeQwen3Traces(dir, { seed, count: GENERATED }, (path, text) => {
        writes.push(writeFile(path, text));
      });
      await Promise.all(writes);
      const bundled = await bundledTraceFiles();
      const { code, report } = await conformance(gate.milesRoot, [...bundled, ...generated]);
      const expected = milesProfileNamed('4d412b5a');
      expect(report.miles_profile).toEqual({ name: expected?.name, commits: expected?.commits });
      expect(report.traces.filter((t) => t.differences.length > 0)).toEqual([]);
      expect(report.raw_requests.differences).toEqual([]);
      expect(report.total).toBe(bundled.length + GENERATED);
      expect(code).toBe(0);
      // Miles' family through the package's own factory: no TITO stand-in, no fallback.
      expect(report.replacements.some((r) => r.includes('hf_bpe_tokenizer.py'))).toBe(true);
      expect(report.replacements.some((r) => r.includes('get_tito_tokenizer'))).toBe(false);
      expect(report.adaptations.filter((a) => a.startsWith('adapted tito_tokenizer'))).toEqual([
        expect.stringContaining("Miles' own tito_tokenizer/qwen.py Qwen3TITOTokenizer"),
      ]);
    });

    it('refuses --tokenizer qwen3 on a package without qwen.py, naming the file (exit 3)', async () => {
      const root = await treeWithout(QWEN_FAMILY);
      const preflight = await execa(
        gate.python,
        [LAUNCHER, '--miles-root', root, '--tokenizer', 'qwen3', '--preflight'],
        { reject: false, stdin: 'ignore' },
      );
      expect(preflight.exitCode).toBe(3);
      expect(preflight.stderr).toContain(`no class Qwen3TITOTokenizer in ${QWEN_FAMILY}`);
      const io = captureIo({});
      const args = ['conformance', '--miles-root', root, '--python', gate.python, '--tokenizer', 'qwen3'];
      expect(await main(args, io)).toBe(3);
      expect(io.err()).toContain(QWEN_FAMILY);
    });

    it("loads qwen.py directly when the package's __init__ cannot import a family, says so, and still agrees", async () => {
      // inkling.py imports inkling_parser.py (radixark/miles@3eacefd0); without it the package's __init__ fails.
      const root = await treeWithout('miles/utils/chat_template_utils/inkling_parser.py');
      const bundled = (await bundledTraceFiles()).slice(0, 4);
      const { code, report } = await conformance(root, bundled);
      expect(report.adaptations.filter((a) => a.startsWith('adapted tito_tokenizer'))).toEqual([
        expect.stringMatching(
          /^adapted tito_tokenizer\/__init__\.py: does not import here \(ModuleNotFoundError: .*inkling_parser/,
        ),
      ]);
      expect(report.traces.filter((t) => t.differences.length > 0)).toEqual([]);
      expect(report.raw_requests.differences).toEqual([]);
      expect(code).toBe(0);
    });
  },
);
