import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pythonJson } from '../../../test/helpers/python-oracle.ts';
import { limitOutputLength } from './terminal.ts';

/**
 * `limitOutputLength` against Harbor's own `Terminus2._limit_output_length` (terminus_2.py at 6c9ba3f0),
 * lifted out of the source with `ast` and run alone under CPython (the module's imports need packages
 * this machine does not have; the method reads nothing of `self`). Skipped, with the reason, where
 * Debian's python3 or Harbor's source is missing (CI).
 */

const HARBOR_SRC = process.env.HARBOR_SRC ?? '/work/ext/harbor';
const TERMINUS = join(HARBOR_SRC, 'src/harbor/agents/terminus_2/terminus_2.py');
const missing = [
  existsSync('/usr/bin/python3') ? undefined : '/usr/bin/python3 is missing',
  existsSync(TERMINUS) ? undefined : `Harbor's source is not at HARBOR_SRC=${HARBOR_SRC}`,
].filter((r): r is string => r !== undefined);

const ORACLE = `
import ast, json, sys
path, cases = json.load(sys.stdin)
tree = ast.parse(open(path, encoding='utf-8').read())
method = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == '_limit_output_length')
scope = {}
exec(compile(ast.Module(body=[method], type_ignores=[]), path, 'exec'), scope)
print(json.dumps([scope['_limit_output_length'](None, text, cap) for text, cap in cases]))
`;

// Characters of 1 to 4 UTF-8 bytes, and U+FFFD itself: a cut can fall inside any of them, and a U+FFFD
// the output holds is text, not a decoding error.
const piece = fc.constantFrom('a', ' ', '\n', 'é', 'ȱ', '⣛', 'ꩡ', '\ufffd', '😀', '𓄓', 'wörd ');

describe.skipIf(missing.length > 0)(
  `limitOutputLength against Harbor's _limit_output_length${missing.length > 0 ? ` (skipped: ${missing.join('; ')})` : ''}`,
  () => {
    it('gives the same text for outputs around the cap, cut inside characters of every width', () => {
      const cases = fc.sample(
        fc.tuple(
          fc.array(piece, { maxLength: 120 }).map((parts) => parts.join('')),
          fc.integer({ min: 1, max: 90 }),
        ),
        { numRuns: 400, seed: 20261203 },
      );
      cases.push(['\ufffd', 1], [`${'\ufffd'.repeat(40)}`, 50], ['a'.repeat(12_000), 10_000]);
      const expected = pythonJson<string[]>(ORACLE, [TERMINUS, cases]);
      expect(cases.map(([text, cap]) => limitOutputLength(text, cap))).toEqual(expected);
    });
  },
);
