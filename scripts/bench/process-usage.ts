import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';

/** What one process of a tree used, as last read from /proc before it ended. */
export interface ProcessUsage {
  readonly pid: number;
  readonly command: string;
  /** user + system CPU seconds (/proc/PID/stat utime + stime). */
  readonly cpu_s: number;
  /** VmHWM: the most resident memory it ever had. */
  readonly peak_rss_mb: number;
}

// utime and stime are counted in clock ticks (USER_HZ).
const TICKS_PER_S = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

async function readUsage(pid: number): Promise<ProcessUsage | null> {
  try {
    const [stat, status, cmdline] = await Promise.all([
      readFile(`/proc/${pid}/stat`, 'utf8'),
      readFile(`/proc/${pid}/status`, 'utf8'),
      readFile(`/proc/${pid}/cmdline`, 'utf8'),
    ]);
    // Fields after the command's closing parenthesis start at field 3 (state); utime is 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    const hwm = /VmHWM:\s+(\d+)/.exec(status)?.[1];
    // A zombie (exited, not yet reaped) has no memory, no command line and no counts: keep the last reading.
    if (hwm === undefined) return null;
    const hwmKb = Number(hwm);
    return {
      pid,
      command: cmdline.split('\0').filter(Boolean).join(' '),
      cpu_s: ticks / TICKS_PER_S,
      peak_rss_mb: hwmKb / 1024,
    };
  } catch {
    return null; // it ended between the listing and the read
  }
}

async function childrenOf(pid: number): Promise<number[]> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  return text.trim().split(/\s+/).filter(Boolean).map(Number);
}

/**
 * Polls a process and its descendants every `everyMs` until `done` settles; per process, its last
 * reading. A process's CPU after its last reading is lost, so a child that idles before it exits (the
 * dump converter waits for its stdin to close) is measured whole.
 */
export async function sampleProcessTree(
  root: number,
  done: Promise<unknown>,
  everyMs = 200,
): Promise<ProcessUsage[]> {
  const last = new Map<number, ProcessUsage>();
  let finished = false;
  const stop = () => {
    finished = true;
  };
  done.then(stop, stop);
  const visit = async (pid: number): Promise<void> => {
    const usage = await readUsage(pid);
    if (usage === null) return;
    last.set(pid, usage);
    for (const child of await childrenOf(pid)) await visit(child);
  };
  while (!finished) {
    await visit(root);
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return [...last.values()];
}
