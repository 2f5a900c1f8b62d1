import { EVENTS_PATH, EVENTS_VERSION, EventsFrameSchema, type ReplicaEvent } from '@creek/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { PROFILES, rttBetween } from '../../src/geo/index.js';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { profileDelays } from '../../src/node/profile-delays.js';
import { RawClient, within } from './cluster-harness.js';

/**
 * LocalCluster's `profile` (what `npm start -- --profile us-eu` runs): every replica delays its
 * messages to each other one by the profile's one-way delay between their regions, from the start
 * and again once a killed replica is restarted. What the replicas say they apply is checked on
 * their event streams; what it does, on strong ops, whose stable answers cannot come before a
 * majority heard of them.
 */
const profile = PROFILES['us-eu'];
let cluster: LocalCluster;
beforeAll(async () => {
  cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error', profile });
});
afterAll(async () => {
  await cluster?.stop(1_000);
});

/** The delays replica i reports on its links (its latest `links` event), by peer. */
async function reportedDelays(i: number): Promise<Map<number, number | undefined>> {
  const ws = new WebSocket(cluster.url(i).replace(/\/client$/, EVENTS_PATH));
  try {
    return await within(
      new Promise<Map<number, number | undefined>>((resolve, reject) => {
        ws.once('error', reject);
        ws.once('open', () =>
          ws.send(
            JSON.stringify({ t: 'watch', version: EVENTS_VERSION, token: cluster.adminToken }),
          ),
        );
        ws.on('message', (d) => {
          const f = EventsFrameSchema.parse(JSON.parse(d.toString()));
          if (f.t !== 'events') return;
          const links = f.events.findLast(
            (e): e is Extract<ReplicaEvent, { e: 'links' }> => e.e === 'links',
          );
          if (links !== undefined) resolve(new Map(links.peers.map((p) => [p.id, p.delayMs])));
        });
      }),
      15_000,
      `replica ${i}'s links`,
    );
  } finally {
    ws.close();
  }
}

function expectedDelays(i: number): Map<number, number> {
  return new Map(
    profileDelays(profile, cluster.members)
      .filter((d) => d.from === i)
      .map((d) => [d.to, d.ms]),
  );
}

/**
 * The least time a strong op at `replica` can take to be answered stably: its commit needs the
 * leader and one more replica to have accepted it, so a message went one way and back on at least
 * one delayed link. Node times a timeout from the start of the event loop's current turn, so a
 * delayed send may go a little early on a busy machine: a fifth of the round trip is left for it.
 * (Without the profile, the same op takes a few milliseconds.)
 */
const floorMs =
  0.8 * Math.min(rttBetween(profile, 0, 1), rttBetween(profile, 0, 2), rttBetween(profile, 1, 2));

async function strongOpMs(replica: number, key: string): Promise<number> {
  const client = await RawClient.connect(cluster.url(replica), cluster.token);
  try {
    const started = performance.now();
    const op = client.invoke('kv.increment', { key }, 'strong');
    await within(op.done, 20_000, `a strong op at replica ${replica}`);
    expect(op.views.frames.map((f) => f.t)).not.toContain('error');
    return performance.now() - started;
  } finally {
    client.close();
  }
}

describe('a local cluster with a network profile', () => {
  it('delays each peer link by the profile, so a strong op waits at least a round trip', async () => {
    for (const i of [0, 1, 2]) expect(await reportedDelays(i)).toEqual(expectedDelays(i));
    for (const i of [0, 1, 2])
      for (let k = 0; k < 3; k++)
        expect(await strongOpMs(i, `geo/${i}`)).toBeGreaterThanOrEqual(floorMs);
  });

  it('gives a restarted replica its delays again', async () => {
    await cluster.killed(2);
    cluster.startReplica(2);
    await cluster.waitForLeader();
    await cluster.profileInForce();
    expect(await reportedDelays(2)).toEqual(expectedDelays(2));
    // Its peers kept theirs towards it.
    for (const i of [0, 1]) expect((await reportedDelays(i)).get(2)).toBe(expectedDelays(i).get(2));
    expect(await strongOpMs(2, 'geo/restarted')).toBeGreaterThanOrEqual(floorMs);
  });
});
