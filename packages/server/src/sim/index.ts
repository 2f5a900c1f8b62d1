/**
 * The deterministic simulator: seeded runs of whole clusters with faults, and the checkers of
 * every guarantee.
 *
 * @module @creek/server/sim
 */
export {
  runSimulation,
  type SimConfig,
  type SimResult,
  type SimStats,
  type SimParameters,
  type SimFrame,
  type SimReplicaFrame,
  type FrameOp,
  type FrameMessage,
  type FrameOpLife,
  FAULT_MODES,
  CLIENT_MODES,
  STORAGE_FAULTS,
  type StorageFault,
  type ClientMode,
  type SessionStats,
  type SessionParameters,
  FRAME_LIST,
  FRAME_MESSAGES,
  FRAME_OPS,
  type FaultMode,
} from './simulation.js';
export { checkRun } from './checkers.js';
export { PLANTED_BUGS, PLANTED_BUG_NAMES, type PlantedBug } from './planted-bugs.js';
export { catchUpGrowth, type CatchUpWork } from './catch-up.js';
export { drawReconfiguration, RECONFIG_SHARE, type ReconfigScenario } from './reconfiguration.js';
export { ReferenceInterpreter } from './reference-interpreter.js';
export {
  checkLinearizable,
  type HistoryOp,
  type LinearizabilityResult,
  type Model,
} from './linearizability.js';
export { queueModel, type QueueState } from './builtin-models.js';
export { Prng } from './prng.js';
export { simApp, generateOp } from './workload.js';
export type { RunRecord, Invocation } from './run-record.js';
export type { SpeculationCounts } from '@creek/replica/core/metrics.js';
export { EventQueue } from './event-queue.js';
export type { SimTrace } from './trace.js';
