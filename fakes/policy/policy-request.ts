/** The chat route's request and reply, apart from any transport: msw's fetch objects or plain node:http. */

/** A request's headers as the fetch `Headers.get` reads them. */
export interface HeaderReader {
  get(name: string): string | null;
}

/** What the chat answer reads of a request: a fetch `Request` (msw) or a plain node:http view of one. */
export interface PolicyRequestLike {
  readonly method: string;
  readonly url: string;
  readonly headers: HeaderReader;
  /** The body as text (`Request.text()`: UTF-8, BOM stripped, replacement characters), read with `parseJson`. */
  text(): Promise<string>;
  /**
   * The body's bytes, read per routing key by `history-reuse.ts` (the ids read from the bytes, the
   * re-sent history reused) before `text()` is taken; absent on msw's `Request`.
   */
  bodyBytes?(): Uint8Array;
}

/** A chat answer: `status` with `body` written as `HttpResponse.json` writes it (JSON.stringify). */
export interface PolicyChatReply {
  readonly status: number;
  readonly body: unknown;
}
