/**
 * The newest version of the client protocol (client.ts) this build speaks. A client and a replica
 * negotiate the version their connection runs at (client-versions.ts); bumped on any change of a
 * client frame that a build speaking the previous version would misread. 2: context tokens (the
 * `context` frames, and a hello's `after`, which a replica of version 1 drops without a word: a
 * client welcomed at 1 does not count on it, see context-token.ts).
 */
export const PROTOCOL_VERSION = 2;

/**
 * The longest context token (context-token.ts): 64 counts of up to 16 digits, their dashes, the
 * prefix and the MAC, with room to spare. Longer is refused before it is read.
 */
export const MAX_CONTEXT_TOKEN_CHARS = 1_200;

/** The client protocol version that brought context tokens (`context` frames, a hello's `after`). */
export const CONTEXT_SINCE = 2;

/**
 * The oldest version of the client protocol this build still speaks, on both sides: a replica
 * serves clients of any release that speaks it, and a client any such replica, so clients and
 * replicas may be upgraded in either order, one release at a time. Raised as PEER_PROTOCOL_OLDEST
 * is: only after a release that spoke both the old and the new version.
 */
export const CLIENT_PROTOCOL_OLDEST = 1;

/**
 * The newest version of the replica-to-replica protocol this build speaks. 2: both sides prove the
 * cluster secret (version 1 trusted any welcome), each proof bound to both replicas' ids. 3: Reqs
 * carry their caller (`user`), which a replica of version 2 would drop without a word (its schema
 * strips unknown fields) and then run the op as anonymous: replicas that would disagree about an
 * op's caller do not talk. 4: dead origins close, through the built-in strong op `creek.close` in
 * the log (CLOSE_SINCE), which a replica of version 3 would run as an unknown op, keeping the ops
 * the others drop; no message changed, so a link at 3 still carries all of it.
 */
export const PEER_PROTOCOL_VERSION = 4;

/**
 * The peer protocol version that brought `creek.close` (a new kind of log entry every member must
 * apply alike): a replica proposes one only once the cluster version is at least this, when every
 * member runs a release that applies it.
 */
export const CLOSE_SINCE = 4;

/**
 * The oldest version of the replica-to-replica protocol this build still speaks: a link runs at the
 * newest version both its ends speak (peer-versions.ts), so a cluster can be upgraded one replica
 * at a time from any release that speaks this version. Raised only after a release that spoke both
 * the old and the new version (one step at a time), or when speaking the old one became unsafe.
 */
export const PEER_PROTOCOL_OLDEST = 3;

/** Frames larger than this are refused before they are parsed. */
export const MAX_FRAME_BYTES = 1 << 20;

/**
 * The longest user token (a JSON Web Token) a replica verifies: longer ones are refused unread.
 * Identity providers' tokens run from a few hundred characters to a few kilobytes.
 */
export const MAX_AUTH_TOKEN_CHARS = 8192;

/** Most invocations one client connection may have in flight; more are refused with `busy`. */
export const MAX_IN_FLIGHT_PER_CONNECTION = 1024;

/**
 * Most of a session's ops one live-query result lists as missing or as failed (`own.missing`,
 * `own.failed`): a bound on the frame whatever a client leaves unacknowledged.
 */
export const MAX_OWN_OPS_LISTED = 1024;

/**
 * Most causes a view carries when it corrects an answer its client was shown (an explained
 * correction), and the longest key a cause names (longer ones are cut): a bound on the frame
 * whatever the op read.
 */
export const MAX_CORRECTION_CAUSES = 4;
export const MAX_CAUSE_KEY_CHARS = 96;
