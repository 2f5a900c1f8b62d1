/**
 * A profile's links as Toxiproxy delays: the one-way delay between two replicas' regions and its
 * jitter, in whole milliseconds (Toxiproxy's unit), and the per-member delays that stand in for
 * per-pair links where a system can only be given one address per member (etcd).
 */
import { oneWayMs, rttBetween, type NetworkProfile } from '@creek/server/geo';
import type { LinkDelay } from './toxiproxy.js';

/** The delay of the link from replica a to replica b: the profile's one-way delay and jitter. */
export function linkDelay(profile: NetworkProfile, a: number, b: number): LinkDelay {
  const ms = oneWayMs(profile, a, b);
  return { latencyMs: Math.round(ms), jitterMs: Math.round(ms * profile.jitter) };
}

/**
 * Per-member delays c (ms, ≥ 0) with c[i] + c[j] as close as possible to the round trip between i
 * and j (least squares, projected onto c ≥ 0). With a member's outgoing messages delayed by c[i],
 * every exchange between i and j (a message and its answer) costs c[i] + c[j]. Three members
 * solve exactly; more leave a residual per pair (`fitErrors`).
 */
export function memberDelays(profile: NetworkProfile, members: number): number[] {
  // Gradient descent on Σ (c_i + c_j - rtt_ij)²: tiny systems, so simple and exact enough.
  const c = new Array<number>(members).fill(0);
  for (let step = 0; step < 20_000; step++) {
    const grad = new Array<number>(members).fill(0);
    for (let i = 0; i < members; i++)
      for (let j = i + 1; j < members; j++) {
        const e = c[i]! + c[j]! - rttBetween(profile, i, j);
        grad[i]! += e;
        grad[j]! += e;
      }
    for (let i = 0; i < members; i++) c[i] = Math.max(0, c[i]! - 0.05 * grad[i]!);
  }
  return c;
}

/** Per pair (i < j): the round trip the member delays give, against the profile's. */
export function fitErrors(
  profile: NetworkProfile,
  c: readonly number[],
): { i: number; j: number; rtt: number; fitted: number }[] {
  const out = [];
  for (let i = 0; i < c.length; i++)
    for (let j = i + 1; j < c.length; j++)
      out.push({ i, j, rtt: rttBetween(profile, i, j), fitted: c[i]! + c[j]! });
  return out;
}
