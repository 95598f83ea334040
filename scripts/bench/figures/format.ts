/** How the generated blocks print numbers: one rule per kind, so every doc spells a figure alike. */

const fixed = (v: number, digits: number) => v.toFixed(digits);

/** Milliseconds as seconds, one decimal unless told (`3922` → `3.9 s`). */
export const seconds = (ms: number, digits = 1) => `${fixed(ms / 1000, digits)} s`;

/** Milliseconds, one decimal below 100 and none above. */
export const millis = (ms: number) => `${fixed(ms, ms < 100 ? 1 : 0)} ms`;

/** Megabytes, no decimal. */
export const mb = (v: number) => `${Math.round(v)} MB`;

/** A ratio as `×1.17`. */
export const times = (r: number) => `×${fixed(r, 2)}`;

/** A signed size as `−3.4 MB` / `+98 MB` (a real minus sign). */
export function signedMb(v: number, digits = 1): string {
  const text = fixed(Math.abs(v), digits);
  return `${v < 0 ? '−' : '+'}${text} MB`;
}

/** Thousands with a comma (`32386` → `32,386`). */
export const count = (n: number) => n.toLocaleString('en-US');

/** The machine line every block starts with: what the figures were measured on, and its load. */
export function machineLine(
  machine: {
    readonly nproc: number;
    readonly memory_gib: number;
    readonly cpu_model: string;
    readonly node: string;
    readonly load_average_1m: number;
  },
  startedAt: string | undefined,
): string {
  const when =
    startedAt === undefined ? 'date not recorded' : `${startedAt.slice(0, 16).replace('T', ' ')} UTC`;
  return `${when}; ${machine.nproc} cores (${machine.cpu_model}), ${machine.memory_gib} GiB, Node ${machine.node}; 1-minute load average ${machine.load_average_1m} at the start`;
}

/** `**met**` or `**not met**`. */
export const met = (ok: boolean) => (ok ? '**met**' : '**not met**');
