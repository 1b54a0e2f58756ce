/** The cache's public surface. Re-exports only. */
export {
  objectKey,
  makeObjectKey,
  parseObjectKey,
  toObjectKey,
  type ObjectKey,
  type ObjectKeyParts,
} from '../client/object-key.js';
export {
  deepFreeze,
  mutableCopy,
  type DeepReadonly,
  type DeepWritable,
  type FreezeMode,
} from './deep-freeze.js';
export { dropManagedFields } from '../watch/decode/drop-managed-fields.js';
export {
  NAMESPACE_INDEX,
  type IndexFunc,
  type Indexers,
  type StoreReader,
  type StoreWriter,
  type StoreChange,
  type ReplaceResult,
  type SyncStatus,
  type Store,
} from './store.js';
export { MemoryStore, type MemoryStoreOptions } from './memory-store.js';
