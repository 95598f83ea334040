import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { HarnessError } from '../../common/errors.ts';
import { fsReason } from '../../common/fs-reason.ts';
import { parseJson } from '../../common/python-json/loads.ts';
import { Surface } from './surface-schema.ts';

/** The surface copy the harness ships with (see fixtures/miles-cli/PROVENANCE.md). */
export const DEFAULT_SURFACE_PATH = fileURLToPath(
  new URL('../../fixtures/miles-cli/miles-cli-surface.json', import.meta.url),
);

/** Parses an already-read surface document; `label` names it in errors. */
export function parseSurface(document: unknown, label: string): Surface {
  const result = Surface.safeParse(document);
  if (!result.success) {
    const summary = z.prettifyError(result.error);
    // The first few issues are enough to see what is wrong; a wrong file can have thousands.
    const head = summary.split('\n').slice(0, 6).join('\n');
    throw new HarnessError('config.surface_invalid', `${label} is not a miles-cli-surface/1 file:\n${head}`, {
      details: { path: label, issues: result.error.issues.slice(0, 20) },
    });
  }
  return result.data;
}

const cache = new Map<string, Promise<Surface>>();

/**
 * Reads and validates a surface file. Results are cached per path: the file is 800 KB and checks
 * (and property tests) load it many times.
 */
export function loadSurface(path: string = DEFAULT_SURFACE_PATH): Promise<Surface> {
  let pending = cache.get(path);
  if (!pending) {
    pending = readSurface(path);
    cache.set(path, pending);
    pending.catch(() => cache.delete(path));
  }
  return pending;
}

async function readSurface(path: string): Promise<Surface> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new HarnessError(
      'config.surface_unreadable',
      `surface file ${path}: ${fsReason(error)}; expected a miles-cli-surface/1 JSON file`,
      {
        details: { path },
        cause: error,
      },
    );
  }
  let document: unknown;
  try {
    document = parseJson(text);
  } catch (error) {
    throw new HarnessError('config.surface_invalid', `${path} is not JSON`, {
      details: { path },
      cause: error,
    });
  }
  return parseSurface(document, path);
}
