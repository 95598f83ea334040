import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { HarnessError } from '../common/errors.ts';
import { fsReason } from '../common/fs-reason.ts';
import { parseJson } from '../common/python-json/loads.ts';

/**
 * `session-trace/1` (fixtures/conformance/README.md): the ordered chat requests an agent sent to one
 * session and what the policy answered to each. The fake policy's script mode replays the answers; the
 * trace replay sends the requests.
 */

const MessageSchema = z.looseObject({ role: z.string() });

const TraceReplySchema = z.looseObject({
  message: z.looseObject({ role: z.string(), content: z.unknown() }),
  finish_reason: z.string(),
  /**
   * The exact ids the policy emits for this reply (its `output_token_logprobs`), when the trace states
   * them: a fault the message cannot express (a turn ended by `<|endoftext|>`, a lost `\n`). Without it
   * the ids are the family's render of the message (`completionIds`).
   */
  completion_ids: z.array(z.number().int().nonnegative()).min(1).optional(),
});

/** A non-200 backend answer, passed through by the session server unrecorded. */
const TraceErrorSchema = z.object({
  status: z
    .number()
    .int()
    .min(100)
    .max(599)
    .refine((s) => s !== 200, 'an error answer cannot be 200'),
  body: z.unknown(),
});

export const TraceTurnSchema = z.object({
  request: z.looseObject({ messages: z.array(MessageSchema) }),
  response: z.union([TraceReplySchema, TraceErrorSchema]),
});

const SessionTraceSchema = z.object({
  format: z.literal('session-trace/1'),
  max_seq_len: z.number().int().positive().nullable().optional(),
  agent_metadata: z.unknown().optional(),
  turns: z.array(TraceTurnSchema),
});

export type SessionTrace = z.infer<typeof SessionTraceSchema>;
export type TraceTurn = z.infer<typeof TraceTurnSchema>;
export type TraceReply = z.infer<typeof TraceReplySchema>;

export function isTraceReply(response: TraceTurn['response']): response is TraceReply {
  return 'message' in response;
}

/** Validates a parsed trace; the original objects are kept so key order survives into requests. */
export function parseSessionTrace(raw: unknown, source = 'trace'): SessionTrace {
  const result = SessionTraceSchema.safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new HarnessError(
      'config.trace_invalid',
      `${source}: not a session-trace/1 file (${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'})`,
      { details: { source } },
    );
  }
  return raw as SessionTrace;
}

/** Reads and validates a trace file. */
export async function readSessionTrace(path: string): Promise<SessionTrace> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const why = fsReason(error);
    throw new HarnessError(
      'config.trace_unreadable',
      `trace ${path}: ${why}; expected a session-trace/1 JSON file`,
      {
        details: { path },
      },
    );
  }
  let raw: unknown;
  try {
    raw = parseJson(text);
  } catch (error) {
    throw new HarnessError('config.trace_invalid', `${path}: not JSON (${(error as Error).message})`, {
      details: { path },
    });
  }
  return parseSessionTrace(raw, path);
}
