/**
 * `kube-raven/shard`: splitting one resource's objects between replicas by a hash of their
 * name (the arithmetic behind `watch({ shard })` and the daemon's sharding). Re-exports only;
 * the names and signatures are pinned by `api/kube-raven-shard.api.md`.
 */
export { fnv1a64, fnv1a64Hex } from './fnv1a64.js';
export {
  HASH_SPACE_END,
  inShard,
  shardSelector,
  splitHashSpace,
  type Shard,
  type ShardField,
  type ShardRange,
} from './shard.js';
export { assignHashSpace, type AssignHashSpaceOptions } from './assign-hash-space.js';
