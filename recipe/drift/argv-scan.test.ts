import { describe, expect, it } from 'vitest';
import { scanArgv } from './argv-scan.ts';

/** argparse's token classes (`ArgumentParser._parse_optional`), as the checker and the diff read them. */
describe('scanArgv', () => {
  const known = (name: string) => ['--lr', '--a=b'].includes(name);

  it('splits --name=value for known and unknown long names, and keeps a short -x=v whole', () => {
    expect(scanArgv(['--lr=1e-6', '--foo=bar=baz', '-x=5'], known)).toEqual({
      leading: [],
      options: [
        { name: '--lr', explicit: '1e-6', values: [], index: 0 },
        { name: '--foo', explicit: 'bar=baz', values: [], index: 1 },
        { name: '-x=5', values: [], index: 2 },
      ],
    });
  });

  it('takes a known name containing = as written', () => {
    expect(scanArgv(['--a=b', 'v'], known).options).toEqual([{ name: '--a=b', values: ['v'], index: 0 }]);
  });

  it('reads -, negative numbers and tokens with spaces as values; values before any flag as leading', () => {
    expect(scanArgv(['x', '-', '--lr', '-5', '-.5', '-1.5', '-a b', '-1e-6'], known)).toEqual({
      leading: [
        { token: 'x', index: 0 },
        { token: '-', index: 1 },
      ],
      options: [
        { name: '--lr', values: ['-5', '-.5', '-1.5', '-a b'], index: 2 },
        { name: '-1e-6', values: [], index: 7 },
      ],
    });
  });

  it('treats every name as unknown by default and stops at --', () => {
    expect(scanArgv(['--lr=1', '--x', 'a', '--', '--lr', 'b'])).toEqual({
      leading: [],
      options: [
        { name: '--lr', explicit: '1', values: [], index: 0 },
        { name: '--x', values: ['a'], index: 1 },
      ],
      afterTerminator: { index: 3, tokens: ['--lr', 'b'] },
    });
  });
});
