import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { HarnessError } from '../../common/errors.ts';
import { fsReason } from '../../common/fs-reason.ts';
import { parseJson } from '../../common/python-json/loads.ts';

/** The bundled prompts: the 89 Terminal-Bench 2 tasks (fixtures/tb2-tasks.txt) in the recipe's format. */
export const DEFAULT_PROMPTS_FILE = fileURLToPath(
  new URL('../../fixtures/prompts/tb2-89.jsonl', import.meta.url),
);

/**
 * One prompt row in the recipe's format (`--input-key prompt --metadata-key metadata`), shaped like
 * Miles' converted Terminal-Bench data (docs/replay.md "Prompts"): the task as prompt, and metadata naming
 * the Harbor task dir and the agent. Extra metadata keys pass through to the `/run` body.
 */
export const PromptRowSchema = z.object({
  prompt: z.union([z.string(), z.array(z.record(z.string(), z.unknown()))]),
  metadata: z
    .object({
      instance_id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'must be a Harbor task dir name'),
      agent_name: z.string().min(1),
    })
    .catchall(z.unknown()),
});
export type PromptRow = z.infer<typeof PromptRowSchema>;

/** Parses prompt JSONL text; blank lines are skipped, anything else malformed is a config error. */
export function parsePrompts(text: string, source: string): PromptRow[] {
  const rows: PromptRow[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = parseJson(line);
    } catch {
      throw new HarnessError('config.prompts_invalid', `${source}:${i + 1}: not valid JSON`, {
        details: { source, line: i + 1 },
      });
    }
    const parsed = PromptRowSchema.safeParse(value);
    if (!parsed.success)
      throw new HarnessError(
        'config.prompts_invalid',
        `${source}:${i + 1}: ${parsed.error.issues.map((e) => `${e.path.join('.') || '(row)'} ${e.message}`).join('; ')}`,
        { details: { source, line: i + 1 } },
      );
    rows.push(parsed.data);
  });
  if (rows.length === 0)
    throw new HarnessError('config.prompts_empty', `${source} holds no prompts`, { details: { source } });
  return rows;
}

export async function loadPrompts(path: string): Promise<PromptRow[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new HarnessError(
      'config.prompts_unreadable',
      `prompts ${path}: ${fsReason(error)}; expected a JSONL file of prompt rows (docs/replay.md "Prompts")`,
      { details: { path }, cause: error },
    );
  }
  return parsePrompts(text, path);
}
