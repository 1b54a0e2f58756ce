/** Informers' public surface. Re-exports only. */
export {
  Informer,
  type InformerOptions,
  type InformerSource,
  type InformerStatus,
  type HandlerOptions,
  type HandlerRegistration,
} from './informer.js';
export type { InformerEvent, EventHandlers } from './informer-events.js';
export { reflect, type ReflectorOutput } from './reflector.js';
export {
  SharedInformers,
  specKey,
  type InformerSpec,
  type SharedInformersOptions,
  type SharedWatcherSettings,
} from './shared-informers.js';
