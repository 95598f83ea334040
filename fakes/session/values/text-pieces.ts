/**
 * A text kept as the pieces it was concatenated from, joined only when read as a string: a folded
 * leaf's response (every turn's decoded output and observation), which the wire codec writes piece by
 * piece instead of as one flat string (a third of a megabyte a leaf at the recipe's scale).
 */
export class TextPieces {
  readonly pieces: readonly string[];

  constructor(pieces: readonly string[]) {
    this.pieces = pieces;
  }

  join(): string {
    return this.pieces.join('');
  }
}
