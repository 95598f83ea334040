import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { captureIo } from '../../cli/io.ts';
import { main } from '../../cli/main.ts';
import type { DifferentialReport } from '../../replay/differential/run-differential.ts';
import { announceGate, milesGate } from './gate.ts';

// `harness differential --tokenizer qwen3` (docs/differential.md "On Qwen3's ids"): Miles' own rollout path,
// with --tito-model qwen3 over the HF-equal tokenizer, and the harness's driver play the same episodes on
// Qwen3's real ids and must produce the same samples, train rows and metrics.
const gate = await milesGate({ sessionServer: true, rollout: true, qwen3: true });

announceGate(gate, 'miles differential qwen3 suite');

async function differential(args: readonly string[]): Promise<{ code: number; report: DifferentialReport }> {
  const io = captureIo({});
  const code = await main(
    [
      'differential',
      '--miles-root',
      gate.milesRoot,
      '--python',
      gate.python,
      '--tokenizer',
      'qwen3',
      '--json',
      ...args,
    ],
    io,
  );
  return { code, report: JSON.parse(io.out()) as DifferentialReport };
}

/** Miles' side ran the qwen3 family: its argv, its derived fixed template and the HF-equal tokenizer. */
function expectQwen3MilesSide(report: DifferentialReport): void {
  expect(report.tokenizer).toBe('qwen3');
  expect(report.miles_args_set).toEqual(expect.arrayContaining(['--tito-model qwen3']));
  expect(report.derived).toContainEqual(
    expect.stringMatching(/^derived chat_template_path='[^']*\/templates\/qwen3_fixed\.jinja': /),
  );
  expect(report.derived).toContainEqual(
    expect.stringMatching(/^derived apply_chat_template_kwargs=\{'clear_thinking': False\}: /),
  );
  expect(report.replacements).toContainEqual(
    expect.stringMatching(
      /^replaced miles\.utils\.processing_utils\.load_tokenizer: miles-bridge\/hf_bpe_tokenizer\.py /,
    ),
  );
}

function expectAgreement(result: { code: number; report: DifferentialReport }, samples: number): void {
  expect(result.report.differences).toEqual([]);
  expect(result.code).toBe(0);
  expect(result.report.matched_samples).toBeGreaterThanOrEqual(samples);
  // The mismatch metrics of the qwen3 comparator are among those compared.
  expect(result.report.metrics.compared).toEqual(
    expect.arrayContaining(['rollout/response_len/mean', 'rollout/tito_session_mismatch_rate/v2']),
  );
}

describe.skipIf(gate.unmet.length > 0)(
  gate.unmet.length > 0
    ? `Miles' rollout path against the harness's driver on Qwen3's ids (skipped: ${gate.unmet.map((u) => u.split(':')[0]).join(', ')})`
    : "Miles' rollout path against the harness's driver on Qwen3's ids",
  () => {
    it('agrees on generated episodes with the fake session server (1 x 8)', async () => {
      const result = await differential(['--seed', '7', '--rollout-batch-size', '1']);
      expectQwen3MilesSide(result.report);
      expectAgreement(result, 8);
    });

    it("agrees with Miles' own session server on its qwen3 family on both sides (1 x 4)", async () => {
      const result = await differential([
        '--seed',
        '7',
        '--rollout-batch-size',
        '1',
        '--n-samples-per-prompt',
        '4',
        '--session-server',
        'miles',
      ]);
      expectQwen3MilesSide(result.report);
      expect(result.report.replacements).toContainEqual(
        expect.stringMatching(/^session server: replaced miles\.utils\.processing_utils\.load_tokenizer: /),
      );
      expectAgreement(result, 4);
    });

    it('exits 3 naming the Debian package of a module the qwen3 mode cannot import', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'miles-shadow-'));
      try {
        await writeFile(join(dir, 'regex.py'), 'raise ImportError("shadowed by the test")\n');
        const wrapper = join(dir, 'python');
        await writeFile(wrapper, `#!/bin/sh\nPYTHONPATH='${dir}' exec '${gate.python}' "$@"\n`);
        await chmod(wrapper, 0o755);
        const io = captureIo({});
        const code = await main(
          ['differential', '--miles-root', gate.milesRoot, '--python', wrapper, '--tokenizer', 'qwen3'],
          io,
        );
        expect(code).toBe(3);
        expect(io.err()).toContain('regex (Debian package python3-regex)');
        expect(io.out()).toBe('');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  },
);
