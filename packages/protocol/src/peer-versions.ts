import * as z from 'zod';
import { PEER_PROTOCOL_OLDEST, PEER_PROTOCOL_VERSION } from './limits.js';

/**
 * Versions of the replica-to-replica protocol, and the rules that let a cluster be upgraded one
 * replica at a time.
 *
 * - Each build speaks a range of versions, oldest to newest. At connect (the handshake of
 *   server node/peer-mesh.ts) both ends tell their range; the link then runs at the newest version
 *   both speak (`linkVersion`), or is refused when the ranges do not overlap.
 * - The cluster version is the newest version every current member speaks (`clusterVersion`), as
 *   etcd's is: the lowest of the members' newest versions. It rises once the last member runs a
 *   release that speaks the next version, and never falls while the replica runs (a member that
 *   speaks less is refused, as etcd refuses a member older than its cluster).
 *
 * The rule for every future change of the peer protocol: a new message kind, or a new field an
 * older replica would drop, is sent on a link only once that link's version allows it
 * (`PEER_MESSAGE_SINCE`, checked by the mesh for every message it sends); a new kind of log entry
 * (a value of a consensus instance), which every member must apply alike, is proposed only once
 * the cluster version allows it (`versionAllows(clusterVersion, since)`), and the release that adds
 * one also raises the storage format, so that an older build refuses a directory that may hold it.
 */
export const PeerVersionsSchema = z
  .object({
    oldest: z.number().int().positive().max(65_535),
    newest: z.number().int().positive().max(65_535),
  })
  .refine((r) => r.oldest <= r.newest, { message: 'oldest must not exceed newest' });
export type PeerVersions = z.infer<typeof PeerVersionsSchema>;

/** The versions this build speaks. */
export const SPOKEN_PEER_VERSIONS: PeerVersions = Object.freeze({
  oldest: PEER_PROTOCOL_OLDEST,
  newest: PEER_PROTOCOL_VERSION,
});

/**
 * What a replica that tells no range speaks: builds before ranges existed spoke version 3 alone
 * (their challenge's `version`, compared with 3 exactly).
 */
export const RANGELESS_PEER_VERSIONS: PeerVersions = Object.freeze({ oldest: 3, newest: 3 });

/** The newest version both ranges hold, or null when they do not overlap. */
export function linkVersion(a: PeerVersions, b: PeerVersions): number | null {
  const v = Math.min(a.newest, b.newest);
  return v >= Math.max(a.oldest, b.oldest) ? v : null;
}

/**
 * The newest version every member speaks: the lowest newest version among `members`, this replica
 * (`self`, speaking `ours`) included. A member not heard from yet counts as speaking only this
 * replica's oldest version: nothing is assumed of a replica that has not said.
 */
export function clusterVersion(
  self: number,
  ours: PeerVersions,
  members: Iterable<number>,
  heard: ReadonlyMap<number, PeerVersions>,
): number {
  let v = ours.newest;
  for (const id of members) {
    if (id === self) continue;
    v = Math.min(v, heard.get(id)?.newest ?? ours.oldest);
  }
  return v;
}

/** Whether a link or cluster at `version` may use what `since` introduced. */
export function versionAllows(version: number, since: number): boolean {
  return version >= since;
}

/**
 * The version that introduced each peer message kind newer than PEER_PROTOCOL_OLDEST, keyed as
 * `peerMessageKey` names them (e.g. 'paxos.heartbeat'). Kinds not listed are spoken by every
 * version this build speaks. A change that adds a kind adds it here with the new version; the mesh
 * then holds it back from links that run at an older version.
 */
export const PEER_MESSAGE_SINCE: ReadonlyMap<string, number> = new Map<string, number>();

/** A peer message's kind as PEER_MESSAGE_SINCE keys it: its frame type and its own kind. */
export function peerMessageKey(frame: string, msg: { kind?: unknown; type?: unknown }): string {
  const inner = msg.kind ?? msg.type;
  return typeof inner === 'string' ? `${frame}.${inner}` : frame;
}

/** A range as operators read it: `3`, or `3 to 4`. */
export function describePeerVersions(r: PeerVersions): string {
  return r.oldest === r.newest ? `${r.oldest}` : `${r.oldest} to ${r.newest}`;
}
