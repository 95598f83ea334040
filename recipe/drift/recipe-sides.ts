import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { HarnessError } from '../../common/errors.ts';
import { fsReason } from '../../common/fs-reason.ts';
import { type Invocation, parseInvocationText } from './invocation.ts';
import { readLauncherRecipe } from './python-launcher.ts';
import { shellWords } from './shell-words.ts';

/**
 * One side of `harness recipe diff`:
 * - `builder` or `builder[OPTIONS]`: this harness's recipe builder with `harness recipe` options;
 * - `python:PATH` or `python:PATH[OPTIONS]`: a Miles-style Python launcher, its ScriptArgs fields
 *   given as `dataclass_cli` options (`--run-id X`, `--no-use-prometheus`);
 * - anything else: a file holding one shell command, a JSON argv array, or JSON `{argv, env}`.
 * OPTIONS inside brackets are shell words (quote them as in a shell); they come after the options
 * shared by every builder and python side (those after `--`), so a side's own options win.
 */
export type SideSpec =
  | { readonly kind: 'builder'; readonly options: readonly string[] }
  | { readonly kind: 'python'; readonly path: string; readonly options: readonly string[] }
  | { readonly kind: 'file'; readonly path: string };

const BUILDER = /^builder(?:\[(.*)\])?$/s;
/** A side that opens its options with `[` but never closes them. */
const UNCLOSED = /^(builder|python:[^[]+)\[(?!.*\]$)/s;
const PYTHON = /^python:(.+?)(?:\[(.*)\])?$/s;

export function parseSideSpec(text: string): SideSpec {
  const unclosed = UNCLOSED.exec(text);
  if (unclosed)
    throw new HarnessError(
      'usage.recipe_side',
      `recipe side '${text}': its options open with '[' but never close; expected ${unclosed[1]}[OPTIONS]`,
      {
        details: { side: text },
      },
    );
  const builder = BUILDER.exec(text);
  if (builder) return { kind: 'builder', options: bracketWords(builder[1]) };
  const python = PYTHON.exec(text);
  if (python) return { kind: 'python', path: python[1] as string, options: bracketWords(python[2]) };
  if (text === '') throw new HarnessError('usage.recipe_side', 'a recipe side cannot be empty');
  return { kind: 'file', path: text };
}

function bracketWords(inner: string | undefined): string[] {
  return inner === undefined ? [] : shellWords(inner, 'the bracketed options');
}

/** Builds the harness recipe for a builder side from `harness recipe` options. */
export type BuilderSide = (
  options: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
) => Invocation;

export interface SideContext {
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Options shared by every builder and python side (the words after `--`). */
  readonly sharedOptions: readonly string[];
  readonly python?: string;
  readonly signal?: AbortSignal;
  readonly builder: BuilderSide;
}

export interface LoadedSide {
  /** How the side is named in reports. */
  readonly label: string;
  readonly invocation: Invocation;
}

export async function loadSide(spec: SideSpec, context: SideContext): Promise<LoadedSide> {
  switch (spec.kind) {
    case 'builder': {
      const options = [...context.sharedOptions, ...spec.options];
      return { label: labelOf('builder', options), invocation: context.builder(options, context.env) };
    }
    case 'python': {
      const options = [...context.sharedOptions, ...spec.options];
      const recipe = await readLauncherRecipe(resolve(context.cwd, spec.path), {
        options,
        env: context.env,
        cwd: context.cwd,
        ...(context.python ? { python: context.python } : {}),
        ...(context.signal ? { signal: context.signal } : {}),
      });
      return {
        label: labelOf(`python:${spec.path}`, options),
        invocation: { argv: recipe.argv, env: recipe.env },
      };
    }
    case 'file': {
      const path = resolve(context.cwd, spec.path);
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (error) {
        const reason = fsReason(error);
        throw new HarnessError(
          'config.recipe_file_unreadable',
          `recipe side ${spec.path}: cannot read it as a recipe file (${reason}); expected builder[…], python:PATH[…] or a file holding a command, a JSON argv or {argv, env}`,
          { details: { path, reason }, cause: error },
        );
      }
      return { label: spec.path, invocation: parseInvocationText(text, spec.path) };
    }
  }
}

function labelOf(name: string, options: readonly string[]): string {
  return options.length === 0 ? name : `${name} ${options.join(' ')}`;
}
