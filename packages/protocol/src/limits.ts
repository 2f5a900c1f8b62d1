/** Bumped on any incompatible change of a message below; peers and clients must match. */
export const PROTOCOL_VERSION = 1;

/** Frames larger than this are refused before they are parsed. */
export const MAX_FRAME_BYTES = 1 << 20;

/** Most invocations one client connection may have in flight; more are refused with `busy`. */
export const MAX_IN_FLIGHT_PER_CONNECTION = 1024;
