export {
  op,
  type App,
  type Tx,
  type OpDefinition,
  type OpDefinitions,
  type AnyOpDefinition,
  checkArgs,
} from './app.js';
export { defineApp } from './define-app.js';
export { builtins, NOOP_OP, type Builtins } from './builtins.js';
export { DottedVersionVector } from './dvv.js';
export { HybridLogicalClock, hlcToMillis } from './hlc.js';
export { canonicalJson, jsonEqual, toFrozenJson, type JsonValue } from './json.js';
export { ReplicaMetrics } from './metrics.js';
export { opKey, formatOpId, sameOpId, type OpId } from './op-id.js';
export { Replica, type ReplicaOptions, type InvokeRequest, type ReplicaStats } from './replica.js';
export { runOperation, errorMessage } from './run-operation.js';
export { opRandom } from './seeded-random.js';
export { VersionStore } from './version-store.js';
export { compareReq } from './types.js';
export type * from './types.js';
