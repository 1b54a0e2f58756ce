/**
 * The error hierarchy. Every error Raven raises is a {@link RavenError} with a stable `code` from
 * the registry (`error-codes.ts`) that callers may switch on, and an ES2022 `cause` when it wraps
 * another error.
 *
 * Every RavenError carries a brand, a property keyed by `Symbol.for('kube-raven.error')` on its
 * prototype. `Symbol.for` returns the same symbol in every copy of the package loaded into one
 * process (two versions in `node_modules`, a bundled copy), where `instanceof` fails because each
 * copy has its own classes; `isRavenError` (`is-raven-error.ts`) checks the brand and the code.
 *
 * Classification (is it retryable? expired? an auth failure?) lives in `classify.ts`, never at
 * the throw or catch sites.
 */
import type { RavenErrorCode } from './error-codes.js';

/** The key of the brand every RavenError carries, shared by all copies of the package. */
export const RAVEN_ERROR_BRAND: unique symbol = Symbol.for('kube-raven.error') as never;

/** Options common to every Raven error. */
export interface RavenErrorOptions {
  cause?: unknown;
}

/** Base class: a stable machine-readable `code` and a message a user can act on. */
export class RavenError extends Error {
  readonly code: RavenErrorCode;
  /** The brand (on the prototype, so logs of the error do not show it). */
  declare readonly [RAVEN_ERROR_BRAND]: true;

  static {
    Object.defineProperty(this.prototype, RAVEN_ERROR_BRAND, { value: true });
  }

  constructor(code: RavenErrorCode, message: string, options: RavenErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
  }
}

/** Bad configuration: `path` names the offending field, `file` the source when there is one. */
export class ConfigError extends RavenError {
  readonly path: string;
  readonly file: string | undefined;

  constructor(
    message: string,
    options: RavenErrorOptions & { path?: string | undefined; file?: string | undefined } = {},
  ) {
    const where = [options.file, options.path].filter((part) => part !== undefined && part !== '').join(': ');
    super('ERR_CONFIG', where === '' ? message : `${where}: ${message}`, options);
    this.path = options.path ?? '';
    this.file = options.file;
  }
}

/** A response body or stream frame that could not be decoded. */
export class DecodeError extends RavenError {
  constructor(message: string, options: RavenErrorOptions = {}) {
    super('ERR_DECODE', message, options);
  }
}

/** The network failed before a complete answer arrived (refused, reset, timed out, aborted). */
export class TransportError extends RavenError {
  constructor(message: string, options: RavenErrorOptions = {}) {
    super('ERR_TRANSPORT', message, options);
  }
}

/** Credentials could not be obtained (missing exec plugin, unreadable token file, ...). */
export class AuthError extends RavenError {
  constructor(message: string, options: RavenErrorOptions = {}) {
    super('ERR_AUTH', message, options);
  }
}

/** A sink could not deliver; `retryable` tells the delivery loop whether to try again. */
export class SinkError extends RavenError {
  readonly retryable: boolean;

  constructor(message: string, options: RavenErrorOptions & { retryable: boolean }) {
    super('ERR_SINK', message, options);
    this.retryable = options.retryable;
  }
}
