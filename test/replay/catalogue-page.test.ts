import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { Tokenizer as RustTokenizer } from 'tokenizers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureIo } from '../../cli/io.ts';
import { main } from '../../cli/main.ts';
import { parseJson } from '../../common/python-json/loads.ts';
import type { FaultScenario, HarnessRowVerdict } from '../../contracts/fault-scenario.ts';
import { MILES_PROFILE_NAMES } from '../../contracts/miles-profile.ts';
import { qwen3Tokenizer, qwen3TokenizerPath } from '../../fakes/tokenizer/qwen3-tokenizer.ts';
import { CATALOGUE_DIR, catalogueFiles, readCatalogue } from '../../replay/faults/catalogue.ts';
import { renderCatalogueHtml } from '../../replay/report/catalogue-html.ts';
import { launchChromium } from '../helpers/chromium.ts';

/**
 * `harness catalogue --html` (docs/field-failures.md "The HTML page"): the whole catalogue and one row
 * whose title, fault and emitted ids carry `<script>`, played once through the CLI, the page opened in
 * headless Chromium and read through the DOM. Verdict cells against the same run's JSON and the rows'
 * recorded Miles verdicts; every id's text against HF's Rust tokenizer (the npm `tokenizers` package)
 * decoding it alone, with whitespace shown as the docs say; added tokens against the tokenizer file.
 */

const SCRIPT = '<script>alert("x")</script>';
/** Whitespace signs, as docs/field-failures.md states them. */
const SIGNS: Record<string, string> = { '\n': '¶', '\r': '¤', '\t': '»', ' ': '·' };
const visible = (text: string) => text.replace(/[\n\r\t ]/g, (ch) => SIGNS[ch]!);

const rows = await readCatalogue(await catalogueFiles());
let dir: string;
let rust: RustTokenizer;
let run: { code: number; out: string; err: string };
let json: { rows: Array<{ id: string; profile: string; harness: HarnessRowVerdict }> };
let browser: Browser | undefined;
let page: Page;

/** The endoftext row with markup in its title and fault, and a first reply whose ids spell a script tag. */
async function scriptRow(): Promise<string> {
  const row = parseJson(
    await readFile(join(CATALOGUE_DIR, 'endoftext-turn-end.json'), 'utf8'),
  ) as FaultScenario;
  const encoding = await rust.encode(`I will ${SCRIPT} run`, null, { addSpecialTokens: false });
  const reply = row.rollouts[0]!.turns[0]!.response as { completion_ids: number[] };
  reply.completion_ids = [...encoding.getIds(), 151643];
  const edited = { ...row, id: 'script-row', title: `title ${SCRIPT}`, fault: `fault ${SCRIPT}` };
  delete (edited as { recorded?: unknown }).recorded;
  const file = join(dir, 'script-row.json');
  await writeFile(file, JSON.stringify(edited));
  return file;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'catalogue-page-'));
  rust = RustTokenizer.fromFile(qwen3TokenizerPath());
  const files = [...rows.map((r) => r.file), await scriptRow()];
  const io = captureIo({}, { cwd: dir });
  const code = await main(['catalogue', '--json', '--html', 'out/catalogue.html', ...files], io);
  run = { code, out: io.out(), err: io.err() };
  json = parseJson(run.out) as typeof json;
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('dialog', () => {
    throw new Error('a dialog opened: a script ran');
  });
  await page.goto(`file://${join(dir, 'out/catalogue.html')}`);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the catalogue page', () => {
  it('has one section per row, in the order played, the table still on stdout', async () => {
    expect(run.code, run.err).toBe(0);
    const ids = await page
      .locator('section.row')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-row')));
    expect(ids).toEqual([...rows.map((r) => r.scenario.id), 'script-row']);
    expect(json.rows.map((r) => `${r.profile} ${r.id}`)).toEqual(
      MILES_PROFILE_NAMES.flatMap((p) => ids.map((id) => `${p} ${id}`)),
    );
  });

  it("shows each profile's harness outcome and every check's verdict as the run gave them", async () => {
    for (const r of json.rows) {
      const tr = page.locator(`section[data-row="${r.id}"] tr[data-profile="${r.profile}"]`);
      expect(await tr.locator('td.harness').getAttribute('data-outcome'), `${r.id} ${r.profile}`).toBe(
        r.harness.outcome,
      );
      const checks = await tr
        .locator('span.check')
        .evaluateAll((els) => els.map((e) => [e.getAttribute('data-check'), e.getAttribute('data-verdict')]));
      expect(checks, `${r.id} ${r.profile}`).toEqual(Object.entries(r.harness.checks));
    }
  });

  it("shows Miles' verdict where the row recorded one, else not run and why, and whether they agree", async () => {
    for (const { scenario } of rows)
      for (const profile of MILES_PROFILE_NAMES) {
        const tr = page.locator(`section[data-row="${scenario.id}"] tr[data-profile="${profile}"]`);
        const recorded = scenario.recorded?.miles[profile] !== undefined;
        const miles = tr.locator('td.miles');
        expect(await miles.getAttribute('data-miles'), `${scenario.id} ${profile}`).toBe(
          recorded ? 'recorded' : 'not_run',
        );
        if (!recorded) expect(await miles.textContent()).toContain('not run: no --miles-root given');
        // docs/field-failures.md: the harness agrees with Miles on every row Miles' code played.
        expect(await tr.locator('td.agree').getAttribute('data-agree'), `${scenario.id} ${profile}`).toBe(
          recorded ? 'yes' : 'unknown',
        );
      }
  });

  it("decodes every id as HF's Rust tokenizer does, whitespace visible, added and special tokens marked", async () => {
    const tokens = await page
      .locator('.tok[data-id]')
      .evaluateAll((els) => els.map((e) => [Number(e.getAttribute('data-id')), e.textContent, e.className]));
    expect(tokens.length).toBeGreaterThan(500);
    const ids = [...new Set(tokens.map(([id]) => id as number))];
    const texts = await rust.decodeBatch(
      ids.map((id) => [id]),
      false,
    );
    const expected = new Map(ids.map((id, k) => [id, visible(texts[k]!)]));
    const file = parseJson(await readFile(qwen3TokenizerPath(), 'utf8')) as {
      added_tokens: Array<{ id: number; special: boolean }>;
    };
    const added = new Set(file.added_tokens.map((t) => t.id));
    const special = new Set(file.added_tokens.filter((t) => t.special).map((t) => t.id));
    for (const [id, text, classes] of tokens) {
      expect(text, `id ${id}`).toBe(expected.get(id as number));
      const marks = String(classes).split(' ');
      expect(marks.includes('added'), `id ${id}`).toBe(added.has(id as number));
      expect(marks.includes('special'), `id ${id}`).toBe(special.has(id as number));
    }
    // Both kinds occur: <think> is added but not special, <|im_end|> both.
    expect(tokens.some(([id]) => id === 151667) && tokens.some(([id]) => id === 151645)).toBe(true);
  });

  it('highlights the fault ids inside each window, <|endoftext|> where the render has <|im_end|>', async () => {
    const sites = await page.locator('.site').evaluateAll((els) =>
      els.map((e) => ({
        start: Number(e.getAttribute('data-start')),
        end: Number(e.getAttribute('data-end')),
        fault: [...e.querySelectorAll('.line.actual .tok.fault')].map((t) =>
          Number(t.getAttribute('data-pos')),
        ),
      })),
    );
    expect(sites.length).toBeGreaterThan(20);
    for (const s of sites) {
      expect(s.fault.every((p) => p >= s.start && p < s.end)).toBe(true);
      expect(s.fault.length).toBe(Math.min(s.end - s.start, 24));
    }
    const first = page.locator('section[data-row="endoftext-turn-end"] .site').first();
    const fault = first.locator('.line.actual .tok.fault');
    expect(await fault.evaluateAll((els) => els.map((e) => e.getAttribute('data-id')))).toEqual(['151643']);
    const render = first.locator('.line.expected .tok.fault');
    expect(await render.evaluateAll((els) => els.map((e) => e.getAttribute('data-id')))).toEqual(['151645']);
    // A row whose fault is not in the ids says so instead of a window.
    const dropped = page.locator('section[data-row="infra-abort-group-dropped"]');
    expect(await dropped.locator('.site').count()).toBe(0);
    expect(await dropped.locator('.no-window').textContent()).toContain('(503)');
  });

  it('escapes every text: markup in a title, a fault and decoded ids stays text', async () => {
    expect(await page.locator('script').count()).toBe(0);
    const row = page.locator('section[data-row="script-row"]');
    expect(await row.locator('.meta').first().textContent()).toContain(`title ${SCRIPT}`);
    expect(await row.locator('p.fault').textContent()).toBe(`fault ${SCRIPT}`);
    const emitted = await row
      .locator('.site')
      .first()
      .locator('.line.actual .tok')
      .evaluateAll((els) => els.map((e) => e.textContent).join(''));
    expect(emitted).toContain('<script>alert("x")</');
    // Self-contained: no external resource, links only to the upstream trackers.
    const hrefs = await page.locator('a[href]').evaluateAll((els) => els.map((e) => e.getAttribute('href')));
    expect(hrefs.every((h) => h!.startsWith('https://github.com/'))).toBe(true);
    expect(await page.locator('link, img, iframe, [src]').count()).toBe(0);
  });
  it('shows a Miles verdict this run gave, and names what differs when the harness and Miles disagree', async () => {
    // As a --miles-root run on a 31f1ca96 checkout gives it: Miles' verdict fresh under that profile only.
    const row = rows.find((r) => r.scenario.id === 'endoftext-turn-end')!;
    const recorded = row.scenario.recorded!;
    const miles = recorded.miles['31f1ca96']!;
    const harness = recorded.harness['31f1ca96']!;
    const differing = {
      ...miles,
      turn_statuses: [
        [200, 400],
        [200, 200],
      ],
      fake_agrees: false,
      differences: ['rollout 0: chat 1'],
    };
    const html = renderCatalogueHtml({
      rows: [row, { ...row, scenario: { ...row.scenario, id: 'differing' } }],
      results: [
        { id: 'endoftext-turn-end', profile: '31f1ca96', harness, miles },
        { id: 'differing', profile: '31f1ca96', harness, miles: differing },
      ],
      comparisons: [],
      milesNotRun: null,
      decoder: qwen3Tokenizer(),
    });
    const own = await browser!.newPage();
    await own.setContent(html);
    const cell = (id: string, profile: string, td: string) =>
      own.locator(`section[data-row="${id}"] tr[data-profile="${profile}"] td.${td}`);
    expect(await cell('endoftext-turn-end', '31f1ca96', 'miles').getAttribute('data-miles')).toBe('run');
    expect(await cell('endoftext-turn-end', '31f1ca96', 'miles').textContent()).toContain('this run');
    expect(await cell('endoftext-turn-end', '31f1ca96', 'agree').getAttribute('data-agree')).toBe('yes');
    // The other profile was not played: the harness's recorded verdict, Miles' recorded one or why not.
    expect(await cell('endoftext-turn-end', '4d412b5a', 'harness').textContent()).toContain('recorded');
    const other = cell('endoftext-turn-end', '4d412b5a', 'miles');
    if (recorded.miles['4d412b5a'] === undefined)
      expect(await other.textContent()).toContain(
        'not run: the checkout plays its own profile, not 4d412b5a',
      );
    else expect(await other.getAttribute('data-miles')).toBe('recorded');
    const agree = cell('differing', '31f1ca96', 'agree');
    expect(await agree.getAttribute('data-agree')).toBe('no');
    expect(await agree.textContent()).toBe('no: fake answered differently: rollout 0: chat 1; turn statuses');
  });
});
