/**
 * Errors raised by checkpoint stores. Each names the checkpoint file and says what to do; the
 * daemon stops on any of them rather than guess, because starting without the right checkpoint
 * would either flood sinks with `added` events or miss what changed while Raven was down.
 */
import { RavenError, type RavenErrorOptions } from '../../errors/raven-error.js';

/**
 * Why a checkpoint could not be used:
 * - `ERR_CHECKPOINT_LOCKED`: another live Raven process holds the file;
 * - `ERR_CHECKPOINT_UNREADABLE`: the file (or its lock file) cannot be opened or created, or is
 *   not a readable checkpoint (corrupt, not SQLite, not Raven's);
 * - `ERR_CHECKPOINT_SCHEMA`: the file was written by a newer Raven;
 * - `ERR_CHECKPOINT_CLOSED`: the store was used after `close()` or `destroy()`;
 * - `ERR_CHECKPOINT_WRITE`: a write (flush) failed; the writes stay buffered and are retried;
 * - `ERR_CHECKPOINT_FENCED`: another replica took over the shared checkpoint (a newer lease
 *   epoch): this one may not record deliveries any more.
 */
export type CheckpointErrorCode =
  | 'ERR_CHECKPOINT_LOCKED'
  | 'ERR_CHECKPOINT_UNREADABLE'
  | 'ERR_CHECKPOINT_SCHEMA'
  | 'ERR_CHECKPOINT_CLOSED'
  | 'ERR_CHECKPOINT_WRITE'
  | 'ERR_CHECKPOINT_FENCED';

export class CheckpointError extends RavenError {
  declare readonly code: CheckpointErrorCode;
  /** The checkpoint file, the PostgreSQL schema (`postgres:<schema>`), or `''` for an in-memory store. */
  readonly path: string;

  constructor(
    code: CheckpointErrorCode,
    message: string,
    options: RavenErrorOptions & { path?: string } = {},
  ) {
    super(code, message, options);
    this.path = options.path ?? '';
  }
}
