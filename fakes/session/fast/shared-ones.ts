import { ones } from '../assembly.ts';

/**
 * `ones`, one array per length shared by every turn of a samples op (a record's mask is never written in
 * place: a trim slices it). A leaf sample that keeps one as its own `loss_mask` gets a copy (`own`),
 * since hooks may write it; a fold only reads it as a run (run-fold.ts). Guarded by
 * `fakes/session/assembly-masks.test.ts`.
 */
export class SharedOnes {
  private readonly byLength = new Map<number, number[]>();

  get(n: number): number[] {
    let out = this.byLength.get(n);
    if (out === undefined) {
      out = ones(n);
      this.byLength.set(n, out);
    }
    return out;
  }

  /** `mask` itself, or a copy when it is one of the shared arrays. */
  own(mask: number[] | null): number[] | null {
    return mask !== null && this.byLength.get(mask.length) === mask ? mask.slice() : mask;
  }
}
