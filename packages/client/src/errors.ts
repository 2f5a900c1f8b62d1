import type { ErrorCode } from '@creek/protocol';
import { indeterminacyOf, settleIndeterminacy, type Indeterminate } from './indeterminacy.js';
import { WATCH_A_READ, WATCHED_WRITE } from './watch-refusal.js';

/**
 * Errors the Creek client reports. Every one extends {@link CreekError}, carries a stable `code`
 * to switch on, and a message that says what to do about it.
 */
export type CreekErrorCode =
  | 'invalid-arguments'
  | 'operation-failed'
  | 'unavailable'
  | 'timeout'
  | 'unauthorized'
  | 'forbidden'
  | 'protocol'
  | 'cancelled'
  | 'closed'
  | 'token-expired'
  | 'signed-out'
  | 'auth-failed';

export type { Fate, Indeterminate } from './indeterminacy.js';

export class CreekError extends Error {
  readonly code: string;

  constructor(
    code: string,
    message: string,
    options?: { cause?: unknown; mayHaveTakenEffect?: boolean },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.name = new.target.name;
    settleIndeterminacy(this, options?.mayHaveTakenEffect ?? false);
  }

  /**
   * Whether the op may have taken effect, or may still: false means it certainly did not and will
   * not (retrying cannot apply it twice); true means its fate is unknown here.
   */
  get mayHaveTakenEffect(): boolean {
    return indeterminacyOf(this).may;
  }

  /**
   * When the op may have taken effect and the client that invoked it is still open: the way to
   * learn its fate or abandon it. Null otherwise (it certainly did not take effect, or the client
   * was closed).
   */
  get indeterminate(): Indeterminate | null {
    return indeterminacyOf(this).handle;
  }
}

export interface InvalidArgumentsDetails {
  op?: string;
  field?: string;
  fields?: readonly string[];
  /** What is wrong, in words. */
  problem: string;
  /** What to do about it, when not "fix the arguments to match the op's schema". */
  fix?: string;
}

/** The op's arguments failed its schema: nothing was applied. `field` names the first bad field. */
export class InvalidArguments extends CreekError {
  declare readonly code: 'invalid-arguments';
  /** The op whose arguments were rejected, when known. */
  readonly op: string | undefined;
  /** The first offending field as a dotted path (`'(arguments)'` for the whole value). */
  readonly field: string | undefined;
  /** Every offending field, in the order the validator reported them. */
  readonly fields: readonly string[];

  /**
   * From details, or from a replica's message (`invalid arguments for 'op': field: problem; …`),
   * whose fields are read out of it.
   */
  constructor(details: string | InvalidArgumentsDetails, options?: { cause?: unknown }) {
    const d = typeof details === 'string' ? parseServerMessage(details) : details;
    const fields = d.fields ?? (d.field === undefined ? [] : [d.field]);
    const field = d.field ?? fields[0];
    const what = d.op === undefined ? 'invalid arguments' : `invalid arguments for '${d.op}'`;
    const where = field === undefined ? '' : ` (field '${field}')`;
    super(
      'invalid-arguments',
      `${what}${where}: ${d.problem} — ${d.fix ?? "fix the arguments to match the op's schema"}; nothing was applied`,
      options,
    );
    this.op = d.op;
    this.field = field;
    this.fields = fields;
  }
}

/**
 * Reads a replica's message of the form `invalid arguments for 'op': field: problem; field: problem`
 * (what the server's argument check produces); other text is kept whole as the problem.
 */
function parseServerMessage(message: string): InvalidArgumentsDetails {
  const m = /^invalid arguments for '([^']*)': (.*)$/s.exec(message);
  if (m === null) return { fields: [], problem: message };
  const problem = m[2] ?? '';
  const fields: string[] = [];
  for (const part of problem.split('; ')) {
    const colon = part.indexOf(': ');
    if (colon > 0) fields.push(part.slice(0, colon));
  }
  return { op: m[1] ?? '', fields, problem };
}

/** The op's own code threw (or returned an error outcome); `reason` is the op's message. */
export class OperationFailed extends CreekError {
  declare readonly code: 'operation-failed';
  readonly op: string | undefined;
  /** The message the op failed with, unchanged. */
  readonly reason: string;

  /**
   * From details, or from the op's message alone. A weak op's failure is its tentative answer: the
   * op still runs at its place in the committed order and may succeed there, so the client marks
   * it `mayHaveTakenEffect` (with an `indeterminate` handle); a strong op's failure is final.
   */
  constructor(
    details: string | { op?: string; reason: string },
    options?: { cause?: unknown; mayHaveTakenEffect?: boolean },
  ) {
    const d = typeof details === 'string' ? { reason: details } : details;
    const what = d.op === undefined ? 'the operation' : `operation '${d.op}'`;
    super(
      'operation-failed',
      `${what} failed: ${d.reason} — this is the app's own error; handle it like any rejected call`,
      options,
    );
    this.op = d.op;
    this.reason = d.reason;
  }
}

/**
 * No replica answered in time, or the replica refused the op for now (it is paused, shutting down
 * or still catching up). `mayHaveTakenEffect` says whether the op may still be applied: false when
 * it never reached a replica that took it (it was not sent, or every replica it was sent to refused
 * it), and then the client has forgotten it, so retrying cannot apply it twice; true when it was
 * sent and not refused (the Creek client then resubmits it once a replica answers, applied once).
 */
export class Unavailable extends CreekError {
  declare readonly code: 'unavailable';

  constructor(detail?: string, options: { cause?: unknown; mayHaveTakenEffect?: boolean } = {}) {
    const { mayHaveTakenEffect = false, ...rest } = options;
    super(
      'unavailable',
      `${detail ?? 'no replica answered'}; ${
        mayHaveTakenEffect
          ? 'the op was sent, so it may have taken effect or may still: do not simply invoke it again'
          : 'the op was not applied'
      }: try again later, and check that the cluster is running and reachable at the addresses you passed`,
      { ...rest, mayHaveTakenEffect },
    );
  }
}

/** The per-call timeout elapsed before the final view arrived. */
export class Timeout extends CreekError {
  declare readonly code: 'timeout';
  readonly timeoutMs: number;

  constructor(timeoutMs: number, options?: { cause?: unknown }) {
    super(
      'timeout',
      `no final view within ${timeoutMs} ms: raise timeoutMs, or see error.mayHaveTakenEffect before you retry (error.indeterminate can await the op's fate or abandon it)`,
      { ...options, mayHaveTakenEffect: true },
    );
    this.timeoutMs = timeoutMs;
  }
}

/**
 * The cluster wants a token and got none, or a wrong one; or, for one op, the op needs a signed-in
 * user (or is closed to end users) and the client is anonymous: the op was not applied.
 */
export class Unauthorized extends CreekError {
  declare readonly code: 'unauthorized';

  /**
   * `mayHaveTakenEffect`: for an op sent on an earlier connection before a replica refused the
   * client's token on a later one (the op may have been applied there).
   */
  constructor(detail?: string, options?: { cause?: unknown; mayHaveTakenEffect?: boolean }) {
    super(
      'unauthorized',
      `missing or wrong token: ${detail ?? "pass the cluster's token when connecting"}${options?.mayHaveTakenEffect === true ? '; the op was sent before, on an earlier connection, so it may have taken effect' : ''}`,
      options,
    );
  }
}

/**
 * The signed-in user's token expired and no fresh one was accepted (the app's `auth` could not
 * give one, or gave one the replicas refused): the user's session ended. Ops waiting for an answer
 * fail with it (`mayHaveTakenEffect`: the op had been sent), and so does every later call, until
 * `client.setAuth` gives the client a way to sign in again.
 */
export class TokenExpired extends CreekError {
  declare readonly code: 'token-expired';

  constructor(detail: string, options: { cause?: unknown; mayHaveTakenEffect?: boolean } = {}) {
    super(
      'token-expired',
      `the user's token expired and no fresh one was accepted (${detail}); ${
        options.mayHaveTakenEffect === true
          ? 'the op was sent, so it may have taken effect as that user'
          : 'the op was not applied'
      } — sign the user in again with client.setAuth (or give connect an auth function that returns a fresh token)`,
      options,
    );
  }
}

/**
 * The client's user changed (`client.setAuth`: another user, or signed out; or the app's `auth`
 * function started returning another user's token) before this op was answered, or this live
 * query ended: the previous user's session ended with it, and nothing of it carries over to the
 * next user. `mayHaveTakenEffect`: the op had been sent, and may still be applied, as the previous
 * user; otherwise it was never sent and never will be.
 */
export class SignedOut extends CreekError {
  declare readonly code: 'signed-out';

  constructor(detail: string, options: { cause?: unknown; mayHaveTakenEffect?: boolean } = {}) {
    super(
      'signed-out',
      `${detail}: the previous user's session ended before this was answered; ${
        options.mayHaveTakenEffect === true
          ? 'the op was sent, so it may still take effect, as the previous user'
          : 'it was not sent and never will be'
      } — invoke it again if the new user should`,
      options,
    );
  }
}

/**
 * The app's `auth` function (connect's or setAuth's) threw, rejected or returned no token. The
 * client reports it in `client.identity().error` and asks the function again: at its next
 * connection when it had no token to connect with, or before the current token expires when it
 * wanted a fresh one.
 */
export class AuthFailed extends CreekError {
  declare readonly code: 'auth-failed';

  constructor(detail: string, options?: { cause?: unknown }) {
    super(
      'auth-failed',
      `the auth function gave no token: ${detail} — the client asks it again; if it cannot sign the user in, call client.setAuth(null) or another user's`,
      options,
    );
  }
}

/**
 * The signed-in user may not call this op: its access check said no, or the app keeps the op to
 * itself. The op was not applied (`mayHaveTakenEffect` is false).
 */
export class Forbidden extends CreekError {
  declare readonly code: 'forbidden';

  constructor(detail: string, options?: { cause?: unknown }) {
    super('forbidden', `forbidden: ${detail}`, options);
  }
}

/**
 * One side broke the wire protocol (a malformed frame, a version mismatch, a frame out of order).
 * `mayHaveTakenEffect` says whether the op may still be applied (false: its frame was refused).
 */
export class ProtocolError extends CreekError {
  declare readonly code: 'protocol';

  constructor(detail: string, options: { cause?: unknown; mayHaveTakenEffect?: boolean } = {}) {
    const { mayHaveTakenEffect = true, ...rest } = options;
    super(
      'protocol',
      `protocol error: ${detail}; ${mayHaveTakenEffect ? 'the op may still take effect at the replicas' : 'the op was not applied'} — make sure client and replicas run the same Creek version; if they do, this is a bug worth reporting`,
      { ...rest, mayHaveTakenEffect },
    );
  }
}

/**
 * The client was closed (`close()`) before the op was answered, or before it was invoked.
 * `mayHaveTakenEffect`: the op had been sent, and the replicas may still apply it.
 */
export class ClientClosed extends CreekError {
  declare readonly code: 'closed';

  constructor(mayHaveTakenEffect: boolean, options?: { cause?: unknown }) {
    super(
      'closed',
      mayHaveTakenEffect
        ? 'the client was closed before this op was answered: it was sent and may still take effect at the replicas'
        : 'the client is closed (close() was called): nothing was sent; make a new client with connect() to invoke',
      { ...options, mayHaveTakenEffect },
    );
  }
}

/** The caller aborted the call through its AbortSignal. */
export class Cancelled extends CreekError {
  declare readonly code: 'cancelled';

  constructor(reason?: unknown) {
    const why =
      reason instanceof Error
        ? `: ${reason.message}`
        : typeof reason === 'string'
          ? `: ${reason}`
          : '';
    super(
      'cancelled',
      `the call was cancelled through its AbortSignal${why}; see error.mayHaveTakenEffect (error.indeterminate can await the op's fate or abandon it)`,
      reason === undefined
        ? { mayHaveTakenEffect: true }
        : { cause: reason, mayHaveTakenEffect: true },
    );
  }
}

/**
 * Maps a replica's error frame (`{ t: 'error', code, message }`) to the client error to report.
 * `mayHaveTakenEffect` is for a refusal that may leave the op applied elsewhere (busy, unavailable:
 * the op may have been sent to another replica before).
 */
export function errorFromWire(
  code: ErrorCode,
  message: string,
  mayHaveTakenEffect = false,
): CreekError {
  switch (code) {
    case 'invalid-arguments': {
      const writes = WATCHED_WRITE.exec(message);
      if (writes !== null)
        return new InvalidArguments({
          op: writes[1] ?? '',
          field: 'op',
          problem: message,
          fix: WATCH_A_READ,
        });
      return new InvalidArguments(message);
    }
    case 'unknown-op':
      return new InvalidArguments({
        field: 'op',
        problem: message,
        fix: 'check the op name: the cluster serves the ops of the app it was started with',
      });
    case 'unauthorized':
      return new Unauthorized(message);
    case 'forbidden':
      return new Forbidden(message);
    case 'unavailable':
    case 'busy':
      return new Unavailable(message, { mayHaveTakenEffect });
    case 'bad-frame':
    case 'version':
    case 'out-of-order':
      // An error frame naming an op refuses that op's frame: it was not applied.
      return new ProtocolError(`the replica refused the op's frame (${code}: ${message})`, {
        mayHaveTakenEffect: false,
      });
  }
}
