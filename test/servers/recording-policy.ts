import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A chat-completions backend on a real loopback socket that records every request body and answers
 * as the `x-harness-directive` header says (the fake policy's directive contract,
 * docs/architecture.md): `content` as the reply, `error` as a non-200 in OpenAI's error shape.
 * It stands where Harbor's golden test puts its fake LLM server.
 */

interface RecordedRequest {
  readonly path: string;
  readonly body: Record<string, unknown>;
  readonly messages: ReadonlyArray<Record<string, unknown>>;
  readonly status: number;
}

export interface RecordingPolicy {
  readonly url: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startRecordingPolicy(): Promise<RecordingPolicy> {
  const requests: RecordedRequest[] = [];
  let count = 0;
  const server: Server = createServer((request, response) => {
    void (async () => {
      const body = JSON.parse(await readBody(request)) as Record<string, unknown>;
      const header = request.headers['x-harness-directive'];
      const directive = (typeof header === 'string' ? JSON.parse(header) : {}) as {
        content?: string;
        error?: { status: number; message: string };
        finish_reason?: string;
      };
      const status = directive.error?.status ?? 200;
      requests.push({
        path: request.url ?? '',
        body,
        messages: body.messages as Array<Record<string, unknown>>,
        status,
      });
      count += 1;
      const payload =
        directive.error !== undefined
          ? { error: { message: directive.error.message, type: 'invalid_request_error', code: null } }
          : {
              id: `chatcmpl-recorded-${count}`,
              object: 'chat.completion',
              model: body.model,
              choices: [
                {
                  index: 0,
                  message: { role: 'assistant', content: directive.content ?? '' },
                  finish_reason: directive.finish_reason ?? 'stop',
                },
              ],
              usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
            };
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(payload));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
