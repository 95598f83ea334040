/**
 * A doc's generated blocks: the text between `<!-- generated:NAME (npm run docs:figures) -->` and
 * `<!-- /generated:NAME -->`, each on a line of its own. Everything else in the doc is hand-written; the
 * blocks are what docs-figures.ts renders from benchmarks/results/.
 */

const OPEN = (name: string) =>
  `<!-- generated:${name} (npm run docs:figures; edit benchmarks/results, not this block) -->`;
const CLOSE = (name: string) => `<!-- /generated:${name} -->`;

/** The block `name` of `text` as the generator writes it, markers included. */
export function blockText(name: string, body: string): string {
  return `${OPEN(name)}\n${body.trimEnd()}\n${CLOSE(name)}`;
}

function blockBounds(text: string, name: string): { from: number; to: number } | null {
  const from = text.indexOf(OPEN(name));
  if (from === -1) return null;
  const close = text.indexOf(CLOSE(name), from);
  if (close === -1) throw new Error(`generated block ${name} has no closing marker ${CLOSE(name)}`);
  return { from, to: close + CLOSE(name).length };
}

/** The names of the blocks `text` holds, in order. */
export function blockNames(text: string): string[] {
  return [...text.matchAll(/<!-- generated:([\w-]+) /g)].map((m) => m[1] as string);
}

/** `text` with block `name` replaced by `body`; throws when the doc has no such block. */
export function withBlock(text: string, name: string, body: string): string {
  const bounds = blockBounds(text, name);
  if (bounds === null) throw new Error(`no generated block ${name} (expected a line ${OPEN(name)})`);
  return text.slice(0, bounds.from) + blockText(name, body) + text.slice(bounds.to);
}
