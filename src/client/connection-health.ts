/**
 * Dead-connection detection for HTTP/2 connections, whatever the requests on them are doing.
 *
 * Over HTTP/2 the client sends a PING every {@link H2_PING_INTERVAL_MS} and a live server answers
 * each with a PING ACK, so a healthy connection reads bytes at least that often even when every
 * watch on it is quiet. A connection that has read nothing for {@link H2_DEAD_AFTER_MS} is dead (a
 * half-open socket, a stalled proxy, a server that vanished without a FIN): it is destroyed, and
 * every request on it fails with a TransportError that the watcher recovers from at once.
 *
 * Guarantees: a dead HTTP/2 connection is found within `deadAfterMs + checkEveryMs` (25 s by
 * default) without one request more to the apiserver; a healthy one is never cut, however quiet its
 * streams, nor because this process's own event loop was blocked (reads could not be counted then,
 * so a late check starts the window again); the checks never keep the process alive. HTTP/1.1 connections carry no PING: a watch on
 * one relies on the watcher's inactivity deadline, tied to the apiserver's bookmark interval.
 */
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { TransportError } from '../errors/raven-error.js';
import type { Clock, TimerHandle } from '../util/clock.js';

/**
 * The PING period. Each PING and its ACK are 17 bytes, so this costs the apiserver nothing
 * measurable; 10 s gives two PINGs within the dead-after window.
 */
export const H2_PING_INTERVAL_MS = 10_000;
/**
 * No byte read for this long: dead. At least two PINGs go unanswered in it; with the check period
 * a dead connection is found in 20–25 s — sooner than client-go (30 s idle + 15 s ping timeout)
 * and than cutting every watch at 30 s, with no request more.
 */
export const H2_DEAD_AFTER_MS = 20_000;
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
  let lastCheckAt = lastReadAt;
  let timer: TimerHandle | undefined;
  const check = (): void => {
    timer = undefined;
    if (socket.destroyed) return;
    const read = socket.bytesRead;
    const now = clock.now();
    const late = now - lastCheckAt > 2 * checkEveryMs;
    lastCheckAt = now;
    if (read !== lastRead || late) {
      // Bytes arrived, or this check ran late: the event loop was busy and could not read.
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
