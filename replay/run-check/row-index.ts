/**
 * Rows found again by a head (trainer rollout id, sample index) and their numeric columns (tokens, a loss
 * mask), compared by value: what a `${head}|${tokens.join(',')}` map key does, without building a string
 * of every row's tokens (a recipe step has over a million of them). Equal columns hash alike, so a bucket
 * holds the rows of one head, lengths and hash; a lookup compares its columns element by element.
 */
export class RowIndex<V> {
  private readonly buckets = new Map<string, { columns: readonly (readonly number[])[]; value: V }[]>();

  /** Like `Map.set`: a row equal to one already there replaces its value. */
  set(head: string, columns: readonly (readonly number[])[], value: V): void {
    const key = bucketKey(head, columns);
    const bucket = this.buckets.get(key);
    if (bucket === undefined) {
      this.buckets.set(key, [{ columns, value }]);
      return;
    }
    const same = bucket.find((row) => sameColumns(row.columns, columns));
    if (same) same.value = value;
    else bucket.push({ columns, value });
  }

  has(head: string, columns: readonly (readonly number[])[]): boolean {
    return this.find(head, columns) !== undefined;
  }

  get(head: string, columns: readonly (readonly number[])[]): V | undefined {
    return this.find(head, columns)?.value;
  }

  private find(head: string, columns: readonly (readonly number[])[]) {
    return this.buckets.get(bucketKey(head, columns))?.find((row) => sameColumns(row.columns, columns));
  }
}

function bucketKey(head: string, columns: readonly (readonly number[])[]): string {
  let key = head;
  for (const column of columns) key += `|${column.length}:${hashNumbers(column)}`;
  return key;
}

/** FNV-1a over each value's integer part: equal values (0 and -0 too) hash alike; collisions only cost a compare. */
function hashNumbers(values: readonly number[]): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < values.length; i++) h = Math.imul(h ^ (values[i]! | 0), 0x01000193);
  return h >>> 0;
}

function sameColumns(a: readonly (readonly number[])[], b: readonly (readonly number[])[]): boolean {
  if (a.length !== b.length) return false;
  for (let c = 0; c < a.length; c++) {
    const x = a[c]!;
    const y = b[c]!;
    if (x === y) continue;
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  }
  return true;
}
