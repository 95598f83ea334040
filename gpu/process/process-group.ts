import { readdirSync, readFileSync } from 'node:fs';

/**
 * The live (non-zombie) members of a process group. Read from /proc because `kill(-pgid, 0)` also
 * succeeds for zombies, which a container's PID 1 may never reap; without /proc, fall back to it.
 */
export function liveGroupMembers(pgid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    try {
      process.kill(-pgid, 0);
      return [pgid];
    } catch {
      return [];
    }
  }
  const members: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat && stat.pgrp === pgid && stat.state !== 'Z' && stat.state !== 'X') members.push(Number(entry));
  }
  return members;
}

/** Whether one process is alive and not a zombie. */
export function isProcessAlive(pid: number): boolean {
  const stat = readStat(pid);
  if (stat) return stat.state !== 'Z' && stat.state !== 'X';
  try {
    process.kill(pid, 0);
    // No /proc entry but the signal went through: a system without /proc, so trust the signal.
    return true;
  } catch {
    return false;
  }
}

function readStat(pid: number): { state: string; pgrp: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may itself contain spaces or ')'.
    const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const state = rest[0];
    const pgrp = Number(rest[2]);
    return state === undefined || Number.isNaN(pgrp) ? undefined : { state, pgrp };
  } catch {
    return undefined;
  }
}

/** Sends a signal to a whole process group; a group that is already gone is not an error. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** Polls until the group has no live member or `timeoutMs` passes; true when it emptied. */
async function waitForGroupExit(pgid: number, timeoutMs: number, pollMs = 50): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (liveGroupMembers(pgid).length === 0) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/**
 * Stops a process group the polite way, then the hard way: SIGTERM to every member, up to
 * `graceMs` for them to exit, then SIGKILL to whatever is left. Returns whether SIGKILL was needed.
 */
export async function stopGroup(pgid: number, graceMs: number): Promise<{ forced: boolean }> {
  if (liveGroupMembers(pgid).length === 0) return { forced: false };
  signalGroup(pgid, 'SIGTERM');
  if (await waitForGroupExit(pgid, graceMs)) return { forced: false };
  signalGroup(pgid, 'SIGKILL');
  await waitForGroupExit(pgid, 5_000);
  return { forced: true };
}
