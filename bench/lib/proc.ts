/**
 * What Linux says of a process in /proc, read from outside it so that measuring costs it nothing.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

/** Linux reports process CPU in clock ticks; 100 per second on every current kernel build. */
const TICK_MS = 10;

/** CPU time (user + system) the process has used since it started, in milliseconds. */
export async function processCpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at field 3; utime is 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

/**
 * How often the process's main thread (for Node, the event loop's) has gone to sleep and been
 * woken since it started: its voluntary context switches, one for each wait that blocked.
 */
export async function processWakeUps(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^voluntary_ctxt_switches:\s+(\d+)$/m.exec(status)?.[1]);
}

/** Bytes the process has read since it started (`rchar`: files, sockets and pipes alike). */
export async function processReadBytes(pid: number): Promise<number> {
  const io = await readFile(`/proc/${pid}/io`, 'utf8');
  return Number(/^rchar:\s+(\d+)$/m.exec(io)?.[1]);
}

/**
 * The process's peak resident set (`VmHWM`), in MiB; `self` reads the calling process. Every
 * benchmark's peak RSS is this figure. Not `getrusage`'s `maxRSS`: Linux carries a process's
 * high-water mark over `exec`, so a child spawned by a 400 MiB parent reports 400 MiB before it
 * has done anything, while `VmHWM` belongs to the address space the child's program runs in.
 */
export async function processPeakRssMb(pid: number | 'self'): Promise<number> {
  return peakRssMbOf(await readFile(`/proc/${pid}/status`, 'utf8'));
}

/** `processPeakRssMb('self')` without waiting, for a measurement taken synchronously. */
export function ownPeakRssMb(): number {
  return peakRssMbOf(readFileSync('/proc/self/status', 'utf8'));
}

function peakRssMbOf(status: string): number {
  const kb = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kb === undefined) throw new Error('no VmHWM line in /proc/<pid>/status (peak RSS needs Linux)');
  return Number(kb) / 1024;
}
