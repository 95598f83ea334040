import { z } from 'zod';

/**
 * `z.array(element)` for the long number arrays of a dump (token ids, loss masks: over a million a
 * step), with the same answers: an array whose every element passes `accepts` is taken as it is, in one
 * loop and without the copy zod's array makes; anything else is parsed by `z.array(element)` itself, so
 * its issues (paths, messages) are zod's. `accepts` must accept only what `element` accepts unchanged
 * (property-tested in number-arrays.test.ts).
 */
function numberArray<T extends number | null>(element: z.ZodType<T>, accepts: (value: unknown) => boolean) {
  const strict = z.array(element);
  return z.custom<T[]>().superRefine((value, ctx) => {
    if (Array.isArray(value)) {
      let all = true;
      for (let i = 0; i < value.length && all; i++) all = accepts(value[i]);
      if (all) return;
    }
    const parsed = strict.safeParse(value);
    if (!parsed.success) for (const issue of parsed.error.issues) ctx.addIssue({ ...issue } as never);
  });
}

/** `z.array(z.number().int())`. */
export const intArray = () => numberArray(z.number().int(), Number.isSafeInteger);

/** `z.array(z.number().int().min(0).max(1))`: a loss mask. */
export const bitArray = () => numberArray(z.number().int().min(0).max(1), (v) => v === 0 || v === 1);

/** `z.array(z.number())`. */
export const finiteArray = () => numberArray(z.number(), (v) => typeof v === 'number' && Number.isFinite(v));

/** `z.array(z.number().nullable())`. */
export const nullableNumberArray = () =>
  numberArray(z.number().nullable(), (v) => v === null || (typeof v === 'number' && Number.isFinite(v)));
