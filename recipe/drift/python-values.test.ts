import { execa } from 'execa';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  isAmongChoices,
  isPythonFloat,
  isPythonInt,
  pythonFloatValue,
  pythonIntText,
} from './python-values.ts';

/** Python itself is the oracle: which of these strings do int() and float() accept, and as what? */
async function pythonVerdicts(
  samples: readonly string[],
): Promise<{ int: string | null; float: number | string | null }[]> {
  const program = `
import json, math, sys
def attempt(f, s):
    try:
        v = f(s)
    except ValueError:
        return None
    if isinstance(v, float) and (math.isinf(v) or math.isnan(v)):
        return str(v)
    return str(v) if isinstance(v, int) else v
print(json.dumps([{"int": attempt(int, s), "float": attempt(float, s)} for s in json.load(sys.stdin)]))
`;
  const { stdout } = await execa('python3', ['-c', program], { input: JSON.stringify(samples) });
  return JSON.parse(stdout);
}

describe('isPythonInt / isPythonFloat agree with Python', () => {
  const text = fc.string({ unit: fc.constantFrom(...'0123456789_+-.eE iInNfFaty'.split('')), maxLength: 10 });

  test('on 400 strings built from digits, signs, dots, exponents, underscores and inf/nan letters', async () => {
    const samples = [
      ...fc.sample(text, { numRuns: 400, seed: 7 }),
      ...[
        '1_000',
        '_1',
        '1__0',
        '1_',
        '+5',
        ' 7 ',
        '1e-6',
        '.5',
        '5.',
        '-.5e+3',
        'inf',
        '-Infinity',
        'nan',
        'infinit',
        ' +INF ',
        '-inf',
        '-nan',
        'NaN',
        '1_0.2_5',
        '0x10',
        '١٢',
      ],
    ];
    const verdicts = await pythonVerdicts(samples);
    samples.forEach((s, i) => {
      const v = verdicts[i];
      expect(isPythonInt(s), `int(${JSON.stringify(s)})`).toBe(v?.int !== null);
      expect(isPythonFloat(s), `float(${JSON.stringify(s)})`).toBe(v?.float !== null);
      // Values are compared for ASCII text; other Unicode digits are accepted but compared as written.
      if (!/^[\x20-\x7e]*$/.test(s)) return;
      if (v?.int != null) expect(pythonIntText(s)).toBe(v.int);
      if (typeof v?.float === 'number') expect(pythonFloatValue(s)).toBe(v.float);
      // Python prints its non-finite floats as inf, -inf and nan.
      const nonFinite: Record<string, number> = { inf: Infinity, '-inf': -Infinity, nan: Number.NaN };
      if (typeof v?.float === 'string') expect(pythonFloatValue(s), s).toBe(nonFinite[v.float]);
    });
  }, 30_000);
});

describe('isAmongChoices', () => {
  test('numbers compare by value for numeric choices, text exactly otherwise', () => {
    expect(isAmongChoices('int', '02', [0, 1, 2])).toBe(true);
    expect(isAmongChoices('int', 'two', [0, 1, 2])).toBe(false);
    expect(isAmongChoices('str', 'glm47', ['glm47'])).toBe(true);
    expect(isAmongChoices('str', 'GLM47', ['glm47'])).toBe(false);
    // float choices compare by float() value; an int-typed flag does not take a float spelling.
    expect(isAmongChoices('float', '0.50', [0.5])).toBe(true);
    expect(isAmongChoices('float', '5e-1', [0.5, 1])).toBe(true);
    expect(isAmongChoices('float', 'half', [0.5])).toBe(false);
    expect(isAmongChoices('int', '1.0', [1])).toBe(false);
    expect(isAmongChoices('int', ' +1_0 ', [10])).toBe(true);
    expect(isAmongChoices('str', '1', [1])).toBe(true);
  });
});
