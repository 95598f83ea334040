import { pythonJsonDumps } from '../../common/python-json/dumps.ts';
import { seededRandom } from '../../common/random.ts';
import type { Directive } from '../../contracts/directive.ts';

/**
 * Synthetic mode: a deterministic Terminus-2 style reply computed from the request's prompt tokens, so
 * the same request always gets the same reply and different requests (almost always) differ.
 */

export type ReplyFormat = 'json' | 'xml';

const WORDS = [
  'ls',
  'cd',
  'cat',
  'grep',
  'make',
  'pytest',
  'fix',
  'apply',
  'check',
  'build',
  'run',
  'tests',
  'file',
  'error',
  'output',
  'repo',
  'config',
  'install',
  'verify',
  'patch',
  'module',
  'import',
  'failing',
  'passes',
  'inspect',
  'logs',
  'directory',
  'script',
  'compile',
  'python',
  'package',
  'missing',
  'update',
  'review',
] as const;

const COMMANDS = ['ls -la', 'cat README.md', 'pytest -q', 'make', 'git status', 'python3 main.py'] as const;

export interface SyntheticOptions {
  readonly completionWords: number;
  readonly reasoningWords: number;
  readonly format: ReplyFormat;
}

export interface SyntheticReply {
  readonly content: string;
  readonly reasoningContent: string | null;
}

/** The reply for a prompt; a directive's `content`/`reasoning_content`/`completion_words` win. */
export function syntheticReply(
  /** The CRC-32 of the prompt ids as int32 bytes (`IdsHashes.int32Crc`): same prompt, same reply. */
  seed: number,
  options: SyntheticOptions,
  directive: Directive | null,
): SyntheticReply {
  const rand = seededRandom(seed);
  const pick = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]!);
  const words = directive?.completion_words ?? options.completionWords;
  const analysis = pick(Math.ceil(words / 2)).join(' ');
  const plan = pick(Math.floor(words / 2)).join(' ');
  const command = COMMANDS[Math.floor(rand() * COMMANDS.length)]!;
  const reasoning =
    directive?.reasoning_content ??
    (options.reasoningWords > 0 ? pick(options.reasoningWords).join(' ') : null);
  if (directive?.content !== undefined) return { content: directive.content, reasoningContent: reasoning };
  const content =
    options.format === 'xml'
      ? `<response><analysis>${analysis}</analysis><plan>${plan}</plan><commands><keystrokes duration="0.1">${command}\n</keystrokes></commands><task_complete>false</task_complete></response>`
      : pythonJsonDumps({
          analysis,
          plan,
          commands: [{ keystrokes: `${command}\n`, duration: 0.1 }],
          task_complete: false,
        });
  return { content, reasoningContent: reasoning };
}
