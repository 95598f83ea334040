/**
 * `JSON.stringify({ messages })` of a history that only grows, as bytes, with each message written
 * once: the realistic step's client re-sends its whole history every turn (as Harbor's agent does), and
 * re-serializing 32k-token histories in the measured process cost it as much CPU as a third of the
 * fakes' work. The bytes are exactly `JSON.stringify`'s (history-body.test.ts).
 */
export class HistoryBody {
  readonly #parts: Buffer[] = [];
  #bytes = 0;

  push(...messages: readonly unknown[]): void {
    for (const message of messages) {
      const part = Buffer.from(JSON.stringify(message));
      this.#parts.push(part);
      this.#bytes += part.length;
    }
  }

  /** `{"messages":[m1,m2,...]}` in UTF-8. */
  bytes(): Buffer {
    const head = '{"messages":[';
    const count = this.#parts.length;
    const out = Buffer.allocUnsafe(head.length + this.#bytes + Math.max(0, count - 1) + 2);
    let at = out.write(head, 0, 'latin1');
    this.#parts.forEach((part, i) => {
      if (i > 0) at = out.writeUInt8(0x2c, at);
      at += part.copy(out, at);
    });
    out.write(']}', at, 'latin1');
    return out;
  }
}
