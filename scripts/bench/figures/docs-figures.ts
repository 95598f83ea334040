import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import { CheckRunBenchResultSchema } from '../check-run-result.ts';
import {
  BenchResultSchema,
  MutationResultSchema,
  NpmTestResultSchema,
  TokenizerResultSchema,
  WorkersResultSchema,
} from '../result-schema.ts';
import { benchTargets } from './bench-figures.ts';
import { checkRunFigures } from './check-run-figures.ts';
import { blockNames, withBlock } from './generated-blocks.ts';
import { mutationFigures } from './mutation-figures.ts';
import { npmTestFigures } from './npm-test-figures.ts';
import { tokenizerFigures } from './tokenizer-figures.ts';
import { workersFigures } from './workers-figures.ts';

/**
 * Which doc block is rendered from which result file (`npm run docs:figures`). Every measured figure the
 * docs quote lives in a block listed here; the prose around the blocks is hand-written.
 */

const RESULTS = 'benchmarks/results';

function readResult<S extends z.ZodType>(root: string, file: string, schema: S): z.infer<S> {
  const path = join(root, RESULTS, file);
  return schema.parse(JSON.parse(readFileSync(path, 'utf8')));
}

function readOptional<S extends z.ZodType>(root: string, file: string, schema: S): z.infer<S> | null {
  return existsSync(join(root, RESULTS, file)) ? readResult(root, file, schema) : null;
}

interface Block {
  readonly doc: string;
  readonly name: string;
  readonly render: (root: string) => string;
}

export const BLOCKS: readonly Block[] = [
  {
    doc: 'docs/performance.md',
    name: 'bench-targets',
    render: (root) => benchTargets(readResult(root, 'latest.json', BenchResultSchema)),
  },
  {
    doc: 'docs/performance.md',
    name: 'workers',
    render: (root) => workersFigures(readResult(root, 'workers.json', WorkersResultSchema)),
  },
  {
    doc: 'docs/performance.md',
    name: 'npm-test',
    render: (root) => npmTestFigures(readOptional(root, 'npm-test.json', NpmTestResultSchema)),
  },
  {
    doc: 'docs/tokenizers.md',
    name: 'tokenizer',
    render: (root) => tokenizerFigures(readResult(root, 'tokenizer.json', TokenizerResultSchema)),
  },
  {
    doc: 'docs/check-run.md',
    name: 'check-run-scale',
    render: (root) => checkRunFigures(readResult(root, 'check-run.json', CheckRunBenchResultSchema)),
  },
  {
    doc: 'docs/testing.md',
    name: 'mutation-issue35',
    render: (root) => mutationFigures(readResult(root, 'mutation-issue35.json', MutationResultSchema)),
  },
];

/** Each doc's text as it is and as the generator renders it from the results. */
export function renderDocs(root: string, read = (path: string) => readFileSync(join(root, path), 'utf8')) {
  const docs = new Map<string, { current: string; rendered: string }>();
  for (const block of BLOCKS) {
    const entry = docs.get(block.doc) ?? { current: read(block.doc), rendered: read(block.doc) };
    entry.rendered = withBlock(entry.rendered, block.name, block.render(root));
    docs.set(block.doc, entry);
  }
  // A block in a doc that no entry renders is a figure nobody regenerates.
  for (const [doc, { current }] of docs)
    for (const name of blockNames(current))
      if (!BLOCKS.some((b) => b.doc === doc && b.name === name))
        throw new Error(
          `${doc}: generated block ${name} has no renderer in scripts/bench/figures/docs-figures.ts`,
        );
  return docs;
}

/** The docs whose generated blocks differ from what the results render. */
export function staleDocs(root: string, read?: (path: string) => string): string[] {
  return [...renderDocs(root, read)].filter(([, d]) => d.current !== d.rendered).map(([doc]) => doc);
}
