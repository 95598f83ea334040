import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  commandHelp,
  flagHelp,
  parseArgsOptions,
  parseFlags,
  parseScriptFlags,
  repeatedFlag,
  switchFlag,
  valueFlag,
} from './cli-flags.ts';
import { isHarnessError } from './errors.ts';
import { wholeNumber } from './whole-number.ts';

const SPEC = {
  command: 'demo',
  about: 'A demo command.',
  trailing: 'episodes' as const,
  flags: {
    episodes: repeatedFlag('DIR', z.string().min(1), 'episode folders'),
    steps: valueFlag('K', wholeNumber('--steps', 1, 10).default(1), 'rollout steps'),
    json: switchFlag('print JSON'),
    'json-file': valueFlag('FILE', z.string().min(1).optional(), 'write JSON to FILE'),
  },
};

function sink() {
  let text = '';
  return { stdout: { write: (chunk: string) => (text += chunk) }, text: () => text };
}

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return isHarnessError(error) ? error.code : 'not a HarnessError';
  }
  return undefined;
}

describe('a flag declared once', () => {
  it('reads values under snake_case names, typed and defaulted by the schema', () => {
    const parsed = parseFlags(
      ['--steps', '3', '--json-file', 'r.json', '--episodes', 'a', 'b'],
      SPEC,
      sink(),
    );
    expect(parsed?.values).toEqual({ episodes: ['a', 'b'], steps: 3, json: false, json_file: 'r.json' });
    expect(parseFlags([], SPEC, sink())?.values).toEqual({ episodes: [], steps: 1, json: false });
  });

  it('takes the words after the trailing flag as its values, and refuses any other stray word', () => {
    expect(parseFlags(['--episodes', 'a', '--episodes', 'b', 'c'], SPEC, sink())?.values.episodes).toEqual([
      'a',
      'b',
      'c',
    ]);
    expect(codeOf(() => parseFlags(['--steps', '2', 'x'], SPEC, sink()))).toBe('usage.unexpected_argument');
    // A value after the --json switch was meant as a file: the same code, with its own message.
    expect(codeOf(() => parseFlags(['--json', 'out.json'], SPEC, sink()))).toBe('usage.unexpected_argument');
  });

  it('names the flag of a bad value and of an unknown option (exit 2)', () => {
    expect(codeOf(() => parseFlags(['--steps', '11'], SPEC, sink()))).toBe('usage.invalid_option_value');
    expect(codeOf(() => parseFlags(['--stepz', '1'], SPEC, sink()))).toBe('usage.unknown_option');
    try {
      parseFlags(['--steps', 'x'], SPEC, sink());
    } catch (error) {
      expect(isHarnessError(error) && error.details.option).toBe('--steps');
    }
  });

  it('--help prints the help generated from the same flags and parses nothing else', () => {
    const io = sink();
    expect(parseFlags(['--help', '--steps', 'not checked'], SPEC, io)).toBeUndefined();
    expect(io.text()).toBe(commandHelp(SPEC));
  });

  it('the parser, the schema and the help agree for any flag set', () => {
    const name = fc.stringMatching(/^[a-z]{1,6}(-[a-z]{1,6}){0,2}$/).filter((n) => n !== 'help');
    const flag = fc.constantFrom('switch', 'value', 'repeated');
    fc.assert(
      fc.property(fc.dictionary(name, flag, { minKeys: 1, maxKeys: 8 }), (kinds) => {
        const flags = Object.fromEntries(
          Object.entries(kinds).map(([n, kind]) => [
            n,
            kind === 'switch'
              ? switchFlag(`help of ${n}`)
              : kind === 'value'
                ? valueFlag('V', z.string().optional(), `help of ${n}`)
                : repeatedFlag('V', z.string(), `help of ${n}`),
          ]),
        );
        const options = parseArgsOptions(flags);
        expect(Object.keys(options).sort()).toEqual([...Object.keys(flags), 'help'].sort());
        const help = flagHelp(flags);
        for (const n of Object.keys(flags)) {
          // Each flag has exactly one line of its own in the help, with its text.
          const lines = help.split('\n').filter((l) => new RegExp(`^ {2}--${n}( V)? +help of ${n}$`).test(l));
          expect(lines).toHaveLength(1);
        }
        const argv = Object.entries(kinds).flatMap(([n, kind]) =>
          kind === 'switch' ? [`--${n}`] : [`--${n}`, 'v'],
        );
        const values = parseFlags(argv, { command: 'p', about: '', flags }, sink())!.values as Record<
          string,
          unknown
        >;
        for (const [n, kind] of Object.entries(kinds))
          expect(values[n.replaceAll('-', '_')]).toEqual(
            kind === 'switch' ? true : kind === 'value' ? 'v' : ['v'],
          );
      }),
    );
  });
});

describe('parseScriptFlags', () => {
  const spec = {
    command: 'probe',
    invocation: 'npm run probe --',
    flags: { count: valueFlag('N', z.coerce.number().int().positive().default(3), 'how many') },
    about: 'A script.',
  };
  const io = () => {
    const out = { stdout: '', stderr: '' };
    return {
      out,
      io: {
        stdout: { write: (c: string) => (out.stdout += c) },
        stderr: { write: (c: string) => (out.stderr += c) },
      },
    };
  };

  it('gives the values, 0 after the help, and 2 with the error line for a usage error', () => {
    const ok = io();
    expect(parseScriptFlags(['--count', '5'], spec, ok.io)).toEqual({ count: 5 });
    expect(ok.out).toEqual({ stdout: '', stderr: '' });
    const help = io();
    expect(parseScriptFlags(['--help'], spec, help.io)).toBe(0);
    expect(help.out.stdout.startsWith('usage: npm run probe -- [--count N]')).toBe(true);
    const bad = io();
    expect(parseScriptFlags(['--count', '0'], spec, bad.io)).toBe(2);
    expect(bad.out.stderr.startsWith('[harness] probe: --count: ')).toBe(true);
    const stray = io();
    expect(parseScriptFlags(['extra'], spec, stray.io)).toBe(2);
    expect(stray.out.stderr).toContain('(npm run probe -- --help)');
  });
});
