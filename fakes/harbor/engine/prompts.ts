import { readFileSync } from 'node:fs';
import { codePoints, pyFormat } from './python-text.ts';

/**
 * The prompt texts Terminus 2 sends (Harbor 6c9ba3f0, src/harbor/agents/terminus_2/). The three
 * templates are Harbor's files copied byte for byte into `./templates/` (see
 * templates/PROVENANCE.md) and filled with Python's `str.format` rules; the four summarization
 * prompts, the fallbacks, the error and confirmation messages are the f-strings of terminus_2.py,
 * stray indents included (line numbers at each function).
 */

export type ParserName = 'xml' | 'json';

function template(name: string): string {
  return readFileSync(new URL(`./templates/${name}`, import.meta.url), 'utf8');
}

/** terminus_2.py L386–L395 `_get_prompt_template_path`. */
export const PROMPT_TEMPLATES: Readonly<Record<ParserName, string>> = {
  xml: template('terminus-xml-plain.txt'),
  json: template('terminus-json-plain.txt'),
};
/** terminus_2.py L397–L399 `_get_timeout_template_path`. */
export const TIMEOUT_TEMPLATE = template('timeout.txt');

/**
 * U0 (terminus_2.py L1572 `self._prompt_template.format(instruction=…, terminal_state=…)`).
 * `terminalState` is the limited first incremental output ("Current Terminal Screen:\n…").
 */
export function firstPrompt(parser: ParserName, instruction: string, terminalState: string): string {
  return pyFormat(PROMPT_TEMPLATES[parser], { instruction, terminal_state: terminalState });
}

/** terminus_2.py L1205 `_execute_commands`: a send that timed out is answered with timeout.txt. */
export function timeoutPrompt(timeoutSec: string, command: string, terminalState: string): string {
  return pyFormat(TIMEOUT_TEMPLATE, { timeout_sec: timeoutSec, command, terminal_state: terminalState });
}

/** SUMMARY_PROMPT (terminus_2.py L791–L806 `_summarize`, subagent 1). */
export function summaryPrompt(instruction: string): string {
  return `You are about to hand off your work to another AI agent.
            Please provide a comprehensive summary of what you have
            accomplished so far on this task:

Original Task: ${instruction}

Based on the conversation history, please provide a detailed summary covering:
1. **Major Actions Completed** - List each significant command you executed
            and what you learned from it.
2. **Important Information Learned** - A summary of crucial findings, file
            locations, configurations, error messages, or system state discovered.
3. **Challenging Problems Addressed** - Any significant issues you
            encountered and how you resolved them.
4. **Current Status** - Exactly where you are in the task completion process.


Be comprehensive and detailed. The next agent needs to understand everything
            that has happened so far in order to continue.`;
}

/** QUESTION_PROMPT (L829–L842, subagent 2); `screen` is the raw visible pane, no header. */
export function questionPrompt(instruction: string, summary: string, screen: string): string {
  return `You are picking up work from a previous AI agent on this task:

**Original Task:** ${instruction}

**Summary from Previous Agent:**
${summary}

**Current Terminal Screen:**
${screen}

Please begin by asking several questions (at least five, more if necessary)
about the current state of the solution that are not answered in the summary
from the prior agent. After you ask these questions you will be on your own,
so ask everything you need to know.`;
}

/** ANSWER_PROMPT (L897–L900, subagent 3). */
export function answerPrompt(questions: string): string {
  return `The next agent has a few questions for you, please answer each of them one by one in detail:\n\n${questions}`;
}

/** HANDOFF (L930–L936): the prompt of the first main call after a successful summarization. */
export function handoffPrompt(answers: string): string {
  return (
    'Here are the answers the other agent provided.\n\n' +
    answers +
    '\n\n' +
    'Continue working on this task from where the previous agent left off.' +
    ' You can no longer ask questions. Please follow the spec to interact with ' +
    'the terminal.'
  );
}

/** The last 1000 code points of the screen (`current_screen[-1000:] if current_screen else ""`). */
function lastThousand(screen: string): string {
  return codePoints(screen).slice(-1000).join('');
}

/** Fallback 1 (reactive path, terminus_2.py L1029–L1033): the short-summary call's only message. */
export function shortSummaryPrompt(instruction: string, screen: string): string {
  return `Briefly continue this task: ${instruction}\n\nCurrent state: ${lastThousand(screen)}\n\nNext steps (2-3 sentences):`;
}

/** The prompt after a successful short summary (L1039). */
export function shortSummaryHandoff(instruction: string, reply: string): string {
  return `${instruction}\n\nSummary: ${reply}`;
}

/** Fallback 2, no model call (L1044–L1050). */
export function noModelFallbackPrompt(instruction: string, screen: string): string {
  return `${instruction}\n\nCurrent state: ${lastThousand(screen)}`;
}

/** Returned instead of a reply when even the fallback chat call fails (L1063–L1067); not a model call. */
export const TECHNICAL_DIFFICULTIES = 'Technical difficulties. Please continue with the task.';

/** `_handle_llm_interaction` L1154–L1160: the feedback line(s) built from a parse result. */
export function parserFeedback(error: string, warning: string): string {
  if (error) return warning ? `ERROR: ${error}\nWARNINGS: ${warning}` : `ERROR: ${error}`;
  return warning ? `WARNINGS: ${warning}` : '';
}

/** `_get_error_response_type` L472–L484. */
function errorResponseType(parser: ParserName): string {
  return parser === 'json' ? 'JSON response' : 'response';
}

/** The prompt after a reply with an ERROR in its feedback (`_run_agent_loop` L1337–L1342). */
export function parseErrorPrompt(parser: ParserName, feedback: string): string {
  return `Previous response had parsing errors:\n${feedback}\n\nPlease fix these issues and provide a proper ${errorResponseType(parser)}.`;
}

/** The observation after a reply with WARNINGS only (L1400–L1404); `output` is limited again there. */
export function warningsPrompt(feedback: string, limitedOutput: string): string {
  return `Previous response had warnings:\n${feedback}\n\n${limitedOutput}`;
}

/** The first `task_complete` reply is answered with this (`_get_completion_confirmation_message` L486–L506). */
export function completionConfirmation(parser: ParserName, terminalOutput: string): string {
  const again =
    parser === 'json'
      ? 'If so, include "task_complete": true in your JSON response again.'
      : 'If so, include <task_complete>true</task_complete> again.';
  return (
    `Current terminal state:\n${terminalOutput}\n\n` +
    'Are you sure you want to mark the task as complete? ' +
    "This will trigger your solution to be graded and you won't be able to " +
    'make any further corrections. ' +
    again
  );
}

/**
 * The re-issue prompt after a cut reply under the response-length policy `recover` (Harbor terminus_2.py
 * `_query_llm`, JackGuan99/harbor@6c9ba3f0 src/harbor/agents/terminus_2/terminus_2.py line 1117, same text at
 * f927895e): the limit is the model's output limit (`AGENT_MAX_OUTPUT_TOKENS`, sent as `max_tokens`), "the
 * maximum output length" without one. The parser's warnings on the cut reply follow it (play-episode.ts `recover`).
 */
export function outputLengthPrompt(outputLimit: number | undefined): string {
  const limit = outputLimit === undefined ? 'the maximum output length' : `${outputLimit} tokens`;
  return (
    'ERROR!! NONE of the actions you just requested were performed ' +
    `because you exceeded ${limit}. ` +
    `Your outputs must be less than ${limit}. Re-issue this request, ` +
    `breaking it into chunks each of which is less than ${limit}.`
  );
}
