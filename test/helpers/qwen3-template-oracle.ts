import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { renderQwen3 } from '../../fakes/tokenizer/qwen3-template.ts';
import type { TemplateCase } from './qwen3-conversations.ts';

/**
 * Python's jinja2 on Miles' Qwen3 template (scripts/oracles/qwen3_template_oracle.py under Debian's
 * python3), and the TS renderer in the same terms, for the template tests and the vector script.
 */

export const PYTHON = '/usr/bin/python3';
const ORACLE = new URL('../../scripts/oracles/qwen3_template_oracle.py', import.meta.url).pathname;
export const TEMPLATE_PATH = new URL('../../fixtures/templates/qwen3_fixed.jinja', import.meta.url).pathname;

/** The oracle's answer: the text (and the error a UTF-8 encode of it raises), or the render's error. */
export type OracleResult = { text: string; encode_error?: string } | { error: string };

/** Why the oracle cannot run here, or null. */
export function jinjaMissing(): string | null {
  try {
    execFileSync(PYTHON, ['-c', 'import jinja2'], { stdio: 'ignore' });
    return null;
  } catch {
    return `${PYTHON} cannot import jinja2 (Debian: apt-get install python3-jinja2)`;
  }
}

export function pythonRenders(cases: readonly TemplateCase[]): OracleResult[] {
  const template = readFileSync(TEMPLATE_PATH, 'utf8');
  const out = execFileSync(PYTHON, [ORACLE], {
    input: JSON.stringify({ template, cases }),
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  return JSON.parse(out) as OracleResult[];
}

/** The TS render: its text, or that it raised (the oracle's error texts are Python's, not compared). */
export function tsRender(c: TemplateCase): { text: string } | { error: true } {
  try {
    return {
      text: renderQwen3(c.messages, {
        addGenerationPrompt: c.add_generation_prompt,
        tools: c.tools,
        kwargs: c.kwargs,
      }),
    };
  } catch {
    return { error: true };
  }
}

/** What `tsRender` must give for an oracle answer. */
export function expectedRender(result: OracleResult): { text: string } | { error: true } {
  return 'error' in result ? { error: true } : { text: result.text };
}
