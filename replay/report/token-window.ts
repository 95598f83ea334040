import { escapeHtml } from './html-tree.ts';

/**
 * Ids shown as text on the catalogue page: a window of a sequence around a highlighted span, each id with
 * its own decode (`decode([id])`, specials kept; a byte of a multi-byte character reads U+FFFD), whitespace
 * made visible, added tokens (`<think>`, `<tool_call>`, …) marked, the special ones (`<|im_end|>`, …) more.
 */

export interface TokenDecoder {
  decode(ids: readonly number[]): string;
  isAddedToken(id: number): boolean;
  /** The added tokens flagged `special` (`<|endoftext|>`, `<|im_start|>`, `<|im_end|>`, …). */
  isSpecial(id: number): boolean;
}

/**
 * Whitespace as a visible sign, as word processors and vim's `listchars` show it (docs/field-failures.md
 * "The HTML page"). Latin-1 signs: ⏎ and ␣ are missing from fonts a page cannot count on (the headless
 * Chromium's only font, Open Sans, draws neither). On the page each sign is wrapped in `.ws` (grey), so a
 * literal `¶` or `·` in the text stays distinguishable.
 */
const VISIBLE: Readonly<Record<string, string>> = { '\n': '¶', '\r': '¤', '\t': '»', ' ': '·' };
/** The text as HTML: escaped, each whitespace character as its sign in a `.ws` span. */
function visibleHtml(text: string): string {
  return text
    .split(/([\n\r\t ])/)
    .map((part, k) => (k % 2 === 1 ? `<span class="ws">${VISIBLE[part]!}</span>` : escapeHtml(part)))
    .join('');
}

/** Ids shown either side of the highlighted span, and at most this many of the span itself. */
const CONTEXT = 8;
const MAX_HIGHLIGHTED = 24;

interface WindowBounds {
  readonly from: number;
  readonly to: number;
  /** Highlighted ids left out of a long span (its middle). */
  readonly elided: readonly [number, number] | null;
}

/** Which ids of a sequence of `length` the window shows around `[start, end)`. */
function windowBounds(length: number, start: number, end: number): WindowBounds {
  const from = Math.max(0, start - CONTEXT);
  const to = Math.min(length, Math.max(end, start) + CONTEXT);
  const long = end - start > MAX_HIGHLIGHTED;
  const keep = MAX_HIGHLIGHTED / 2;
  return { from, to, elided: long ? [start + keep, end - keep] : null };
}

function tokenSpan(decoder: TokenDecoder, id: number, position: number, fault: boolean): string {
  const kind = decoder.isSpecial(id) ? 'added special' : decoder.isAddedToken(id) ? 'added' : '';
  const classes = ['tok', kind, fault ? 'fault' : ''].filter(Boolean);
  return `<span class="${classes.join(' ')}" data-id="${id}" data-pos="${position}" title="id ${id} at ${position}">${visibleHtml(decoder.decode([id]))}</span>`;
}

/**
 * One line of ids: the window of `ids` around `[start, end)`, the span highlighted; an empty span (the
 * sequence stops or nothing was emitted there) is a caret at `start`.
 */
export function tokenLine(decoder: TokenDecoder, ids: readonly number[], start: number, end: number): string {
  const { from, to, elided } = windowBounds(ids.length, start, end);
  const parts: string[] = [];
  for (let p = from; p < to; p += 1) {
    if (p === start && end === start) parts.push('<span class="caret" title="nothing here">‸</span>');
    if (elided !== null && p === elided[0])
      parts.push(`<span class="elided">… ${elided[1] - elided[0]} more …</span>`);
    if (elided !== null && p >= elided[0] && p < elided[1]) continue;
    parts.push(tokenSpan(decoder, ids[p]!, p, p >= start && p < end));
  }
  if (end === start && start >= to) parts.push('<span class="caret" title="the sequence ends here">‸</span>');
  const lead = from > 0 ? `<span class="more">${from} ids before</span>` : '';
  const tail = to < ids.length ? `<span class="more">${ids.length - to} ids after</span>` : '';
  return `<div class="ids" data-from="${from}" data-to="${to}">${lead}${parts.join('')}${tail}</div>`;
}
