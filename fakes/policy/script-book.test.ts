import { describe, expect, it } from 'vitest';
import { TRACE_ID_HEADER, TRACE_TURN_HEADER } from '../../contracts/policy-headers.ts';
import type { SessionTrace } from '../../contracts/trace.ts';
import { ScriptBook } from './script-book.ts';

/**
 * Script mode's choice of trace and turn (docs/policy.md "Modes"): `x-harness-trace-id` names the trace
 * (needed when several are loaded), `x-harness-trace-turn: k` names the turn, arrival order otherwise;
 * the refusals' statuses and texts written out.
 */

function trace(...contents: string[]): SessionTrace {
  return {
    format: 'session-trace/1',
    turns: contents.map((content) => ({
      request: { messages: [] },
      response: { message: { role: 'assistant', content }, finish_reason: 'stop' },
    })),
  };
}

function headers(values: Record<string, string>) {
  return { get: (name: string) => values[name] ?? null };
}

/** The content a choice answers with, or its refusal as `status message`. */
function pick(book: ScriptBook, values: Record<string, string> = {}): string {
  const choice = book.choose(headers(values));
  if (!choice.ok) return `${choice.status} ${choice.message}`;
  return 'message' in choice.response ? `${choice.turn}:${String(choice.response.message.content)}` : 'error';
}

describe('the script book', () => {
  it('refuses when no trace can be chosen', () => {
    expect(pick(new ScriptBook(undefined, undefined))).toBe('500 script: no script loaded');
    const two = new ScriptBook(undefined, { a: trace('x'), b: trace('y') });
    expect(pick(two)).toBe('500 script: several traces loaded; send x-harness-trace-id');
    expect(pick(two, { [TRACE_ID_HEADER]: 'c' })).toBe('500 script: unknown trace id "c" (loaded: a, b)');
    expect(pick(new ScriptBook(undefined, {}), { [TRACE_ID_HEADER]: 'a' })).toBe(
      '500 script: unknown trace id "a" (loaded: )',
    );
  });

  it('takes a trace id that names an Object property for a trace id like any other', () => {
    const two = new ScriptBook(undefined, { a: trace('x'), b: trace('y') });
    for (const id of ['constructor', 'toString', '__proto__', 'hasOwnProperty'])
      expect(pick(two, { [TRACE_ID_HEADER]: id })).toBe(
        `500 script: unknown trace id "${id}" (loaded: a, b)`,
      );
    const odd = new ScriptBook(
      undefined,
      Object.fromEntries([
        ['__proto__', trace('p')],
        ['constructor', trace('c')],
      ]),
    );
    expect(pick(odd, { [TRACE_ID_HEADER]: '__proto__' })).toBe('0:p');
    expect(pick(odd, { [TRACE_ID_HEADER]: 'constructor' })).toBe('0:c');
  });

  it('refuses a turn header that is no whole number at or above 0, and a turn past the end', () => {
    const book = new ScriptBook(trace('zero', 'one'), undefined);
    for (const bad of ['-1', '1.5', 'two'])
      expect(pick(book, { [TRACE_TURN_HEADER]: bad })).toBe(`400 invalid x-harness-trace-turn: ${bad}`);
    expect(pick(book, { [TRACE_TURN_HEADER]: '2' })).toBe(
      '500 script exhausted: trace default has 2 turns, asked for turn 2',
    );
    // Refusals move no cursor: arrival order still starts at turn 0, then runs out.
    expect([pick(book), pick(book), pick(book)]).toEqual([
      '0:zero',
      '1:one',
      '500 script exhausted: trace default has 2 turns, asked for turn 2',
    ]);
  });

  it('answers the named turn, and arrival order goes on after it, per trace', () => {
    const book = new ScriptBook(undefined, { a: trace('a0', 'a1', 'a2', 'a3'), b: trace('b0', 'b1') });
    const a = { [TRACE_ID_HEADER]: 'a' };
    const b = { [TRACE_ID_HEADER]: 'b' };
    expect(pick(book, { ...a, [TRACE_TURN_HEADER]: '2' })).toBe('2:a2');
    expect(pick(book, a)).toBe('3:a3');
    expect(pick(book, b)).toBe('0:b0');
    expect(pick(book, { ...a, [TRACE_TURN_HEADER]: '0' })).toBe('0:a0');
    expect(pick(book, a)).toBe('1:a1');
    expect(pick(book, b)).toBe('1:b1');
  });

  it('loads `script` as the trace `default`, over one of that id among `scripts`', () => {
    const book = new ScriptBook(trace('script'), { default: trace('scripts'), other: trace('other') });
    expect(pick(book, { [TRACE_ID_HEADER]: 'default' })).toBe('0:script');
    expect(pick(book, { [TRACE_ID_HEADER]: 'nope' })).toBe(
      '500 script: unknown trace id "nope" (loaded: default, other)',
    );
  });
});
