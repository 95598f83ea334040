/**
 * A record's mask of ones (`LeafTokenFields.ones`, Miles' `[1] * n`), one array per length shared by
 * every turn of a samples op (a record's mask is never written in
 * place: a trim slices it). A leaf sample that keeps one as its own `loss_mask` gets a copy (`own`),
 * since hooks may write it; a fold only reads it as a run (run-fold.ts). Guarded by
 * `fakes/session/assembly-masks.test.ts`.
 */
export class SharedOnes {
  private readonly byLength = new Map<number, number[]>();
  private readonly ones: (n: number) => number[];

  /** `ones`: the plain rule's fresh mask, made once per length. */
  constructor(ones: (n: number) => number[]) {
    this.ones = ones;
  }

  get(n: number): number[] {
    let out = this.byLength.get(n);
    if (out === undefined) {
      out = this.ones(n);
      this.byLength.set(n, out);
    }
    return out;
  }

  /** `mask` itself, or a copy when it is one of the shared arrays. */
  own(mask: number[] | null): number[] | null {
    return mask !== null && this.byLength.get(mask.length) === mask ? mask.slice() : mask;
  }
}
