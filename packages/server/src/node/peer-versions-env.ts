import {
  PEER_PROTOCOL_OLDEST,
  PEER_PROTOCOL_VERSION,
  PeerVersionsSchema,
  type PeerVersions,
} from '@creek/protocol';

/**
 * CREEK_TEST_PEER_PROTOCOL, for testing upgrades only: `OLDEST-NEWEST`, the peer protocol versions
 * a replica claims to speak in place of this build's, so that a test can play the next release
 * (e.g. `3-4` while this build speaks 3) with real processes on real data directories. The claim
 * changes nothing the replica sends, only what its handshakes say, so it proves how links and the
 * cluster version move through an upgrade, not that a next release's messages are understood.
 * Read once, when `creek start` starts; a value outside PEER_PROTOCOL_OLDEST to
 * PEER_PROTOCOL_VERSION + 2 is refused, so that no deployment can claim far ahead by mistake.
 */
export const PEER_VERSIONS_ENV = 'CREEK_TEST_PEER_PROTOCOL';

/** The highest version the variable may claim: two steps ahead, to test a refused link too. */
const HIGHEST_CLAIM = PEER_PROTOCOL_VERSION + 2;

/** The versions CREEK_TEST_PEER_PROTOCOL claims, or null when unset; throws when malformed. */
export function peerVersionsFromEnv(env: NodeJS.ProcessEnv): PeerVersions | null {
  const text = env[PEER_VERSIONS_ENV];
  if (text === undefined || text.trim() === '') return null;
  const m = /^\s*(\d{1,5})-(\d{1,5})\s*$/.exec(text);
  const parsed =
    m === null
      ? null
      : PeerVersionsSchema.safeParse({ oldest: Number(m[1]), newest: Number(m[2]) });
  if (
    parsed === null ||
    !parsed.success ||
    parsed.data.oldest < PEER_PROTOCOL_OLDEST ||
    parsed.data.newest > HIGHEST_CLAIM
  )
    throw new Error(
      `${PEER_VERSIONS_ENV} (for testing upgrades only) must be OLDEST-NEWEST with ${PEER_PROTOCOL_OLDEST} <= OLDEST <= NEWEST <= ${HIGHEST_CLAIM}, e.g. ${PEER_PROTOCOL_OLDEST}-${PEER_PROTOCOL_VERSION + 1}, not '${text}'`,
    );
  return parsed.data;
}
