import { MemoryCheckpointStore } from '../../../../src/raven/checkpoint/memory-checkpoint-store.js';
import { checkpointStoreContract } from './checkpoint-store-contract.js';

checkpointStoreContract('MemoryCheckpointStore', () => ({
  open: () => new MemoryCheckpointStore(),
  persists: false,
  cleanup: () => undefined,
}));
