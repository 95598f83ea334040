import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Tokenizer as RustTokenizer } from 'tokenizers';
import { beforeAll, describe, expect, it } from 'vitest';
import { HarnessError } from '../../common/errors.ts';
import { wildString } from '../../test/helpers/text-arbitraries.ts';
import {
  LoneSurrogateError,
  loneSurrogateAt,
  QWEN3_IDS,
  type Qwen3Tokenizer,
  qwen3Tokenizer,
  qwen3TokenizerPath,
  readQwen3TokenizerFile,
} from './qwen3-tokenizer.ts';

/**
 * The fake's Qwen3 encoder and decoder (`@huggingface/tokenizers`) against HF's Rust build (the npm
 * `tokenizers` package, a devDependency with prebuilt binaries) on the same file, over random Unicode and
 * chat-shaped text. Each side loads the file once for the whole file (about 1.5 s each). Plus the
 * pinned file, the ids the templates use, and the lone-surrogate refusal.
 */

let js: Qwen3Tokenizer;
let rust: RustTokenizer;
beforeAll(() => {
  js = qwen3Tokenizer();
  rust = RustTokenizer.fromFile(qwen3TokenizerPath());
  // Two loads of an 11 MB file: seconds on a busy 2-core machine.
}, 60_000);

// Pieces that reach the pre-tokenizer's classes: contractions, digits, letters after punctuation,
// whitespace runs before newlines, \r\n, combining marks (NFC), the chat markers, emoji, CJK.
const piece = fc.constantFrom(
  "'s",
  "'LL",
  ' ',
  '   ',
  '\n',
  '\n\n',
  '\r\n',
  '\t',
  '\u00a0',
  '\u3000',
  '123',
  '4.5',
  'e\u0301',
  'Å',
  '<|im_start|>',
  '<|im_end|>',
  '<think>',
  '</think>',
  '<tool_call>',
  '</tool_call>',
  '<tool_response>',
  '<|fim_prefix|>',
  '<|endoftext|>',
  '<|im_start',
  '😀',
  '👍🏽',
  '漢字',
  'ÿ',
  '{"a": 1}',
  'ls -la',
  '$ ',
  '\u200b',
  '\ufeff',
  '\x00',
  'Ω',
  // Letters of Unicode 16.0 (U+1C89) and of 17.0 only (U+323B0, CJK Extension J): Rust's Oniguruma
  // knows the first, not the second (unicode-classes.ts).
  '\u1c89',
  '\u{323b0}',
);
const text = fc
  .array(fc.oneof(piece, wildString({ maxLength: 8 })), { maxLength: 12 })
  .map((parts) => parts.join(''))
  .filter((t) => loneSurrogateAt(t) === -1);

async function rustIds(texts: readonly string[]): Promise<number[][]> {
  const encodings = await rust.encodeBatch([...texts], { addSpecialTokens: false });
  return encodings.map((e) => Array.from(e.getIds()));
}

describe('Qwen3 tokenizer vs HF Rust tokenizers', () => {
  it('encodes random Unicode to the same ids', async () => {
    const texts = fc.sample(text, 600);
    const expected = await rustIds(texts);
    texts.forEach((t, k) => {
      expect(js.encode(t), JSON.stringify(t)).toEqual(expected[k]);
    });
  });

  it('encodes the same ids again from its cache of the texts between added tokens', async () => {
    const texts = fc.sample(text, 300);
    const expected = await rustIds(texts);
    for (let round = 0; round < 2; round += 1)
      texts.forEach((t, k) => {
        expect(js.encode(t), JSON.stringify(t)).toEqual(expected[k]);
        expect(js.encodeWhole(t), JSON.stringify(t)).toEqual(expected[k]);
      });
  });

  it('encodes word by word (ids kept per word) as the library encodes the whole text', () => {
    // The word cache against the uncached path: texts share words in new contexts, and each text is
    // encoded twice (the second time from the kept pieces and words). fast-check prints its seed.
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 4 }), (texts) => {
        for (const t of [...texts, texts.join(''), texts.join(' '), ...texts]) {
          expect(js.encode(t), JSON.stringify(t)).toEqual(js.encodeWhole(t));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('decodes random id runs (split UTF-8 included) to the same text', async () => {
    const ids = fc.sample(fc.array(fc.integer({ min: 0, max: 151668 }), { maxLength: 12 }), 400);
    const expected = await rust.decodeBatch(ids, false);
    ids.forEach((run, k) => {
      expect(js.decode(run), JSON.stringify(run)).toBe(expected[k]);
    });
  });

  it('round-trips text through encode and decode', () => {
    for (const t of fc.sample(text, 200)) expect(js.decode(js.encode(t))).toBe(t.normalize('NFC'));
  });
});

describe('the pinned file and its ids', () => {
  it('knows the chat markers by id (HF: tokenizer.json added_tokens)', () => {
    const one = (t: string) => js.encode(t);
    expect(one('<|endoftext|>')).toEqual([QWEN3_IDS.endOfText]);
    expect(one('<|im_start|>')).toEqual([151644]);
    expect(one('<|im_end|>')).toEqual([151645]);
    expect(one('<tool_call>')).toEqual([151657]);
    expect(one('</tool_call>')).toEqual([151658]);
    expect(one('<think>')).toEqual([151667]);
    expect(one('</think>')).toEqual([151668]);
    expect(one('\n')).toEqual([198]);
  });

  it('segments on the special tokens only (not <think> or <tool_call>)', () => {
    expect([151643, 151644, 151645, 151656].every((id) => js.isSpecial(id))).toBe(true);
    expect([151657, 151667, 151668, 198, 151642].some((id) => js.isSpecial(id))).toBe(false);
  });

  it('refuses a file that is not the pinned one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'qwen3-file-'));
    const path = join(dir, 'tokenizer.json');
    writeFileSync(path, '{}');
    expect(() => readQwen3TokenizerFile(path)).toThrow(HarnessError);
    expect(() => readQwen3TokenizerFile(path)).toThrow(/not the pinned one \(2 bytes with sha256 44136fa3/);
    expect(() => readQwen3TokenizerFile(join(dir, 'missing.json'))).toThrow(/ENOENT/);
  });

  it("refuses a lone surrogate with Python's UnicodeEncodeError text, as Miles' tokenizer does", () => {
    expect(() => js.encode('ab\u{1F600}c\udc00')).toThrow(LoneSurrogateError);
    expect(() => js.encode('ab\u{1F600}c\udc00')).toThrow(
      "'utf-8' codec can't encode character '\\udc00' in position 4: surrogates not allowed",
    );
    // A run of surrogates is one error over its positions (CPython: 'a\ud800\ud800b'.encode()).
    expect(() => js.encode('a\ud800\ud800b')).toThrow(
      "'utf-8' codec can't encode characters in position 1-2: surrogates not allowed",
    );
    expect(() => js.encode('a\udc00\udc00\ud800\udc00')).toThrow(
      "'utf-8' codec can't encode characters in position 1-2: surrogates not allowed",
    );
    expect(loneSurrogateAt('\ud83d\ude00\ud800')).toBe(2);
    expect(loneSurrogateAt('\ud83d\ude00')).toBe(-1);
  });
});
