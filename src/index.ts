/**
 * kube-raven: the table of contents. Re-exports only; anything not listed here is internal.
 */
export * from './errors/raven-error.js';
export * from './errors/error-codes.js';
export * from './errors/is-raven-error.js';
export * from './errors/api-error.js';
export * from './errors/classify.js';
export { systemClock, sleep, type Clock, type TimerHandle } from './util/clock.js';
export { silentLogger, type Logger } from './util/logger.js';
export * from './client/index.js';
export * from './watch/index.js';
export * from './cache/index.js';
export * from './queue/index.js';
export * from './informer/index.js';
export * from './controller/index.js';
