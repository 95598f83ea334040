import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseJson } from '../../common/python-json/loads.ts';
import { CATALOGUE_DIR } from '../../replay/faults/catalogue.ts';
import { captureIo } from '../io.ts';
import { main } from '../main.ts';

/**
 * `harness catalogue`'s exit codes (docs/field-failures.md): 0 when a row's verdicts are as recorded, 1 when
 * they differ from the record, 2 for a scenario its tokenizer cannot play (before anything runs).
 */

const dir = await mkdtemp(join(tmpdir(), 'catalogue-cli-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

async function variant(name: string, edit: (row: Record<string, unknown>) => void): Promise<string> {
  const row = parseJson(await readFile(join(CATALOGUE_DIR, 'endoftext-turn-end.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  edit(row);
  const file = join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify(row));
  return file;
}

async function run(file: string, ...flags: string[]) {
  const io = captureIo({});
  const code = await main(['catalogue', '--json', ...flags, file], io);
  return { code, out: io.out(), err: io.err() };
}

describe('harness catalogue', () => {
  it('exits 0 on a row as recorded under every profile and 1 when its record says otherwise', async () => {
    const same = await run(await variant('same', () => undefined));
    expect(same.code).toBe(0);
    const report = parseJson(same.out) as {
      rows: Array<{ id: string; profile: string }>;
      totals: Record<string, Record<string, number>>;
    };
    expect(report.rows.map((r) => r.profile)).toEqual(['31f1ca96', '4d412b5a']);
    for (const profile of ['31f1ca96', '4d412b5a'])
      expect(report.totals[profile]).toMatchObject({
        rows: 1,
        caught: 1,
        not_caught: 0,
        differ_from_record: 0,
        miles_run: 0,
      });
    const tampered = await variant('tampered', (row) => {
      const recorded = row.recorded as { harness: Record<string, { checks: Record<string, string> }> };
      recorded.harness['4d412b5a']!.checks.tito_session_consistent = 'pass';
    });
    expect((await run(tampered)).code).toBe(1);
    // Each profile is compared with its own record: the other profile's run is as recorded.
    const other = await run(tampered, '--miles-profile', '31f1ca96');
    expect(other.code).toBe(0);
    expect(Object.keys((parseJson(other.out) as { totals: object }).totals)).toEqual(['31f1ca96']);
    expect((await run(tampered, '--miles-profile', '4d412b5a')).code).toBe(1);
  });

  it('refuses an unknown --miles-profile, naming the known ones (exit 2)', async () => {
    const unknown = await run(await variant('unknown', () => undefined), '--miles-profile', 'nope');
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain("unknown profile 'nope'; known: 31f1ca96, 4d412b5a");
  });

  it('refuses a fault the toy ids cannot express before playing anything', async () => {
    const toy = await run(await variant('toy', (row) => Object.assign(row, { tokenizer: 'toy' })));
    expect(toy.code).toBe(2);
    expect(toy.err).toContain(
      'refused: fault endoftext_turn_end cannot be expressed on toy ids: the toy tokenizer has one end token and no <|endoftext|>',
    );
  });
  it('refuses an --html path that is a directory before playing anything (exit 2)', async () => {
    const folder = join(dir, 'a-folder.html');
    await mkdir(folder);
    const refused = await run(await variant('html-dir', () => undefined), '--html', folder);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain(`--html ${folder}: is a directory; expected a writable file path`);
    expect(refused.out).toBe('');
  });

  it('prints its report when the page cannot be written after the rows ran, then exits 2 naming --html', async () => {
    // Passes the check before the run (its folder exists and is writable) but cannot be written: a link
    // to a file in a folder that does not exist.
    const link = join(dir, 'dangling.html');
    await symlink(join(dir, 'no-such-folder', 'page.html'), link);
    const lost = await run(await variant('html-dangling', () => undefined), '--html', link);
    expect(lost.code).toBe(2);
    expect(lost.err).toContain(`--html ${link}: cannot write it (ENOENT); expected a writable file path`);
    const report = parseJson(lost.out) as { rows: Array<{ id: string }> };
    expect(report.rows.map((r) => r.id)).toEqual(['endoftext-turn-end', 'endoftext-turn-end']);
  });
});
