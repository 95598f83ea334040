/**
 * Writes generated session traces with thinking and tool calls (test/helpers/qwen3-traces.ts) for
 * `harness conformance --tokenizer qwen3` (docs/conformance.md):
 *
 *   npx node scripts/conformance-traces.ts [--seed 26] [--count 24] --out DIR
 *   npx harness conformance --miles-root "$MILES_ROOT" --tokenizer qwen3 DIR/*.json
 *
 * The same seed and count write the same files.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { parseScriptFlags, valueFlag } from '../common/cli-flags.ts';
import { writeQwen3Traces } from '../test/helpers/qwen3-traces.ts';

const FLAGS = {
  seed: valueFlag('N', z.coerce.number().int().default(26), 'the generator seed [26]'),
  count: valueFlag('N', z.coerce.number().int().positive().default(24), 'traces to write [24]'),
  out: valueFlag('DIR', z.string({ error: 'required' }).min(1), 'the folder to write them into'),
};
const SPEC = {
  command: 'conformance-traces',
  invocation: 'npx node scripts/conformance-traces.ts',
  flags: FLAGS,
  about:
    'Writes generated Qwen3 session traces (thinking, tool calls) for harness conformance --tokenizer qwen3.',
};

const values = parseScriptFlags(process.argv.slice(2), SPEC, process);
if (typeof values === 'number') process.exit(values);
const { seed, count, out } = values;
mkdirSync(out, { recursive: true });
const files = writeQwen3Traces(out, { seed, count }, (path, text) => writeFileSync(path, text));
process.stderr.write(`wrote ${files.length} traces to ${join(out)}\n`);
