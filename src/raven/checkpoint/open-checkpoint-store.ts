/**
 * The checkpoint store a config names: an SQLite file (one replica), PostgreSQL (shared by the
 * replicas of a deployment, writes fenced by the leader's term) or memory.
 */
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/logger.js';
import type { CheckpointConfig } from '../config/raven-config-schema.js';
import type { CheckpointError } from './checkpoint-error.js';
import type { CheckpointStore } from './checkpoint-store.js';
import { MemoryCheckpointStore } from './memory-checkpoint-store.js';
import { PostgresCheckpointStore } from './postgres-checkpoint-store.js';
import { SqliteCheckpointStore } from './sqlite-checkpoint-store.js';

export interface OpenCheckpointOptions {
  clock: Clock;
  logger: Logger;
  /** Who writes (the leader-election identity). */
  holder: string;
  /** The leader's term (the Lease's transitions); omitted without leader election. */
  epoch?: number;
  /** Sharded: the fences to take (one per part of the hash space owned); PostgreSQL only. */
  fences?: readonly string[];
  /** Another replica took over the shared checkpoint: stop working. */
  onFenced: (error: CheckpointError) => void;
}

/** Open the configured store; the SQLite file's directory is made if missing. */
export async function openCheckpointStore(
  config: CheckpointConfig,
  options: OpenCheckpointOptions,
): Promise<CheckpointStore> {
  switch (config.type) {
    case 'sqlite':
      await mkdir(dirname(config.path), { recursive: true });
      return SqliteCheckpointStore.open(config.path, { clock: options.clock, logger: options.logger });
    case 'postgres':
      return PostgresCheckpointStore.open({
        url: config.url,
        schema: config.schema,
        ...(config.flushIntervalMs === undefined ? {} : { flushIntervalMs: config.flushIntervalMs }),
        timeoutMs: config.timeoutSeconds * 1000,
        holder: options.holder,
        ...(options.epoch === undefined ? {} : { epoch: options.epoch }),
        ...(options.fences === undefined ? {} : { fence: options.fences }),
        clock: options.clock,
        logger: options.logger,
        onFenced: options.onFenced,
      });
    case 'memory':
      return new MemoryCheckpointStore();
  }
}
