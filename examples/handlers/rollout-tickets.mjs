// A custom handler for `raven run` (examples/configs/team-namespaces.yaml): each Deployment
// rollout (a new generation) becomes a ticket in the team's format, logged here; a real one would
// POST it to the ticketing system with `options.apiToken`. Configure it with:
//
//   handlers:
//     - name: rollout-tickets
//       module: ../handlers/rollout-tickets.mjs
//       watchers: [payments-deployments]
//       events: [modified]
//       options: { project: OPS, apiToken: '${TICKETS_TOKEN:-dev-token}' }
//
// The default export is a factory receiving `options`; `handle` is called for each routed change,
// one at a time, in order.

export default function rolloutTickets(options) {
  const project = String(options.project ?? 'OPS');
  let next = 1;
  return {
    start(context) {
      context.logger.info({ project }, 'filing rollout tickets');
    },
    handle(event, context) {
      const images = (event.object?.spec?.template?.spec?.containers ?? []).map((c) => c.image);
      const ticket = {
        id: `${project}-${next++}`,
        summary: `Rollout of ${event.namespace}/${event.name}`,
        generation: event.object?.metadata?.generation,
        images,
        changed: event.diff.map((d) => d.path),
      };
      context.logger.info({ ticket }, 'rollout ticket');
    },
  };
}
