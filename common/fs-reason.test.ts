import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fsReason } from './fs-reason.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fs-reason-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const failure = (path: string) =>
  readFile(path, 'utf8').then(
    () => expect.unreachable(`${path} was readable`),
    (error: unknown) => error,
  );

describe('fsReason', () => {
  it('says why a real read failed: a directory, a missing file, a file used as a folder', async () => {
    expect(fsReason(await failure(dir))).toBe('is a directory');
    expect(fsReason(await failure(join(dir, 'missing.json')))).toBe('no such file or directory');
    expect(fsReason(await failure(join(import.meta.filename, 'x')))).toBe(
      'a parent of it is not a directory',
    );
  });

  it('falls back to the code, then the message', () => {
    expect(fsReason(Object.assign(new Error('boom'), { code: 'EMFILE' }))).toBe('EMFILE');
    expect(fsReason(new Error('boom'))).toBe('boom');
  });
});
