import { describeClientVersions, SPOKEN_CLIENT_VERSIONS, type ServerFrame } from '@creek/protocol';
import { errorFromWire, ProtocolError, Unauthorized, type CreekError } from '../errors.js';
import type { Failover } from './failover.js';
import type { OpTable, SessionOp } from './op-table.js';
import type { SignIn } from './sign-in.js';

// How a client session takes a replica's refusals: of one op (busy, unavailable), and error frames
// that name no op (a refused token, version or hello, a frame the replica could not read). Rules
// of ClientSession (client-session.ts), kept here to keep that file to its events.

/** What the rules read and act on: the session's parts and its current connection. */
export interface RefusalContext {
  readonly failover: Failover;
  readonly ops: OpTable;
  readonly signIn: SignIn;
  /** The current connection's number, whether the session still listens to it, and is welcomed. */
  connection(): number;
  attached(): boolean;
  ready(): boolean;
  /** Drops the connection for the next replica, noting why (its ops are resubmitted there). */
  leave(problem: string): void;
  /** Closes the connection; its close comes as any other (the next replica is tried). */
  drop(): void;
  /** The session takes no more ops: each fails with `make`'s error. */
  refuse(make: (sent: boolean) => CreekError): void;
}

/**
 * The replica did not take the op (busy, or unavailable: paused, shutting down, catching up).
 * Unavailable with another replica to try: leave this one, and the op goes there. Otherwise the
 * caller gets the error, saying whether the op may still take effect: if no replica took it
 * (every send refused) it is forgotten, never resubmitted, so a caller retrying as told does not
 * apply it twice; if an earlier send may have landed, it stays and is resubmitted (applied once).
 */
export function opRefused(
  s: RefusalContext,
  o: SessionOp,
  code: 'busy' | 'unavailable',
  message: string,
): void {
  if (o.sentOn !== s.connection()) return; // an answer to an earlier send, since resubmitted
  o.refusals++;
  if (code === 'unavailable' && s.failover.several) {
    if (s.attached()) s.leave(`unavailable: ${message}`);
    return;
  }
  const mayHaveTakenEffect = o.refusals < o.sends;
  if (!mayHaveTakenEffect) o.committed = true; // never ordered: nothing to resubmit or wait for
  o.views?.error(errorFromWire(code, message, mayHaveTakenEffect));
  s.ops.answered(o);
}

/**
 * An error frame that names no op: about the connection, or about a frame the replica could not
 * read far enough to find its op id (protocol codec.ts names it whenever it can).
 */
export function errorNamingNoOp(
  s: RefusalContext,
  url: string,
  f: Extract<ServerFrame, { t: 'error' }>,
): void {
  s.failover.problem(url, `${f.code}: ${f.message}`);
  if (f.code === 'unauthorized') {
    // The cluster's token, or the user's, refused: the session ends (a refused user may be
    // replaced with setAuth). Ops sent on an earlier connection may have taken effect there.
    const make = s.signIn.signsIn
      ? s.signIn.refused(f.message)
      : (sent: boolean) => new Unauthorized(f.message, { mayHaveTakenEffect: sent });
    s.refuse(make);
    return s.ops.failAll((o) => make(o.sends > o.refusals));
  }
  // The replica closes the connection (it has not caught up with this session, or it is
  // shutting down), and the session tries the next one.
  if (f.code === 'unavailable') return;
  if (f.code === 'version') {
    // Another replica may speak this client's version; if none does, ops fail after the
    // connect timeout, with this problem in the message.
    s.drop();
    return;
  }
  if (!s.ready()) {
    // The hello was refused: this client cannot use this replica. Its ops fail now, rather than
    // at the connect timeout; the session goes on to the next replica.
    const why = `the replica at ${url} refused this client's hello (${f.code}: ${f.message})`;
    s.ops.failAll((o) => new ProtocolError(why, { mayHaveTakenEffect: o.sentOn > 0 }));
    s.drop();
    return;
  }
  // One of the frames sent on this connection was refused, and nothing says which: fail every op
  // sent on it that has no answer yet, and stop tracking them, so that the refused frame is not
  // resubmitted at the next connection.
  const why = `the replica at ${url} refused a frame without naming its op (${f.code}: ${f.message}); this op had no answer yet: if its frame was the one refused it was not applied, otherwise it may still be`;
  for (const o of [...s.ops.values()]) {
    if (o.views === null || o.sentOn !== s.connection()) continue;
    o.views.error(new ProtocolError(why));
    s.ops.delete(o.opId);
  }
}

/**
 * A welcome at a client protocol version this client does not speak (a replica must answer with
 * one both speak, client-versions.ts): the replica is left as after a `version` error, another may
 * speak this client's versions. True when it was.
 */
export function welcomedAtUnspokenVersion(
  s: RefusalContext,
  url: string,
  version: number,
): boolean {
  const { oldest, newest } = SPOKEN_CLIENT_VERSIONS;
  if (version >= oldest && version <= newest) return false;
  const speaks = describeClientVersions(SPOKEN_CLIENT_VERSIONS);
  s.failover.problem(
    url,
    `version: the replica welcomed this client at client protocol ${version}, and this client speaks ${speaks}`,
  );
  s.drop();
  return true;
}
