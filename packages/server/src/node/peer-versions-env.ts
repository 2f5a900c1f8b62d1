import {
  CLIENT_PROTOCOL_OLDEST,
  PEER_PROTOCOL_OLDEST,
  PEER_PROTOCOL_VERSION,
  PeerVersionsSchema,
  PROTOCOL_VERSION,
  type ClientVersions,
  type PeerVersions,
} from '@creek/protocol';
import { SettingsError } from './settings.js';

/**
 * CREEK_TEST_PEER_PROTOCOL and CREEK_TEST_CLIENT_PROTOCOL, for testing upgrades only:
 * `OLDEST-NEWEST`, the peer (or client) protocol versions a replica claims to speak in place of
 * this build's, so that a test can play the next release (e.g. `3-4` while this build speaks 3)
 * with real processes on real data directories and real clients. The claim changes nothing the
 * replica sends, only what its handshakes (its welcomes) say, so it proves how links and versions
 * move through an upgrade, not that a next release's messages are understood. Read once, when
 * `creek start` starts; a value outside this build's oldest version to its newest + 2 is refused,
 * so that no deployment can claim far ahead by mistake.
 */
export const PEER_VERSIONS_ENV = 'CREEK_TEST_PEER_PROTOCOL';
export const CLIENT_VERSIONS_ENV = 'CREEK_TEST_CLIENT_PROTOCOL';

/** The versions CREEK_TEST_PEER_PROTOCOL claims, or null when unset; a SettingsError when malformed. */
export function peerVersionsFromEnv(env: NodeJS.ProcessEnv): PeerVersions | null {
  return claimed(env, PEER_VERSIONS_ENV, PEER_PROTOCOL_OLDEST, PEER_PROTOCOL_VERSION);
}

/** The versions CREEK_TEST_CLIENT_PROTOCOL claims, or null when unset; a SettingsError when malformed. */
export function clientVersionsFromEnv(env: NodeJS.ProcessEnv): ClientVersions | null {
  return claimed(env, CLIENT_VERSIONS_ENV, CLIENT_PROTOCOL_OLDEST, PROTOCOL_VERSION);
}

function claimed(
  env: NodeJS.ProcessEnv,
  name: string,
  oldest: number,
  newest: number,
): PeerVersions | null {
  const text = env[name];
  if (text === undefined || text.trim() === '') return null;
  // Two steps ahead at most: one to play the next release, two to test a refused link too.
  const highest = newest + 2;
  const m = /^\s*(\d{1,5})-(\d{1,5})\s*$/.exec(text);
  const parsed =
    m === null
      ? null
      : PeerVersionsSchema.safeParse({ oldest: Number(m[1]), newest: Number(m[2]) });
  if (
    parsed === null ||
    !parsed.success ||
    parsed.data.oldest < oldest ||
    parsed.data.newest > highest
  )
    throw new SettingsError(
      `${name} (for testing upgrades only) must be OLDEST-NEWEST with ${oldest} <= OLDEST <= NEWEST <= ${highest}, e.g. ${oldest}-${newest + 1}, not '${text}'`,
    );
  return parsed.data;
}
