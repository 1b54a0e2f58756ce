/**
 * The watch layer's public surface. Re-exports only.
 */
export { watch, Watcher, type WatcherOptions, type WatchTransport, type WatchEncoding } from './watcher.js';
export { watchResource, ScopedWatcher, type WatchResourceOptions } from './watch-resource.js';
export { onEvents, type WatchHandlers } from './on-events.js';
export type { WatcherEvent, WatcherStatus, WatcherPhase } from './watcher-events.js';
export { Backoff, type BackoffOptions } from '../util/backoff.js';
export { decodeWatchEvents, type DecodeWatchOptions } from './decode/decode-watch-events.js';
export { decodeList, ListStream, type DecodeListOptions, type ListResult } from './decode/decode-list.js';
export type { WatchEvent } from './decode/watch-event.js';
export { decodeCbor, CborError, type DecodeCborOptions } from './decode/cbor.js';
export type { ObjectPeek, WatchEventPeek } from './decode/peek.js';
export { StreamDecodeError } from './decode/stream-decode-error.js';
export { parseLabelSelector } from './scope/parse-label-selector.js';
export { LabelSelector, labelSelectorFromObject, type LabelRequirement } from './scope/label-selector.js';
export { parseFieldSelector, FieldSelector } from './scope/field-selector.js';
export { parseNamespaceScope, NamespaceScope, type NamespaceScopeSpec } from './scope/namespace-scope.js';
export { SelectorError } from './scope/selector-error.js';
export { fnv1a64, fnv1a64Hex } from './shard/fnv1a64.js';
export {
  HASH_SPACE_END,
  inShard,
  shardSelector,
  splitHashSpace,
  type Shard,
  type ShardField,
  type ShardRange,
} from './shard/shard.js';
export { assignHashSpace, type AssignHashSpaceOptions } from './shard/assign-hash-space.js';
