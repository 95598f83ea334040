/** A count that only goes up: `next()` is 1, then 2, … (the policy's request ids and completion counter). */
export class Counter {
  #value = 0;

  next(): number {
    this.#value += 1;
    return this.#value;
  }
}
