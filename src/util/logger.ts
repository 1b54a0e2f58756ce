/**
 * The logger interface engine code writes to. It is the subset of pino's API Raven uses, so a
 * pino logger can be passed as it is. Most stages default to {@link silentLogger} (a library must
 * not write to its host's terminal about routine retries); where silence would hide a bug in the
 * caller's own code (a throwing handler, a controller that can never start), the default is
 * {@link stderrLogger}, which prints warnings and errors.
 */

export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  child(bindings: Record<string, unknown>): Logger;
}

/** A logger that drops every record. */
export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silentLogger,
};

/** A record's fields as ` (key=value, ...)`, and an `err` that is an Error as its stack below. */
function formatRecord(level: string, fields: Record<string, unknown>, msg: string | undefined): string {
  const { err, ...rest } = fields;
  const pairs = Object.entries(rest).map(
    ([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`,
  );
  const head = `raven ${level}: ${msg ?? ''}${pairs.length === 0 ? '' : ` (${pairs.join(', ')})`}`;
  if (err === undefined) return `${head}\n`;
  const detail =
    err instanceof Error
      ? (err.stack ?? `${err.name}: ${err.message}`)
      : typeof err === 'string'
        ? err
        : JSON.stringify(err);
  return `${head}\n  ${detail.replaceAll('\n', '\n  ')}\n`;
}

function writer(bindings: Record<string, unknown>): Logger {
  const write =
    (level: string) =>
    (obj: object, msg?: string): void => {
      process.stderr.write(formatRecord(level, { ...bindings, ...obj }, msg));
    };
  return {
    debug: () => undefined,
    info: () => undefined,
    warn: write('warning'),
    error: write('error'),
    child: (more) => writer({ ...bindings, ...more }),
  };
}

/**
 * A logger that prints warnings and errors to stderr, one line each (`raven error: <msg>
 * (key=value)`), an `err` field's stack indented below; debug and info are dropped.
 *
 * @example
 * stderrLogger.error({ err: new TypeError('x is undefined'), event: 'added' }, 'watch handler failed');
 */
export const stderrLogger: Logger = writer({});
