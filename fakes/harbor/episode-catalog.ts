import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { HarnessError } from '../../common/errors.ts';
import { fsReason } from '../../common/fs-reason.ts';
import { parseJson } from '../../common/python-json/loads.ts';
import { type EpisodeScript, EpisodeScriptSchema } from './episode-schema.ts';

/** The bundled scripts: fixtures/episodes/*.json and the pool under fixtures/episodes/pool/. */
export const DEFAULT_EPISODES_DIR = fileURLToPath(new URL('../../fixtures/episodes/', import.meta.url));

/** The 89 Terminal-Bench 2 task names (as in fixtures/tb2-tasks.txt). */
export const TB2_TASKS_FILE = fileURLToPath(new URL('../../fixtures/tb2-tasks.txt', import.meta.url));

export async function readTb2Tasks(file = TB2_TASKS_FILE): Promise<string[]> {
  const text = await readFile(file, 'utf8');
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

async function listJsonFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.json'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/** Parses one script; a bad file is a configuration error naming the file and the zod issues. */
export function parseEpisodeScript(value: unknown, source: string): EpisodeScript {
  const parsed = EpisodeScriptSchema.safeParse(value);
  if (!parsed.success)
    throw new HarnessError(
      'config.episode_invalid',
      `episode script ${source} is invalid:\n${z.prettifyError(parsed.error)}`,
      {
        details: { source, issues: parsed.error.issues },
      },
    );
  return parsed.data;
}

/** Loads every `*.json` under `dir` (recursively, in path order). Instance ids must be unique. */
export async function loadEpisodeScripts(dir: string = DEFAULT_EPISODES_DIR): Promise<EpisodeScript[]> {
  let files: string[];
  try {
    files = await listJsonFiles(dir);
  } catch (error) {
    throw new HarnessError(
      'config.episodes_dir',
      `episodes ${dir}: ${fsReason(error)}; expected a folder of episode scripts (*.json)`,
      { details: { dir }, cause: error },
    );
  }
  if (files.length === 0)
    throw new HarnessError(
      'config.episodes_empty',
      `episodes ${dir}: no episode scripts (*.json) in it; expected a folder of episode scripts (docs/episodes.md)`,
    );
  const scripts: EpisodeScript[] = [];
  for (const file of files) {
    const name = relative(dir, file);
    let value: unknown;
    try {
      value = parseJson(await readFile(file, 'utf8'));
    } catch (error) {
      throw new HarnessError('config.episode_invalid', `episode script ${name} is not valid JSON`, {
        details: { source: name },
        cause: error,
      });
    }
    scripts.push(parseEpisodeScript(value, name));
  }
  return scripts;
}

/** FNV-1a (32-bit) over the UTF-8 bytes: stable across runs, platforms and Node versions. */
export function stableHash(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/**
 * Maps an instance id to its script: the script whose `instance_id` equals it, else the pool entry at
 * `stableHash(id) mod pool size` (pool sorted by instance id). Without pool scripts every script is
 * in the pool. Any id that passes validation therefore has an episode, all 89 TB2 names included.
 */
export class EpisodeCatalog {
  readonly scripts: readonly EpisodeScript[];
  readonly pool: readonly EpisodeScript[];
  private readonly byId: ReadonlyMap<string, EpisodeScript>;

  constructor(scripts: readonly EpisodeScript[]) {
    if (scripts.length === 0)
      throw new HarnessError('config.episodes_empty', 'no episode scripts were given');
    const byId = new Map<string, EpisodeScript>();
    for (const script of scripts) {
      if (byId.has(script.instance_id))
        throw new HarnessError(
          'config.episode_duplicate',
          `two episode scripts use instance_id ${script.instance_id}`,
          {
            details: { instance_id: script.instance_id },
          },
        );
      byId.set(script.instance_id, script);
    }
    this.byId = byId;
    this.scripts = scripts;
    const pool = scripts.filter((s) => s.pool);
    this.pool = [...(pool.length > 0 ? pool : scripts)].sort((a, b) =>
      a.instance_id.localeCompare(b.instance_id),
    );
  }

  pick(instanceId: string): EpisodeScript {
    const exact = this.byId.get(instanceId);
    if (exact) return exact;
    return this.pool[stableHash(instanceId) % this.pool.length] as EpisodeScript;
  }
}
