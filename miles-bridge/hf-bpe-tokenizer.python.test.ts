import { execFileSync, spawnSync } from 'node:child_process';
import { dirname } from 'node:path';
import fc from 'fast-check';
import { Tokenizer as RustTokenizer } from 'tokenizers';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseJson } from '../common/python-json/loads.ts';
import {
  LoneSurrogateError,
  loneSurrogateAt,
  qwen3TokenizerPath,
} from '../fakes/tokenizer/qwen3-tokenizer.ts';
import { wildString } from '../test/helpers/text-arbitraries.ts';

/**
 * The launcher's pure-Python Qwen3 tokenizer (hf_bpe_tokenizer.py, what Miles runs on CPU with
 * `--tokenizer qwen3`) against HF's Rust build (the npm `tokenizers` package) on the same tokenizer.json:
 * random Unicode text encodes to the same ids, Rust's ids decode to the same text, random id runs (split
 * UTF-8 included) decode the same, and a lone surrogate raises the UnicodeEncodeError the fake reports.
 * One Python process answers every case. Skips, saying why, where the Python or python3-regex is missing.
 */

const PYTHON = process.env.HARNESS_MILES_PYTHON ?? '/usr/bin/python3';
const SCRIPT = new URL('./hf_bpe_tokenizer.py', import.meta.url).pathname;

function pythonMissing(): string | null {
  const check = spawnSync(PYTHON, ['-c', 'import regex'], { stdio: 'ignore' });
  return check.status === 0 ? null : `${PYTHON} cannot import regex (Debian: apt-get install python3-regex)`;
}

const missing = pythonMissing();
if (missing !== null) console.warn(`[skip] Python Qwen3 tokenizer vs HF Rust tokenizers: ${missing}`);

// Text that reaches the split pattern's classes (contractions in both cases and with U+017F, digits,
// whitespace runs before newlines, \r\n, combining marks for NFC), the added tokens, and any code point
// (wildString: non-BMP, and letters Unicode assigned after 15.0 among them; lone surrogates too).
const piece = fc.constantFrom(
  "'s",
  "'S",
  "'ll",
  "'\u017f",
  ' ',
  '   ',
  '\n',
  '\r\n',
  '\t',
  '\u00a0',
  '\u3000',
  '\u2028',
  '\x1c',
  '\x85',
  '123',
  'e\u0301',
  '\u1c89',
  '\u{323b0}',
  '<|im_start|>',
  '<|im_end|>',
  '<think>',
  '</think>',
  '<tool_call>',
  '<|endoftext|>',
  '<|im_start',
  '\u{1f44d}\u{1f3fd}',
  '漢字',
  '{"a": 1.0}',
);
const text = fc
  .array(fc.oneof(piece, wildString({ maxLength: 8 })), { maxLength: 10 })
  .map((parts) => parts.join(''));

interface PythonAnswer {
  encode: Array<number[] | { error: string }>;
  decode: string[];
  load_s: number;
}

let rust: RustTokenizer;
beforeAll(() => {
  rust = RustTokenizer.fromFile(qwen3TokenizerPath());
});

describe.skipIf(missing !== null)('Python Qwen3 tokenizer vs HF Rust tokenizers', () => {
  it('encodes and decodes as the Rust build does', async () => {
    const texts = fc.sample(text, 4000);
    const runs = fc.sample(fc.array(fc.integer({ min: 0, max: 151_670 }), { maxLength: 12 }), 1000);
    const wellFormed = texts.filter((t) => loneSurrogateAt(t) === -1);
    const rustIds = (await rust.encodeBatch(wellFormed, { addSpecialTokens: false })).map((e) =>
      Array.from(e.getIds()),
    );
    const rustTexts = await rust.decodeBatch([...rustIds, ...runs], false);
    const out = execFileSync(PYTHON, [SCRIPT, dirname(qwen3TokenizerPath())], {
      input: JSON.stringify({ encode: texts, decode: [...rustIds, ...runs] }),
      encoding: 'utf8',
      maxBuffer: 1 << 28,
    });
    const python = parseJson(out) as PythonAnswer;

    let k = 0;
    texts.forEach((t, i) => {
      const bad = loneSurrogateAt(t);
      if (bad === -1) {
        expect(python.encode[i], JSON.stringify(t)).toEqual(rustIds[k]);
        k += 1;
      } else {
        expect(python.encode[i]).toEqual({
          error: `UnicodeEncodeError: ${new LoneSurrogateError(t, bad).message}`,
        });
      }
    });
    python.decode.forEach((decoded, i) => {
      expect(decoded, JSON.stringify([...rustIds, ...runs][i])).toBe(rustTexts[i]);
    });
    // Each class the generator is for was drawn at least once.
    expect(wellFormed.length).toBeGreaterThan(1500);
    expect(texts.length - wellFormed.length).toBeGreaterThan(500);
  });
});
