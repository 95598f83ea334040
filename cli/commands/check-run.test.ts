import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureIo } from '../io.ts';
import { main } from '../main.ts';

// Usage errors of `harness check-run`: decided from the folder's names before any Python starts.
describe('harness check-run usage', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'check-run-usage-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const EXPECTED =
    /expected a Miles --dump-details folder: rollout_data\/<step>\.pt, train_data\/<step>_<rank>\.pt/;

  it('an empty folder, a foreign one, a missing one and a file are exit 2 naming what was expected', async () => {
    const empty = join(dir, 'empty');
    await mkdir(empty);
    const foreign = join(dir, 'foreign');
    await mkdir(join(foreign, 'rollout_data'), { recursive: true });
    await writeFile(join(foreign, 'rollout_data', 'notes.txt'), 'x');
    const file = join(dir, 'file.pt');
    await writeFile(file, 'x');
    const cases: [string, RegExp][] = [
      [empty, /has none of rollout_data\/, train_data\/, trajectory\//],
      [foreign, /has rollout_data\/ but no step file in them/],
      [join(dir, 'nowhere'), /no such file or directory/],
      [file, /is not a folder/],
    ];
    for (const [folder, reason] of cases) {
      const io = captureIo({}, { cwd: dir });
      expect(await main(['check-run', folder], io), folder).toBe(2);
      expect(io.err()).toMatch(reason);
      expect(io.err()).toMatch(EXPECTED);
    }
  });

  it('no DIR, or two, is exit 2', async () => {
    for (const argv of [['check-run'], ['check-run', 'a', 'b']]) {
      const io = captureIo({}, { cwd: dir });
      expect(await main(argv, io)).toBe(2);
      expect(io.err()).toContain('expected one DIR');
    }
  });
});
