/**
 * Where a client keeps its offline queue so that it outlives the page or the app process: the
 * session (its id and next op number) and the ops not yet known committed. A client started on
 * the same storage takes the session over and sends those ops again with their numbers, so each
 * is applied once (the cluster's exactly-once records are keyed by session and number).
 *
 * Bring your own: anything with `load` and `save` (React Native's AsyncStorage in four lines, see
 * the README); `indexedDbStorage()` for browsers, `memoryStorage()` for tests.
 */
export interface OfflineStorage {
  /** The session saved last, or null if there is none. */
  load(): Promise<StoredSession | null>;
  /** Replaces what is saved. Called after each change, one call at a time. */
  save(session: StoredSession): Promise<void>;
}

/** What a client saves: plain JSON. */
export interface StoredSession {
  readonly version: 1;
  readonly session: string;
  readonly nextSeq: number;
  readonly ops: readonly StoredOp[];
  /**
   * Whose session it is: the signed-in user's id, or null for an anonymous client; absent when
   * not known yet (no replica had accepted the user's token). A client started on it that signs in
   * as someone else does not send these ops: they fail with SignedOut.
   */
  readonly user?: string | null;
}

/** An op of the session that is not known committed. */
export interface StoredOp {
  readonly seq: number;
  readonly op: string;
  readonly args: unknown;
  readonly level: 'weak' | 'strong';
  readonly stableOnly: boolean;
}

/** Keeps the session in this object: for tests, and for a client that wants no persistence. */
export function memoryStorage(): OfflineStorage & { readonly saved: StoredSession | null } {
  let saved: StoredSession | null = null;
  return {
    get saved() {
      return saved;
    },
    load: () => Promise.resolve(saved === null ? null : structuredCloneJson(saved)),
    save: (s) => {
      saved = structuredCloneJson(s);
      return Promise.resolve();
    },
  };
}

function structuredCloneJson<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

/** Checks what a storage loaded: a session this client version can take over, or why not. */
export function readStoredSession(raw: unknown): StoredSession | string {
  const s = raw as Partial<StoredSession> | null;
  if (typeof s !== 'object' || s === null) return 'it is not an object';
  if (s.version !== 1) return `it is version ${String(s.version)}, not 1`;
  if (typeof s.session !== 'string' || s.session.length === 0) return 'it has no session id';
  if (!Number.isSafeInteger(s.nextSeq) || (s.nextSeq ?? 0) < 1) return 'its nextSeq is not a count';
  if (!Array.isArray(s.ops)) return 'its ops are not a list';
  if (s.user !== undefined && s.user !== null && typeof s.user !== 'string')
    return 'its user is not a user id';
  for (const o of s.ops as Partial<StoredOp>[])
    if (
      !Number.isSafeInteger(o.seq) ||
      (o.seq ?? 0) >= (s.nextSeq ?? 0) ||
      typeof o.op !== 'string' ||
      (o.level !== 'weak' && o.level !== 'strong') ||
      typeof o.stableOnly !== 'boolean'
    )
      return `op ${JSON.stringify(o).slice(0, 80)} is not a stored op`;
  return s as StoredSession;
}
