/**
 * A tmux pane as Terminus 2 reads it: a fixed `width`×`height` screen (Terminus' defaults 160×40,
 * terminus_2.py `tmux_pane_width/height`), rows that fill from the top, a cursor, autowrap at the
 * right edge, scrolling into an unbounded history (Terminus sets history-limit 10,000,000), and
 * `capture-pane -p` output: one line per row, trailing blanks trimmed, every line ended by "\n".
 * Not modelled: escape sequences, wide (double-width) characters, tab cells (a tab writes spaces to
 * the next multiple of 8).
 */

const PANE_WIDTH = 160;
export const PANE_HEIGHT = 40;

export class TmuxPane {
  readonly width: number;
  readonly height: number;
  /** The screen's rows (always `height`). */
  private rows: string[][];
  /** The history as `capture-pane` prints it: rows scrolled off the top never change again. */
  private history = '';
  /** Cursor row within the screen, and column. */
  private row = 0;
  private col = 0;

  constructor(width = PANE_WIDTH, height = PANE_HEIGHT) {
    if (!Number.isInteger(width) || width <= 0 || !Number.isInteger(height) || height <= 0)
      throw new Error('pane width and height must be positive integers');
    this.width = width;
    this.height = height;
    this.rows = Array.from({ length: height }, () => []);
  }

  private lineFeed(): void {
    if (this.row < this.height - 1) {
      this.row += 1;
      return;
    }
    this.history += this.render([this.rows.shift() as string[]]);
    this.rows.push([]);
  }

  /** Output as the tty delivers it (`onlcr`: "\n" is a new line at column 0). */
  write(text: string): void {
    for (const ch of text) {
      if (ch === '\n') {
        this.lineFeed();
        this.col = 0;
      } else if (ch === '\r') this.col = 0;
      else if (ch === '\t') {
        const next = Math.min(this.width, (Math.floor(this.col / 8) + 1) * 8);
        while (this.col < next) this.put(' ');
      } else if ((ch.codePointAt(0) as number) >= 0x20 && ch !== '\x7f') this.put(ch);
    }
  }

  private put(ch: string): void {
    if (this.col >= this.width) {
      this.lineFeed();
      this.col = 0;
    }
    const line = this.rows[this.row] as string[];
    while (line.length < this.col) line.push(' ');
    line[this.col] = ch;
    this.col += 1;
  }

  /** Whether the cursor is at the start of a row. */
  get atLineStart(): boolean {
    return this.col === 0;
  }

  /** `clear` under tmux ≥ 3.2: the screen and the history are emptied, the cursor goes home. */
  clear(): void {
    this.history = '';
    this.rows = Array.from({ length: this.height }, () => []);
    this.row = 0;
    this.col = 0;
  }

  private render(rows: readonly string[][]): string {
    return rows.map((cells) => `${cells.join('').replace(/ +$/, '')}\n`).join('');
  }

  /** `tmux capture-pane -p`: the visible screen. */
  captureVisible(): string {
    return this.render(this.rows);
  }

  /** `tmux capture-pane -p -S -`: history and screen. */
  captureEntire(): string {
    return this.history + this.render(this.rows);
  }
}
