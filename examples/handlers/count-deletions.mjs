// A custom handler for `raven run`: it counts deletions per namespace and logs each one, reading
// the watcher's cache to report how many objects are left. Configure it with:
//
//   handlers:
//     - name: count-deletions
//       module: ./handlers/count-deletions.mjs
//       watchers: [pods]
//       events: [deleted]
//       options: { warnAbove: 10 }
//
// The module's default export is a factory receiving `options` (it may also export the handler
// object itself). `handle` is called for each routed change, one at a time, in order; a throw is
// logged and counted (raven_handler_errors_total) and the next change is delivered.

export default function countDeletions(options) {
  const warnAbove = Number(options.warnAbove ?? 10);
  const perNamespace = new Map();
  return {
    start(context) {
      context.logger.info({ warnAbove }, 'counting deletions');
    },
    handle(event, context) {
      const count = (perNamespace.get(event.namespace) ?? 0) + 1;
      perNamespace.set(event.namespace, count);
      const left = context
        .cache(event.watcher)
        .list()
        .filter((o) => o.metadata?.namespace === event.namespace).length;
      const log =
        count > warnAbove
          ? context.logger.warn.bind(context.logger)
          : context.logger.info.bind(context.logger);
      log(
        { namespace: event.namespace, name: event.name, deletions: count, left, inferred: event.tombstone },
        'deleted',
      );
    },
  };
}
