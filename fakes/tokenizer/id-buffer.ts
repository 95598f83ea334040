/**
 * A growable list of token ids in one `Float64Array` (exact for any number a role table holds), reused
 * across renders: a plain array past ~16k elements lives in V8's large-object space, whose fresh pages
 * (and `push` into it) cost tens of nanoseconds per id on the project's 2-core VM, while writes into a
 * buffer already touched cost about one.
 */
export class IdBuffer {
  private data: Float64Array;
  length = 0;

  constructor(capacity = 1024) {
    this.data = new Float64Array(capacity);
  }

  push(id: number): void {
    if (this.length === this.data.length) {
      const grown = new Float64Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length] = id;
    this.length += 1;
  }

  clear(): void {
    this.length = 0;
  }

  /** The ids so far, as a view (valid until the next write or clear). */
  view(): Float64Array {
    return this.data.subarray(0, this.length);
  }

  /** The ids so far as a plain array (what the tokenizer's public methods return). */
  toArray(): number[] {
    const out = new Array<number>(this.length);
    for (let k = 0; k < this.length; k += 1) out[k] = this.data[k] as number;
    return out;
  }
}
