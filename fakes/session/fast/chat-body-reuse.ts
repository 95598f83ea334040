import { withRoom } from '../../../common/buffer-room.ts';
import {
  CLOSE_ARRAY,
  COMMA,
  isKeyToken,
  keyMayBe,
  type ObjectMember,
  OPEN_ARRAY,
  OPEN_OBJECT,
  scanArrayTail,
  scanObjectTail,
  skipJsonWhitespace,
} from '../../../common/json-elements.ts';
import { detectJsonEncoding } from '../../../common/python-bytes.ts';
import { pythonJsonLoadsBytes } from '../../../common/python-json/loads.ts';
import { isJsonObject } from '../../../common/python-json/values.ts';

/**
 * Speed only: a chat body parsed as `json.loads(bytes)` does, reusing the messages of the session's
 * previous body where the new one repeats its bytes. An agent re-sends its whole history every turn,
 * so a body's first bytes, up to the end of some message, are usually the previous body's bytes: those
 * messages are taken from the previous parse and only the rest is parsed (docs/performance.md
 * "Catalogue").
 *
 * Why the result is the full parse's: the kept bytes run from the body's start through its `messages`
 * array's first k elements and were accepted by the parser before (plain UTF-8; the array of the last
 * top-level `messages` key, the one Python keeps, with no key spelt with an escape after it). A new
 * body starting with those bytes, followed by `,` (then not `]`) or `]`, decodes and parses iff the
 * same body without those k elements does (the dropped bytes are whole elements and ASCII
 * separators), to the same values apart from the k elements, which are context-free values equal to
 * the kept ones. The reduced body is parsed with the same parser and
 * options; any error, a `messages` key after the array (plain or possibly escaped), or a count that
 * disagrees, and the original body is parsed whole (so an error is the original's, positions included).
 *
 * The kept message objects are the very array the previous request's phase 1 ended with (its re-sent
 * messages replaced by the equal stored ones, shared-messages.ts `shareStoredMessages`): parsed messages are
 * never changed in place (records, nodes and forwarded-body.ts share them). Phase 1 runs under the
 * session lock, so concurrent requests (siblings) load one after another, each reusing what it shares
 * with the body before it: the kept body is an optimisation, never a source of truth.
 */

// The key token `"messages"` as written without escapes.
const MESSAGES_KEY = Buffer.from('"messages"');
// Floats stay floats (`"temperature": 1.0` is forwarded and recorded as `1.0`, as Miles does).
const LOAD_OPTIONS = { keepFloats: true } as const;

// Where the reduced body is written for its parse (one at a time: `load` is synchronous).
let reducedScratch: Buffer = Buffer.alloc(0);

/** What one session keeps of its previous body (empty until a body could be kept). */
export class ChatBodyReuse {
  /** The kept bytes run to the last end; the rest is spare room to grow into. */
  private bytes: Buffer = Buffer.alloc(0);
  /** Just past the `[` of the `messages` array. */
  private arrayStart = 0;
  /** Just past each kept message, in order (the last one is where the kept bytes end). */
  private ends: number[] = [];
  /** The kept messages, one per end. */
  private messages: readonly unknown[] = [];

  /** How many messages the last `load` took from the kept ones (0: parsed whole). */
  lastReused = 0;

  /** How many messages are kept (0: nothing to reuse). */
  get keptMessages(): number {
    return this.ends.length;
  }

  /** Forgets the kept body (its bytes and messages). */
  release(): void {
    this.bytes = Buffer.alloc(0);
    this.arrayStart = 0;
    this.ends = [];
    this.messages = [];
  }

  /**
   * `pythonJsonLoadsBytes(raw, { keepFloats: true })`: the same value or the same error, in every case.
   * Keeps this body's bytes and messages for the next one when it parsed to an object whose messages
   * could be located.
   */
  load(raw: Buffer): unknown {
    this.lastReused = 0;
    const reused = this.loadReusing(raw);
    if (reused !== null) return reused;
    const value = pythonJsonLoadsBytes(raw, LOAD_OPTIONS);
    this.keepWhole(raw, value);
    return value;
  }

  /** How many kept messages `raw` repeats byte for byte from its start (0: none). */
  private repeatedMessages(raw: Buffer): number {
    const ends = this.ends;
    const kept = this.bytes;
    const repeats = (k: number) => {
      const end = ends[k - 1] as number;
      return raw.length >= end && raw.subarray(0, end).equals(kept.subarray(0, end));
    };
    let hi = ends.length;
    if (hi === 0 || repeats(hi)) return hi;
    // Repeating the first k messages implies repeating fewer: the largest k, by bisection.
    let lo = 0;
    hi -= 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (repeats(mid)) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** The full parse's value by reusing the kept messages, or null when that is not proven the same. */
  private loadReusing(raw: Buffer): Record<string, unknown> | null {
    const k = this.repeatedMessages(raw);
    if (k === 0) return null;
    const end = this.ends[k - 1] as number;
    const next = skipJsonWhitespace(raw, end);
    let rest: number;
    if (raw[next] === COMMA) {
      // `[a, ]` is an error where `[ ]` is not: the element after the comma must not be missing.
      rest = next + 1;
      if (raw[skipJsonWhitespace(raw, rest)] === CLOSE_ARRAY) return null;
    } else if (raw[next] === CLOSE_ARRAY) rest = next;
    else return null;
    // The body without its first k messages: everything up to the `[`, then what follows them, in a
    // scratch buffer (the parse decodes it to a string before returning or throwing: nothing keeps it).
    const size = this.arrayStart + (raw.length - rest);
    reducedScratch = withRoom(reducedScratch, size, 0, (n) => Buffer.allocUnsafeSlow(n));
    this.bytes.copy(reducedScratch, 0, 0, this.arrayStart);
    raw.copy(reducedScratch, this.arrayStart, rest);
    const reduced = reducedScratch.subarray(0, size);
    let value: unknown;
    try {
      value = pythonJsonLoadsBytes(reduced, LOAD_OPTIONS);
    } catch {
      // The original parsed whole gives the original error (its message carries positions).
      return null;
    }
    if (!isJsonObject(value)) return null;
    const tail = value.messages;
    // The bytes scanned only now that the parser accepted them (the scan is exact only then).
    const array = scanArrayTail(raw, end, true);
    if (!Array.isArray(tail) || array === null || array.elementEnds.length !== tail.length) return null;
    const after = scanObjectTail(raw, array.close + 1, true);
    if (after === null || after.members.some((m) => keyMayBe(raw, m.keyStart, m.keyEnd, MESSAGES_KEY)))
      return null;
    const messages = this.messages.slice(0, k);
    for (const message of tail) messages.push(message);
    value.messages = messages;
    this.lastReused = k;
    this.keepTail(raw, k, array.elementEnds, messages);
    return value;
  }

  /** After a whole parse: keeps `raw` through its last message, or nothing when it cannot be located. */
  private keepWhole(raw: Buffer, value: unknown): void {
    // Nothing kept unless located below; the buffer stays as room for the next bytes kept.
    this.ends.length = 0;
    this.messages = [];
    // `json.detect_encoding` reads the first bytes: only plain UTF-8 (no BOM) is kept.
    if (detectJsonEncoding(raw) !== 'utf-8' || !isJsonObject(value)) return;
    const messages = value.messages;
    if (!Array.isArray(messages) || messages.length === 0) return;
    const open = skipJsonWhitespace(raw, 0);
    if (raw[open] !== OPEN_OBJECT) return;
    const members = scanObjectTail(raw, open + 1, false);
    if (members === null) return;
    // Python keeps the last `messages`; a key spelt with an escape after it might be one too.
    const all = members.members;
    let last = -1;
    all.forEach((m, i) => {
      if (isKeyToken(raw, m.keyStart, m.keyEnd, MESSAGES_KEY)) last = i;
    });
    if (last < 0 || all.slice(last + 1).some((m) => keyMayBe(raw, m.keyStart, m.keyEnd, MESSAGES_KEY)))
      return;
    const arrayOpen = (all[last] as ObjectMember).valueStart;
    if (raw[arrayOpen] !== OPEN_ARRAY) return;
    const array = scanArrayTail(raw, arrayOpen + 1, false);
    if (array === null || array.elementEnds.length !== messages.length) return;
    this.arrayStart = arrayOpen + 1;
    this.keepTail(raw, 0, array.elementEnds, messages);
  }

  /**
   * Keeps `raw` through `ends`' last entry: its first `k` kept messages' bytes are already held, so
   * only what follows them is written (into spare room, or a larger buffer: common/buffer-room.ts).
   */
  private keepTail(raw: Buffer, k: number, newEnds: readonly number[], messages: readonly unknown[]): void {
    const from = k === 0 ? 0 : (this.ends[k - 1] as number);
    const to = newEnds.length === 0 ? from : (newEnds[newEnds.length - 1] as number);
    this.bytes = withRoom(this.bytes, to, from, (n) => Buffer.allocUnsafeSlow(n));
    raw.copy(this.bytes, from, from, to);
    this.ends.length = k;
    for (const e of newEnds) this.ends.push(e);
    this.messages = messages;
  }
}
