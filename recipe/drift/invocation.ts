import { z } from 'zod';
import { HarnessError } from '../../common/errors.ts';
import { parseJson } from '../../common/python-json/loads.ts';
import { shellWords } from './shell-words.ts';

/** What a recipe hands to Miles: train.py's argv and the runtime env of the job. */
export const Invocation = z.object({
  argv: z.array(z.string().refine((s) => !s.includes('\0'), 'argv strings cannot contain NUL')),
  env: z.record(z.string(), z.string()),
});
export type Invocation = z.infer<typeof Invocation>;

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s;
const RUNTIME_ENV = '--runtime-env-json';

function isTrainScript(token: string): boolean {
  return token === 'train.py' || token.endsWith('/train.py');
}

/**
 * Finds train.py's arguments in a command's words. Leading `NAME=value` words are env. When a word
 * names `train.py` (`python3 /root/miles/train.py …`, or the `ray job submit … -- python3 train.py …`
 * that Miles' execute_train runs), the arguments are the words after it, and the `env_vars` of a
 * `--runtime-env-json` before it join the env. Otherwise every word is taken as an argument.
 */
export function trainInvocation(words: readonly string[]): Invocation {
  const env: Record<string, string> = {};
  let start = 0;
  for (; start < words.length; start++) {
    const match = ASSIGNMENT.exec(words[start] as string);
    if (!match) break;
    env[match[1] as string] = match[2] as string;
  }
  const script = words.findLastIndex((w, i) => i >= start && isTrainScript(w));
  if (script < 0) return { argv: words.slice(start), env };
  Object.assign(env, runtimeEnv(words.slice(start, script)));
  return { argv: words.slice(script + 1), env };
}

function runtimeEnv(launcher: readonly string[]): Record<string, string> {
  for (let i = 0; i < launcher.length; i++) {
    const word = launcher[i] as string;
    let json: string | undefined;
    if (word === RUNTIME_ENV) json = launcher[i + 1];
    else if (word.startsWith(`${RUNTIME_ENV}=`)) json = word.slice(RUNTIME_ENV.length + 1);
    if (json === undefined) continue;
    const parsed = z
      .object({ env_vars: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional() })
      .safeParse(safeJson(json));
    if (!parsed.success)
      throw new HarnessError(
        'usage.bad_runtime_env',
        `${RUNTIME_ENV} is not a JSON object with string env_vars`,
      );
    return Object.fromEntries(Object.entries(parsed.data.env_vars ?? {}).map(([k, v]) => [k, String(v)]));
  }
  return {};
}

function safeJson(text: string): unknown {
  try {
    return parseJson(text);
  } catch {
    return undefined;
  }
}

const JsonInvocation = z.union([
  z.array(z.string()),
  z.object({ argv: z.array(z.string()), env: z.record(z.string(), z.string()).default({}) }),
]);

/**
 * Reads a recipe from text: a JSON argv array, a JSON `{argv, env}` object, or one shell command
 * (parsed without running a shell; see `shellWords`). `label` names the input in errors.
 */
export function parseInvocationText(text: string, label: string): Invocation {
  const trimmed = text.trim();
  if (trimmed === '') throw new HarnessError('usage.empty_recipe', `${label} is empty`);
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) {
    let document: unknown;
    try {
      document = parseJson(trimmed);
    } catch (error) {
      throw new HarnessError(
        'usage.bad_json',
        `${label} looks like JSON but does not parse: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    const parsed = JsonInvocation.safeParse(document);
    if (!parsed.success)
      throw new HarnessError(
        'usage.bad_json',
        `${label} must be a JSON array of strings or an object {"argv": [...], "env": {...}}: ${z.prettifyError(parsed.error)}`,
      );
    const value = parsed.data;
    if (Array.isArray(value)) return checked(trainInvocation(value), label);
    const found = trainInvocation(value.argv);
    return checked({ argv: found.argv, env: { ...found.env, ...value.env } }, label);
  }
  return checked(trainInvocation(shellWords(trimmed, label)), label);
}

function checked(invocation: Invocation, label: string): Invocation {
  const parsed = Invocation.safeParse(invocation);
  if (!parsed.success) throw new HarnessError('usage.bad_argv', `${label}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
