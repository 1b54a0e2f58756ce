/** Controllers' public surface. Re-exports only. */
export {
  Controller,
  ownerKeys,
  type ControllerOptions,
  type ControllerStatus,
  type Reconcile,
  type ReconcileContext,
  type Trigger,
} from './controller.js';
export { addFinalizer, removeFinalizer, hasFinalizer, type FinalizerClient } from './finalizers.js';
export {
  LeaderElector,
  microTime,
  type LeaderElectionOptions,
  type LeaderTerm,
  type LeaseClient,
} from './leader-election.js';
export { LeaseGroup, type LeaseGroupOptions } from './lease-group.js';
