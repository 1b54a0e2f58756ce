/**
 * A minimal {@link Logger} writing one JSON object per line: `time`, `level`, `msg`, then the
 * bindings of its children and the record's own fields. Enough for an example and for tests that
 * read a child process's output; a production program would pass a real logging library instead.
 */
import type { Logger } from '../../src/util/logger.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function isLogLevel(value: string): value is LogLevel {
  return value in rank;
}

/**
 * @example
 * const log = jsonLogger({ level: 'info', write: (line) => process.stdout.write(line) });
 * log.child({ identity: 'a' }).info({ pods: 3 }, 'converged');
 */
export function jsonLogger(options: {
  level: LogLevel;
  write: (line: string) => void;
  now?: () => number;
  bindings?: Record<string, unknown>;
}): Logger {
  const bindings = options.bindings ?? {};
  const now = options.now ?? Date.now;
  const emit =
    (level: LogLevel) =>
    (obj: object, msg?: string): void => {
      if (rank[level] < rank[options.level]) return;
      const record = { time: new Date(now()).toISOString(), level, msg: msg ?? '', ...bindings, ...obj };
      options.write(`${JSON.stringify(record)}\n`);
    };
  return {
    debug: emit('debug'),
    info: emit('info'),
    warn: emit('warn'),
    error: emit('error'),
    child: (more) => jsonLogger({ ...options, bindings: { ...bindings, ...more } }),
  };
}
