import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BLOCKS, renderDocs, staleDocs } from './figures/docs-figures.ts';
import { blockNames, withBlock } from './figures/generated-blocks.ts';

// The docs' measured figures are what `npm run docs:figures` renders from benchmarks/results/: a figure
// edited by hand in a doc, or a result file changed without regenerating, fails here.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

describe('the docs’ generated figures', () => {
  it('are what the generator renders from benchmarks/results', () => {
    expect(staleDocs(ROOT)).toEqual([]);
  });

  it('fail the check when a figure in a block is edited by hand', () => {
    const doc = 'docs/performance.md';
    const text = read(doc);
    const block = text.slice(
      text.indexOf('<!-- generated:bench-targets'),
      text.indexOf('<!-- /generated:bench-targets'),
    );
    const figure = block.match(/×\d\.\d\d/)?.[0];
    expect(figure).toBeDefined();
    const edited = text.replace(block, block.replace(figure!, '×9.99'));
    expect(staleDocs(ROOT, (path) => (path === doc ? edited : read(path)))).toEqual([doc]);
  });

  it('have a renderer for every block a doc holds, and a block for every renderer', () => {
    for (const [doc, { current }] of renderDocs(ROOT))
      expect(blockNames(current).sort()).toEqual(
        BLOCKS.filter((b) => b.doc === doc)
          .map((b) => b.name)
          .sort(),
      );
    const orphan = `${read('docs/tokenizers.md')}\n<!-- generated:orphan (x) -->\n<!-- /generated:orphan -->\n`;
    expect(() => staleDocs(ROOT, (path) => (path === 'docs/tokenizers.md' ? orphan : read(path)))).toThrow(
      /orphan has no renderer/,
    );
  });

  it('refuses to render into a doc that lacks the block', () => {
    expect(() => withBlock('no markers here', 'workers', 'x')).toThrow(/no generated block workers/);
  });
});
