import { withRoom } from '../../common/buffer-room.ts';

/**
 * `JSON.stringify({ messages })` of a history that only grows, as bytes, with each message written
 * once: the realistic step's client re-sends its whole history every turn (as Harbor's agent does), and
 * re-serializing 32k-token histories in the measured process cost it as much CPU as a third of the
 * fakes' work, copying them into a fresh buffer every turn most of the rest. The bytes are exactly
 * `JSON.stringify`'s (history-body.test.ts), kept in one buffer that grows: `bytes()` is a view of it,
 * valid until the next `push` (which writes over its closing `]}`), so a caller pushes the reply only
 * once the request that sent the view is answered, as a closed-loop client does.
 */
export class HistoryBody {
  #buffer = Buffer.allocUnsafe(64 * 1024);
  /** `{"messages":[` and the messages so far, joined by commas. */
  #length = 0;
  #count = 0;

  constructor() {
    this.#length = this.#buffer.write('{"messages":[', 0, 'latin1');
  }

  push(...messages: readonly unknown[]): void {
    for (const message of messages) {
      const text = JSON.stringify(message);
      // A comma, the text in UTF-8 (at most 3 bytes per UTF-16 unit), and the closing `]}`.
      this.#room(1 + 3 * text.length + 2);
      if (this.#count > 0) this.#buffer[this.#length++] = 0x2c;
      this.#length += this.#buffer.write(text, this.#length, 'utf8');
      this.#count += 1;
    }
  }

  /** `{"messages":[m1,m2,...]}` in UTF-8: a view valid until the next `push`. */
  bytes(): Buffer {
    this.#room(2);
    this.#buffer.write(']}', this.#length, 'latin1');
    return this.#buffer.subarray(0, this.#length + 2);
  }

  #room(extra: number): void {
    this.#buffer = withRoom(this.#buffer, this.#length + extra, this.#length, (n) => Buffer.allocUnsafe(n));
  }
}
