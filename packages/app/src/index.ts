/**
 * `@creek/app`: what an application is made of, shared by the replica that runs it and the client
 * that calls it. Its types are how `connect<typeof app>()` knows each op's arguments and result, so
 * a client project needs this package (and Zod), never the server.
 *
 * Pure and portable: no Node built-ins, so it runs in replicas, workers, browsers and React Native.
 *
 * @module @creek/app
 */
export {
  op,
  checkArgs,
  RESERVED_PREFIXES,
  type App,
  type Tx,
  type OpDefinition,
  type OpDefinitions,
  type AnyOpDefinition,
  type ArgsCheck,
  type AppOptions,
  type BuiltinAccess,
  type ContextAccess,
  type OpAccess,
  BUILTIN_ACCESS,
  OP_LEVELS,
  type OpLevel,
  type ArgsGenerator,
  type Invariant,
  type StateReader,
} from './app.js';
export { checkAccess, type AccessDenied } from './access.js';
export type { User } from './user.js';
export { defineApp } from './define-app.js';
export {
  ABANDON_OP,
  builtins,
  CLOSE_OP,
  CONTEXT_FRONTIER_OP,
  CONTEXT_MERGE_OP,
  MAX_CONTEXT_ID_CHARS,
  NOOP_OP,
  type Builtins,
} from './builtins.js';
export { adoptFrozenJson, canonicalJson, jsonEqual, toFrozenJson, type JsonValue } from './json.js';
