import { CLIENT_PROTOCOL_OLDEST, CONTEXT_SINCE, PROTOCOL_VERSION } from './limits.js';
import {
  describePeerVersions,
  linkVersion,
  versionAllows,
  type PeerVersions,
} from './peer-versions.js';

/**
 * Versions of the client protocol, negotiated at connect as the peer protocol's are
 * (peer-versions.ts), so that clients and replicas can be upgraded one release at a time, in
 * either order: apps ship SDK upgrades on their own schedule, and a browser tab or a phone may run
 * last month's SDK for a long time.
 *
 * - A hello says the versions its client speaks: `version` (its oldest, which every build before
 *   negotiation compared exactly) and `newest` (absent: `version` alone).
 * - The replica answers with the newest version both speak, in the welcome's `version`; the
 *   connection runs at it. Ranges that do not overlap are refused with the error `version`, naming
 *   both (the client then tries its other replicas).
 * - A client frame kind, or a server frame kind, newer than CLIENT_PROTOCOL_OLDEST is listed in
 *   CLIENT_FRAME_SINCE with the version that introduced it, and is sent on a connection only once
 *   the connection's version allows it (the replica checks every frame it sends).
 *
 * No cluster-wide switch is needed: each connection runs at its own version, and a client that
 * moves to another replica negotiates again there.
 */
export type ClientVersions = PeerVersions;

/** The client protocol versions this build speaks, in its SDK and in its replicas. */
export const SPOKEN_CLIENT_VERSIONS: ClientVersions = Object.freeze({
  oldest: CLIENT_PROTOCOL_OLDEST,
  newest: PROTOCOL_VERSION,
});

/** The versions a hello says its client speaks (a hello without `newest` speaks `version` only). */
export function helloVersions(hello: {
  readonly version: number;
  readonly newest?: number | undefined;
}): ClientVersions {
  return { oldest: hello.version, newest: hello.newest ?? hello.version };
}

/**
 * What a hello says of the versions its client speaks: a build that speaks one version says
 * `version` alone, as every build before negotiation did (and as such builds' replicas expect).
 */
export function helloVersionFields(ours: ClientVersions = SPOKEN_CLIENT_VERSIONS): {
  readonly version: number;
  readonly newest?: number;
} {
  return ours.newest === ours.oldest
    ? { version: ours.oldest }
    : { version: ours.oldest, newest: ours.newest };
}

/**
 * A replica speaking `ours` answers a hello: the version the connection runs at, or the message
 * of the `version` error that refuses it.
 */
export function negotiateClientVersion(
  ours: ClientVersions,
  hello: { readonly version: number; readonly newest?: number | undefined },
):
  | { readonly ok: true; readonly version: number }
  | { readonly ok: false; readonly message: string } {
  const theirs = helloVersions(hello);
  if (theirs.newest < theirs.oldest)
    return {
      ok: false,
      message: `the hello's newest version (${theirs.newest}) is below its version (${theirs.oldest}): a hello names the oldest and the newest client protocol version its client speaks`,
    };
  const version = linkVersion(ours, theirs);
  if (version !== null) return { ok: true, version };
  const older = theirs.newest < ours.oldest ? 'client' : 'replica';
  return {
    ok: false,
    message: `this replica speaks client protocol ${describeClientVersions(ours)}, the client ${describeClientVersions(theirs)}: upgrade the ${older} (a release speaks the version before its own too, so upgrade one release at a time)`,
  };
}

/**
 * The version that introduced each client or server frame kind newer than CLIENT_PROTOCOL_OLDEST,
 * keyed by the frame's `t`. Kinds not listed are spoken by every version this build speaks.
 */
export const CLIENT_FRAME_SINCE: ReadonlyMap<string, number> = new Map<string, number>([
  // A client's request for a context token, and the replica's answer.
  ['context', CONTEXT_SINCE],
]);

/** Whether a connection at `version` may carry frames of kind `t`. */
export function clientFrameAllowed(
  version: number,
  t: string,
  since: ReadonlyMap<string, number> = CLIENT_FRAME_SINCE,
): boolean {
  const from = since.get(t);
  return from === undefined || versionAllows(version, from);
}

/** A range as people read it: `1`, or `1 to 2`. */
export const describeClientVersions: (r: ClientVersions) => string = describePeerVersions;
