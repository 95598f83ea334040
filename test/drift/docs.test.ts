import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { overlayId } from '../../recipe/drift/overlays.ts';
import { PROBLEM_RULES } from '../../recipe/drift/problem.ts';
import { LAUNCHER_ERROR_CODES } from '../../recipe/drift/python-launcher.ts';
import { fixturePath, index } from './helpers.ts';

// docs/drift.md is what users read; it must name every stable code and overlay the code can produce.
const docs = readFileSync(fixturePath('docs/drift.md'), 'utf8');

describe('docs/drift.md', () => {
  test.each(PROBLEM_RULES)('documents the rule %s', (rule) => {
    expect(docs).toContain(`| \`${rule}\` |`);
  });

  test.each(Object.values(LAUNCHER_ERROR_CODES))('documents the launcher error %s', (code) => {
    expect(docs).toContain(`\`${code}\``);
  });

  test('documents every overlay of the shipped surface', async () => {
    const { surface } = await index();
    for (const overlay of surface.overlays) expect(docs).toContain(`| \`${overlayId(overlay)}\` |`);
  });
});

/** The project's design notes, not shipped: docs/sources.md says what each covered and where its facts are. */
const SPEC_NOTES = [
  'session-server-v2.md',
  'grpo-grouping.md',
  'terminus2-harbor.md',
  'recipe.md',
  'peers.md',
  'style.md',
];

// Docs must be self-contained: the project's shared folder is not shipped, so a `shared/…` path or a
// relative link to a file the repository lacks is a dead end for a reader of a clone.
const userDocs = ['README.md', ...readdirSync(fixturePath('docs')).map((name) => `docs/${name}`)].filter(
  (file) => file.endsWith('.md'),
);

describe.each(userDocs)('%s', (file) => {
  const text = readFileSync(fixturePath(file), 'utf8');

  test('cites no path in the unshipped shared folder', () => {
    const hits = text
      .split('\n')
      .flatMap((line, at) => (/(^|[^\w-])shared\//.test(line) ? [`${at + 1}: ${line}`] : []));
    expect(hits).toEqual([]);
  });

  test('names only Markdown files the repository has (no bare citation of an unshipped spec)', () => {
    // A name such as `grpo-grouping.md` must resolve from the doc's folder or the repository root;
    // docs/sources.md alone may name the unshipped design notes, in the table that says what they were.
    const explained = file === 'docs/sources.md' ? SPEC_NOTES : [];
    const missing = [...text.matchAll(/[\w./-]+\.md\b/g)]
      .map(([name]) => name.replace(/^\.\//, ''))
      .filter((name) => !/^[a-z]+:\/\//i.test(name) && !explained.includes(name))
      .filter(
        (name) => !existsSync(join(dirname(fixturePath(file)), name)) && !existsSync(fixturePath(name)),
      );
    expect(missing).toEqual([]);
  });

  test('cites no spec section (§): the facts are stated in the docs, with the upstream file', () => {
    if (file === 'docs/sources.md') return;
    const hits = text.split('\n').flatMap((line, at) => (line.includes('§') ? [`${at + 1}: ${line}`] : []));
    expect(hits).toEqual([]);
  });

  test('links only to files that exist in the repository', () => {
    const dead: string[] = [];
    for (const [, target] of text.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)) {
      if (target === undefined || /^[a-z]+:/i.test(target)) continue;
      if (!existsSync(join(dirname(fixturePath(file)), target))) dead.push(target);
    }
    expect(dead).toEqual([]);
  });
});
