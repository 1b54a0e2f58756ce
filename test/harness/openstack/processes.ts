/**
 * Process plumbing for the OpenStack lab: detached launches with their output
 * in a log file, stopping a whole process group, and the resident memory of a group.
 *
 * Every service is started detached, so it leads a process group of its own; stopping the group
 * also ends the workers a service forks (octavia-worker) and the helpers the Erlang VM starts.
 */
import { spawn, execFile } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { isAlive } from '../binaries.js';

export { isAlive };

export const execFileAsync = promisify(execFile);

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Start `argv` detached (its own process group), appending stdout and stderr to `logFile`. */
export function launchDetached(argv: string[], env: NodeJS.ProcessEnv, logFile: string): number {
  const [command, ...args] = argv;
  if (command === undefined) throw new Error('launchDetached: empty command');
  const out = openSync(logFile, 'a');
  try {
    const child = spawn(command, args, { detached: true, stdio: ['ignore', out, out], env });
    child.unref();
    if (child.pid === undefined) throw new Error(`could not start ${command}`);
    return child.pid;
  } finally {
    closeSync(out);
  }
}

/** When a process started (clock ticks after boot): tells it from a later process given the same pid. */
export function startTime(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22 of stat; the fields after the command name (which may hold spaces) start at field 3.
    const value = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    return value === undefined ? undefined : Number(value);
  } catch {
    return undefined;
  }
}

/**
 * Live members of the process group led by `leader`, or none when `leader` is now the pid of another
 * process (started at another time than `started`). A group outlives its leader, and Linux does not
 * hand out a pid that is still a process group's id, so a dead leader's group is still ours.
 */
export function ownGroup(leader: number, started: number | undefined): number[] {
  const now = startTime(leader);
  if (now !== undefined && started !== undefined && now !== started) return [];
  return groupMembers(leader);
}

/** Pids of the live processes in process group `pgid` (read from /proc). */
export function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      // Fields after the command name (which may hold spaces) start after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // state ppid pgrp ...; a zombie holds no memory and cannot be signalled away.
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') members.push(pid);
    } catch {
      // The process ended while we looked.
    }
  }
  return members;
}

/** Resident and proportional memory of one process in bytes (0 when it is gone). */
export function memory(pid: number): { rss: number; pss: number } {
  try {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (name: string): number =>
      Number(new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(rollup)?.[1] ?? 0);
    return { rss: kb('Rss') * 1024, pss: kb('Pss') * 1024 };
  } catch {
    return { rss: 0, pss: 0 };
  }
}

/**
 * End process group `pgid`: SIGTERM, then SIGKILL after `graceMs`; resolves when no member is left.
 */
export async function stopGroup(pgid: number, graceMs = 10_000): Promise<void> {
  const signal = (sig: NodeJS.Signals): void => {
    try {
      process.kill(-pgid, sig);
    } catch {
      // No member left.
    }
  };
  if (groupMembers(pgid).length === 0) return;
  signal('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (groupMembers(pgid).length > 0 && Date.now() < deadline) await sleep(50);
  if (groupMembers(pgid).length === 0) return;
  signal('SIGKILL');
  while (groupMembers(pgid).length > 0) await sleep(20);
}

/** The last `lines` lines of a log file, for error messages. */
export async function tail(file: string, lines = 30): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').slice(-lines).join('\n');
}
