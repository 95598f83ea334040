/**
 * `npm run docs:figures`: renders every measured figure the docs quote from benchmarks/results/ into the
 * docs' generated blocks (scripts/bench/figures/docs-figures.ts names them). `--check` writes nothing and
 * exits 1 naming each doc whose blocks differ (scripts/bench/docs-figures.test.ts runs the same check).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseScriptFlags, switchFlag } from '../../common/cli-flags.ts';
import { EXIT } from '../../common/exit-codes.ts';
import { renderDocs } from './figures/docs-figures.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SPEC = {
  command: 'docs:figures',
  invocation: 'npm run docs:figures --',
  flags: { check: switchFlag('write nothing; exit 1 when a doc differs from what the results render') },
  about: "Render the docs' measured figures from benchmarks/results/ into their generated blocks.",
};

function main(): number {
  const values = parseScriptFlags(process.argv.slice(2), SPEC, process);
  if (typeof values === 'number') return values;
  const stale = [...renderDocs(ROOT)].filter(([, d]) => d.current !== d.rendered);
  for (const [doc, { rendered }] of stale) {
    if (values.check) process.stderr.write(`${doc}: generated figures differ from benchmarks/results\n`);
    else writeFileSync(join(ROOT, doc), rendered);
  }
  if (!values.check) process.stdout.write(`docs:figures: ${stale.length} doc(s) rewritten\n`);
  return values.check && stale.length > 0 ? EXIT.failed : EXIT.ok;
}

process.exitCode = main();
