/**
 * The daemon's logger: pino, JSON lines on stderr, or readable coloured lines when stderr is a
 * terminal. Logs go to stderr so they never mix with a stdout sink's events.
 */
import { pino, type Logger as PinoLogger } from 'pino';
import pretty from 'pino-pretty';
import type { Logger } from '../util/logger.js';

export function createLogger(level: string, options: { pretty?: boolean } = {}): PinoLogger & Logger {
  const readable = options.pretty ?? process.stderr.isTTY;
  if (readable) {
    return pino(
      { level },
      pretty({
        destination: 2,
        colorize: true,
        translateTime: 'HH:MM:ss.l',
        ignore: 'pid,hostname',
        sync: true,
      }),
    );
  }
  return pino({ level, base: { pid: process.pid } }, pino.destination({ dest: 2, sync: false }));
}
