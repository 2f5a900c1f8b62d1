// The app model lives in @creek/app (so that a client reaches its types without server code);
// re-exported here so that `import { defineApp, op } from '@creek/server'` keeps working.
export {
  op,
  checkArgs,
  defineApp,
  builtins,
  NOOP_OP,
  canonicalJson,
  jsonEqual,
  toFrozenJson,
  checkAccess,
  type AccessDenied,
  type AppOptions,
  type BuiltinAccess,
  type User,
  type App,
  type Tx,
  type OpDefinition,
  type OpDefinitions,
  type AnyOpDefinition,
  type Builtins,
  type JsonValue,
} from '@creek/app';
export { DottedVersionVector } from './dvv.js';
export { HybridLogicalClock, hlcToMillis } from './hlc.js';
export { brokenInvariants, type InvariantViolation } from './invariant-check.js';
export { ReplicaMetrics } from './metrics.js';
export { opKey, formatOpId, sameOpId, type OpId } from './op-id.js';
export { Replica, type ReplicaOptions, type InvokeRequest, type ReplicaStats } from './replica.js';
export { runOperation, errorMessage } from './run-operation.js';
export { opRandom } from './seeded-random.js';
export { VersionStore } from './version-store.js';
export { compareReq } from './types.js';
export type * from './types.js';
