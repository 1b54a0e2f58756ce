/**
 * Dead-connection detection for HTTP/2 connections, whatever the requests on them are doing.
 *
 * Over HTTP/2 the client sends a PING every {@link H2_PING_INTERVAL_MS} and a live server answers
 * each with a PING ACK, so a healthy connection reads bytes at least that often even when every
 * watch on it is quiet. A connection that has read nothing for {@link H2_DEAD_AFTER_MS} is dead (a
 * half-open socket, a stalled proxy, a server that vanished without a FIN): it is destroyed, and
 * every request on it fails with a TransportError that the watcher recovers from at once.
 *
 * Guarantees: a dead HTTP/2 connection is found within `deadAfterMs + checkEveryMs` (40 s by
 * default) without one request more to the apiserver; a healthy one is never cut, however quiet its
 * streams; the checks never keep the process alive. HTTP/1.1 connections carry no PING: a watch on
 * one relies on the watcher's inactivity deadline, tied to the apiserver's bookmark interval.
 */
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { TransportError } from '../errors/raven-error.js';
import type { Clock, TimerHandle } from '../util/clock.js';

/**
 * The PING period. Each ACK is 17 bytes, so this costs the apiserver nothing measurable; 15 s
 * gives two PINGs within the dead-after window.
 */
export const H2_PING_INTERVAL_MS = 15_000;
/**
 * No byte read for this long: dead. At least two PINGs go unanswered in it; with the check period
 * a dead connection is found in 35–40 s, inside the 45 s client-go allows (30 s idle + 15 s ping
 * timeout).
 */
export const H2_DEAD_AFTER_MS = 35_000;
/** How often a connection's read counter is looked at. */
export const H2_CHECK_EVERY_MS = 5_000;

export interface ConnectionHealthOptions {
  clock: Clock;
  deadAfterMs?: number;
  checkEveryMs?: number;
  /** Told once when a connection is declared dead (for a log line). */
  onDead?: (error: TransportError) => void;
}

/**
 * Watch one connection's health: once it speaks HTTP/2, destroy it when it has read no byte for
 * `deadAfterMs`. Stops by itself when the socket closes.
 */
export function watchConnectionHealth(socket: Socket, options: ConnectionHealthOptions): void {
  if ((socket as Partial<TLSSocket>).alpnProtocol !== 'h2') return;
  const { clock } = options;
  const deadAfterMs = options.deadAfterMs ?? H2_DEAD_AFTER_MS;
  const checkEveryMs = options.checkEveryMs ?? H2_CHECK_EVERY_MS;
  let lastRead = socket.bytesRead;
  let lastReadAt = clock.now();
  let timer: TimerHandle | undefined;
  const check = (): void => {
    timer = undefined;
    if (socket.destroyed) return;
    const read = socket.bytesRead;
    const now = clock.now();
    if (read !== lastRead) {
      lastRead = read;
      lastReadAt = now;
    } else if (now - lastReadAt >= deadAfterMs) {
      const error = new TransportError(
        `connection to ${socket.remoteAddress ?? 'the server'}:${socket.remotePort ?? ''} read nothing for ${Math.round((now - lastReadAt) / 1000)} s, PINGs unanswered: closed as dead`,
      );
      options.onDead?.(error);
      socket.destroy(error);
      return;
    }
    timer = clock.setTimeout(check, checkEveryMs, { background: true });
  };
  timer = clock.setTimeout(check, checkEveryMs, { background: true });
  socket.once('close', () => {
    if (timer !== undefined) clock.clearTimeout(timer);
  });
}
