import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PyJsonDecodeError, pyJsonLoads } from './python-json-decode.ts';
import { PythonIndexError, PythonOverflowError, pyNumberStr } from './python-text.ts';
import { parseReply } from './reply-parser.ts';

/**
 * Differential tests against Harbor's own parsers (terminus_xml_plain_parser.py,
 * terminus_json_plain_parser.py at 6c9ba3f0) and CPython's json.loads, run by
 * scripts/oracles/harbor_parse_oracle.py. Skipped, with the reason, where Debian's python3 or Harbor's
 * source is missing (CI); the golden-scenario test covers the parsers there.
 */

const HARBOR_SRC = process.env.HARBOR_SRC ?? '/work/ext/harbor';
const PYTHON = '/usr/bin/python3';
const ORACLE = fileURLToPath(new URL('../../../scripts/oracles/harbor_parse_oracle.py', import.meta.url));
const missing = [
  existsSync(PYTHON) ? undefined : `${PYTHON} is missing`,
  existsSync(join(HARBOR_SRC, 'src/harbor/agents/terminus_2/terminus_xml_plain_parser.py'))
    ? undefined
    : `Harbor's source is not at HARBOR_SRC=${HARBOR_SRC}`,
].filter((r): r is string => r !== undefined);

interface OracleItem {
  readonly parser: 'xml' | 'json' | 'loads';
  readonly text: string;
}

function oracle(items: readonly OracleItem[]): unknown[] {
  const out = execFileSync(PYTHON, [ORACLE], {
    input: JSON.stringify(items),
    env: { ...process.env, HARBOR_SRC },
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(out.toString('utf8')) as unknown[];
}

function ours(item: OracleItem): unknown {
  if (item.parser === 'loads') {
    try {
      pyJsonLoads(item.text);
      return { ok: true };
    } catch (error) {
      if (error instanceof PyJsonDecodeError) return { ok: false, error: error.message };
      throw error;
    }
  }
  try {
    const r = parseReply(item.parser, item.text);
    return {
      commands: r.commands.map((c) => ({ keystrokes: c.keystrokes, duration: pyNumberStr(c.duration) })),
      is_task_complete: r.isTaskComplete,
      error: r.error,
      warning: r.warning,
    };
  } catch (error) {
    if (error instanceof PythonIndexError || error instanceof PythonOverflowError)
      return { raised: error.name };
    throw error;
  }
}

const text = fc.string({
  unit: fc.constantFrom('a', ' ', '\n', '<', '>', '&lt;', '"', "'", '=', 'é', '\t', 'x y', '\\r\\n', '/'),
  maxLength: 12,
});
const duration = fc.constantFrom(
  ' duration="0.1"',
  " duration='2'",
  ' duration=3',
  ' duration="abc"',
  ' duration="1_0"',
  ' duration=" 5 "',
  ' duration="inf"',
  ' duration="75"',
  '',
  ' wait="1"',
  ' duration="1e-5"',
);
const keystrokes = fc
  .tuple(duration, fc.constantFrom('ls -la\n', 'cd x', 'echo &amp;\n', '', 'a\nb\n'))
  .map(([attr, keys]) => `<keystrokes${attr}>${keys}</keystrokes>`);
const section = (name: string) =>
  fc.oneof(
    text.map((t) => `<${name}>${t}</${name}>`),
    fc.constant(`<${name}/>`),
    fc.constant(`<${name}></${name}>`),
  );
const xmlReply = fc
  .record({
    before: fc.constantFrom('', 'Sure!\n', '  '),
    analysis: fc.option(section('analysis'), { nil: undefined }),
    plan: fc.option(section('plan'), { nil: undefined }),
    commands: fc.option(
      fc.array(keystrokes, { maxLength: 3 }).map((k) => `<commands>\n${k.join('\n')}\n</commands>`),
      { nil: undefined },
    ),
    complete: fc.constantFrom(
      '',
      '<task_complete>true</task_complete>',
      '<task_complete> TRUE </task_complete>',
      '<task_complete>false</task_complete>',
      '<task_complete/>',
    ),
    extra: fc.constantFrom('', '<note>x</note>', '<plan>again</plan>', '<?pi?>', '<!-- c -->'),
    swap: fc.boolean(),
    close: fc.constantFrom('</response>', '', '</response>\n<response></response>'),
    after: fc.constantFrom('', ' bye', '\n'),
  })
  // Harbor lists missing sections from a Python set (hash-seed order): keep at most one missing.
  .filter((r) => [r.analysis, r.plan, r.commands].filter((s) => s === undefined).length <= 1)
  .map((r) => {
    const parts = [r.analysis, r.plan, r.commands].filter((s): s is string => s !== undefined);
    if (r.swap) parts.reverse();
    return `${r.before}<response>\n${parts.join('\n')}\n${r.extra}${r.complete}\n${r.close}${r.after}`;
  });

const jsonValue = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.integer(),
  fc.constantFrom(true, false, null, 0.5, 'true', 'yes', '0', [], {}),
);
const commandFields = {
  keystrokes: fc.oneof(
    { arbitrary: fc.constantFrom('ls\n', 'cd x', ''), weight: 8 },
    { arbitrary: fc.integer(), weight: 1 },
  ),
  duration: fc.oneof(
    { arbitrary: fc.constantFrom(0.1, 1, 75, 60, true, '2', 1e-5, null), weight: 6 },
    { arbitrary: fc.double({ noNaN: true }), weight: 2 },
  ),
  extra: fc.constant(1),
};
const command = fc.oneof(
  { arbitrary: fc.record(commandFields, { requiredKeys: ['keystrokes', 'duration'] }), weight: 4 },
  { arbitrary: fc.record(commandFields, { requiredKeys: [] }), weight: 1 },
);
const jsonObject = fc
  .record(
    {
      analysis: jsonValue,
      plan: jsonValue,
      commands: fc.oneof(
        {
          arbitrary: fc.array(
            fc.oneof({ arbitrary: command, weight: 6 }, { arbitrary: jsonValue, weight: 1 }),
            { maxLength: 3 },
          ),
          weight: 6,
        },
        { arbitrary: jsonValue, weight: 1 },
      ),
      task_complete: jsonValue,
    },
    { requiredKeys: ['commands'] },
  )
  .chain((o) =>
    fc
      .shuffledSubarray(Object.keys(o), { minLength: Object.keys(o).length })
      .map((keys) => Object.fromEntries(keys.map((k) => [k, (o as Record<string, unknown>)[k]]))),
  );
const jsonReply = fc
  .tuple(
    jsonObject,
    fc.constantFrom(0, 2),
    fc.constantFrom('', 'Here:\n', '```json\n'),
    fc.constantFrom('', '\n```', ' done'),
    fc.nat(),
    fc.constantFrom('none', 'none', 'none', 'none', 'truncate', 'comma', 'quote', 'brace'),
  )
  .map(([object, indent, before, after, cut, mutation]) => {
    let body = JSON.stringify(object, null, indent);
    if (mutation === 'truncate') body = body.slice(0, cut % (body.length + 1));
    if (mutation === 'comma') body = body.replace(/(\S)(\s*)\}$/, '$1,$2}');
    if (mutation === 'quote') body = body.replace('"', "'");
    if (mutation === 'brace') body = `${body}}`;
    return `${before}${body}${after}`;
  });
const jsonish = fc.string({
  unit: fc.constantFrom(
    '{',
    '}',
    '[',
    ']',
    '"',
    ':',
    ',',
    ' ',
    '\n',
    '\r',
    '\t',
    '1',
    '0',
    '-',
    '.',
    'e',
    '\\',
    'u',
    'a',
    'n',
    'N',
    'true',
    'Infinity',
    '\u0001',
    '😀',
    'd83d',
  ),
  maxLength: 20,
});

describe.skipIf(missing.length > 0)(
  `the parsers against Harbor's own (${missing.length > 0 ? `skipped: ${missing.join('; ')}` : 'python oracle'})`,
  () => {
    it('agree on commands, durations, task_complete, error and warning texts for generated replies', () => {
      const seed = Date.now() % 1_000_000;
      const items: OracleItem[] = [
        ...fc.sample(xmlReply, { seed, numRuns: 300 }).map((text) => ({ parser: 'xml' as const, text })),
        ...fc.sample(jsonReply, { seed, numRuns: 300 }).map((text) => ({ parser: 'json' as const, text })),
        ...fc.sample(jsonish, { seed, numRuns: 400 }).map((text) => ({ parser: 'loads' as const, text })),
      ];
      const expected = oracle(items);
      items.forEach((item, i) => {
        expect(ours(item), `seed ${seed}, ${item.parser} input ${JSON.stringify(item.text)}`).toEqual(
          expected[i],
        );
      });
    }, 60_000);
  },
);
