import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parseJson } from '../../common/python-json/loads.ts';
import type { FaultScenario } from '../../contracts/fault-scenario.ts';
import type { RowResult } from './run-catalogue.ts';
import { readFaultScenario } from './scenario-file.ts';

/** The catalogue's rows on disk (fixtures/field-failures/) and their recorded verdicts. */

export const CATALOGUE_DIR = new URL('../../fixtures/field-failures/', import.meta.url).pathname;

export interface CatalogueRow {
  readonly file: string;
  readonly scenario: FaultScenario;
}

export async function catalogueFiles(dir: string = CATALOGUE_DIR): Promise<string[]> {
  const names = await readdir(dir);
  return names
    .filter((n) => n.endsWith('.json'))
    .sort()
    .map((n) => join(dir, n));
}

export async function readCatalogue(files: readonly string[]): Promise<CatalogueRow[]> {
  const rows: CatalogueRow[] = [];
  for (const file of files) rows.push({ file, scenario: await readFaultScenario(file) });
  return rows;
}

/** How a row's fresh verdicts under one profile compare with what it recorded under that profile. */
export interface RowComparison {
  readonly id: string;
  readonly profile: string;
  /** `same`, `differs`, or `unrecorded` (nothing recorded for that side yet). */
  readonly harness: 'same' | 'differs' | 'unrecorded';
  readonly miles: 'same' | 'differs' | 'unrecorded' | 'not_run';
}

export function compareWithRecorded(row: CatalogueRow, result: RowResult): RowComparison {
  const recorded = row.scenario.recorded;
  const harnessRecorded = recorded?.harness[result.profile];
  const harness =
    harnessRecorded === undefined
      ? 'unrecorded'
      : isDeepStrictEqual(harnessRecorded, result.harness)
        ? 'same'
        : 'differs';
  const milesRecorded = recorded?.miles[result.profile];
  const miles =
    result.miles === null
      ? 'not_run'
      : milesRecorded === undefined
        ? 'unrecorded'
        : isDeepStrictEqual(milesRecorded, result.miles)
          ? 'same'
          : 'differs';
  return { id: result.id, profile: result.profile, harness, miles };
}

/** Writes the fresh verdicts into the row's file under the profile's name: the harness's, and Miles' when run. */
export async function recordVerdicts(row: CatalogueRow, result: RowResult): Promise<void> {
  const raw = parseJson(await readFile(row.file, 'utf8')) as Record<string, unknown>;
  const before = (raw.recorded ?? { harness: {}, miles: {} }) as {
    harness: Record<string, unknown>;
    miles: Record<string, unknown>;
  };
  raw.recorded = {
    harness: { ...before.harness, [result.profile]: result.harness },
    miles: result.miles === null ? before.miles : { ...before.miles, [result.profile]: result.miles },
  };
  await writeFile(row.file, `${JSON.stringify(raw, null, 1)}\n`);
}
