import { int32TextLength, writeInt32Text } from '../../../common/ascii-writer.ts';
import { pythonJsonDumps } from '../../../common/python-json/dumps.ts';
import { NumberRuns } from '../values/number-runs.ts';
import { TextPieces } from '../values/text-pieces.ts';
import type { ByteSegment } from './reply-stream.ts';
import type { WrittenTensor } from './safetensors.ts';

/**
 * The samples meta (compact, non-ASCII kept: `json.dumps(..., ensure_ascii=False, separators=(",", ":"))`
 * encoded as UTF-8) written straight into the reply, its big values (a leaf's response texts, its
 * `accumulated_token_ids`) from their pieces instead of through one 30 MB string and its bytes. JSON is
 * compositional: the text of a value inside a document is the value's own text, so the document is
 * written with a unique placeholder string in each big value's place, and each placeholder's quoted
 * text is then replaced by the value's bytes. The same bytes, or null when this path cannot promise them
 * (a placeholder's text also occurs elsewhere, a piece or the surrounding text holds a lone surrogate:
 * the caller then writes the whole text, which raises Miles' UnicodeEncodeError where Miles does).
 */

export const META_JSON_OPTIONS = { ensureAscii: false, separators: [',', ':'] as [string, string] };

/** What `json.dumps` escapes in a string with `ensure_ascii=False`. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;

type Part =
  | { readonly text: string; readonly bytes: number }
  | { readonly ints: Int32Array; readonly from: number; readonly to: number; readonly bytes: number };

function textPart(text: string): Part | null {
  return text.isWellFormed() ? { text, bytes: Buffer.byteLength(text, 'utf8') } : null;
}

/** The parts of a JSON list of the runs' numbers: int32 runs as they are, anything else as its JSON text. */
function listParts(runs: NumberRuns, out: Part[]): void {
  out.push({ text: '[', bytes: 1 });
  runs.runs.forEach((run, i) => {
    if (i > 0) out.push({ text: ',', bytes: 1 });
    if (!('fill' in run) && run.data instanceof Int32Array) {
      let bytes = run.to - run.from - 1; // commas
      for (let k = run.from; k < run.to; k += 1) bytes += int32TextLength(run.data[k] as number);
      out.push({ ints: run.data, from: run.from, to: run.to, bytes });
      return;
    }
    const values =
      'fill' in run ? new Array<number>(run.count).fill(run.fill) : run.data.slice(run.from, run.to);
    const text = pythonJsonDumps(values, META_JSON_OPTIONS);
    out.push({ text: text.slice(1, -1), bytes: Buffer.byteLength(text, 'utf8') - 2 });
  });
  out.push({ text: ']', bytes: 1 });
}

/** The parts of a JSON string of the joined pieces; false when a piece is not well-formed. */
function stringParts(text: TextPieces, out: Part[]): boolean {
  out.push({ text: '"', bytes: 1 });
  for (const piece of text.pieces) {
    if (piece.length === 0) continue;
    const escaped = NEEDS_ESCAPE.test(piece) ? pythonJsonDumps(piece, META_JSON_OPTIONS).slice(1, -1) : piece;
    const part = textPart(escaped);
    if (part === null) return false;
    out.push(part);
  }
  out.push({ text: '"', bytes: 1 });
  return true;
}

/**
 * The meta tensor: `text` (the meta dumped with placeholders) with each `values[k]` written where the
 * quoted `placeholder(k)` stands; or null (see above).
 */
export function metaTensor(
  text: string,
  placeholder: (k: number) => string,
  values: ReadonlyArray<NumberRuns | TextPieces>,
): WrittenTensor | null {
  const parts: Part[] = [];
  let at = 0;
  for (let k = 0; k < values.length; k += 1) {
    const quoted = JSON.stringify(placeholder(k));
    const found = text.indexOf(quoted, at);
    if (found < 0) return null;
    const before = textPart(text.slice(at, found));
    if (before === null) return null;
    parts.push(before);
    const value = values[k];
    if (value instanceof NumberRuns) listParts(value, parts);
    else if (!(value instanceof TextPieces) || !stringParts(value, parts)) return null;
    at = found + quoted.length;
  }
  const after = textPart(text.slice(at));
  if (after === null) return null;
  parts.push(after);
  // Each placeholder exactly once: a string elsewhere that happens to hold one would be replaced too.
  for (let k = 0; k < values.length; k += 1) {
    const quoted = JSON.stringify(placeholder(k));
    if (text.indexOf(quoted) !== text.lastIndexOf(quoted)) return null;
  }
  const length = parts.reduce((n, p) => n + p.bytes, 0);
  return { dtype: 'U8', shape: [length], length, open: () => partsSegment(parts, length) };
}

const encoder = new TextEncoder();

/**
 * The parts' bytes in order, as far as each call's room goes: a text part whole when it fits (most do),
 * else its characters that fit (`encodeInto` never splits one); an int run's numbers while the room holds
 * any int32's text and comma (12 bytes). What does not fit waits for the next call (`ReplyStream` splits
 * a straddling unit itself).
 */
function partsSegment(parts: readonly Part[], length: number): ByteSegment {
  let part = 0;
  /** Within the current part: UTF-16 units of a text written, or the next index of an int run. */
  let at = -1;
  return {
    length,
    write(out, offset, max) {
      const buffer = Buffer.from(out.buffer, out.byteOffset, out.byteLength);
      const end = offset + max;
      let pos = offset;
      while (part < parts.length && pos < end) {
        const p = parts[part]!;
        if ('text' in p) {
          if (at < 0 && p.bytes <= end - pos) {
            pos += buffer.write(p.text, pos, 'utf8');
            part += 1;
            continue;
          }
          const from = Math.max(at, 0);
          const { read, written } = encoder.encodeInto(p.text.slice(from), out.subarray(pos, end));
          pos += written;
          if (from + read === p.text.length) {
            part += 1;
            at = -1;
            continue;
          }
          at = from + read;
          break;
        }
        let k = at < 0 ? p.from : at;
        for (; k < p.to; k += 1) {
          const v = p.ints[k] as number;
          const comma = k === p.from ? 0 : 1;
          // 12 bytes hold any int32's text and its comma; nearer the end, the number's own length.
          if (end - pos < 12 && end - pos < comma + int32TextLength(v)) break;
          if (comma === 1) out[pos++] = 0x2c;
          pos = writeInt32Text(out, pos, v);
        }
        if (k === p.to) {
          part += 1;
          at = -1;
          continue;
        }
        at = k;
        break;
      }
      return pos - offset;
    },
  };
}
