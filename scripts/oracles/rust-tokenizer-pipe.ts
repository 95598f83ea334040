/**
 * HF's Rust tokenizer (the npm `tokenizers` package, the build Miles' `transformers` uses) on the pinned
 * Qwen3 file, served over stdin/stdout one JSON line per request, for Python oracles that run Miles' own
 * TITO code (scripts/oracles/qwen3_tito_oracle.py): `{"encode": text}` → `{"ids": [...]}` (no special
 * tokens added; added tokens in the text matched), `{"decode": ids}` → `{"text": str}` (specials kept).
 */
import { createInterface } from 'node:readline';
import { Tokenizer } from 'tokenizers';
import { qwen3TokenizerPath, readQwen3TokenizerFile } from '../../fakes/tokenizer/qwen3-tokenizer.ts';

// The digest check, then the Rust build on the same file.
readQwen3TokenizerFile();
const rust = Tokenizer.fromFile(qwen3TokenizerPath());
const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const request = JSON.parse(line) as { encode?: string; decode?: number[] };
  if (request.encode !== undefined) {
    const encoding = await rust.encode(request.encode, null, { addSpecialTokens: false });
    process.stdout.write(`${JSON.stringify({ ids: Array.from(encoding.getIds()) })}\n`);
  } else {
    process.stdout.write(`${JSON.stringify({ text: await rust.decode(request.decode ?? [], false) })}\n`);
  }
}
