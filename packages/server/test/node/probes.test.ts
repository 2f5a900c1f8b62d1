import { describe, expect, it } from 'vitest';
import { probeAnswer, type ReplicaCondition } from '../../src/node/probes.js';

const well: ReplicaCondition = { halted: null, stopping: false, paused: false, learning: false };
const who = { replica: 2, cluster: 'c1' };

describe('probeAnswer', () => {
  it('answers 200 to both probes while the replica serves and takes ops', () => {
    for (const p of ['health', 'ready'] as const)
      expect(probeAnswer(p, well, who)).toEqual({
        status: 200,
        body: { ok: true, replica: 2, cluster: 'c1' },
      });
  });

  it('answers 503 to both probes once the replica halted, with the reason', () => {
    const halted = { ...well, halted: 'a peer holds op 2.7 this replica has no record of' };
    for (const p of ['health', 'ready'] as const) {
      const a = probeAnswer(p, halted, who);
      expect(a.status).toBe(503);
      expect(a.body).toMatchObject({ ok: false, reason: expect.stringMatching(/halted/) });
    }
  });

  it('answers 503 to both while shutting down', () => {
    for (const p of ['health', 'ready'] as const)
      expect(probeAnswer(p, { ...well, stopping: true }, who).status).toBe(503);
  });

  it('is live but not ready while paused or learning', () => {
    for (const c of [
      { ...well, paused: true },
      { ...well, learning: true },
    ]) {
      expect(probeAnswer('health', c, who).status).toBe(200);
      expect(probeAnswer('ready', c, who)).toMatchObject({ status: 503, body: { ok: false } });
    }
  });

  it('a learning replica says what it waits for, and from whom, in its 503', () => {
    const waiting = {
      for: 'paxos-rejoin' as const,
      peers: [0, 2],
      since: 1000,
      reason: 'it must learn instances 10 to 13, which replica 2 accepted',
    };
    const a = probeAnswer('ready', { ...well, learning: true, waiting }, who);
    expect(a.status).toBe(503);
    expect(a.body).toMatchObject({ ok: false, waiting });
    expect(a.body['reason']).toContain(
      'Waiting for paxos-rejoin (replicas 0, 2): it must learn instances 10 to 13',
    );
    // Liveness does not depend on it: the process is fine, its peers are not.
    expect(
      probeAnswer('health', { ...well, learning: true, waiting }, who).body,
    ).not.toHaveProperty('waiting');
  });

  it('a serving replica that waits for a quorum stays ready, and says what it waits for', () => {
    const waiting = { for: 'quorum' as const, peers: [1, 2], since: 0, reason: 'no majority' };
    expect(probeAnswer('ready', { ...well, waiting }, who)).toEqual({
      status: 200,
      body: { ok: true, replica: 2, cluster: 'c1', waiting },
    });
  });

  it('is live but not ready once removed, while it finishes its part in consensus', () => {
    const leaving = { ...well, leaving: true };
    expect(probeAnswer('health', leaving, who).status).toBe(200);
    expect(probeAnswer('ready', leaving, who)).toMatchObject({
      status: 503,
      body: { ok: false, reason: expect.stringMatching(/removed from the cluster.*try another/) },
    });
  });

  it('is live but not ready while a divergence leaves it without a majority’s state', () => {
    const diverged = {
      ...well,
      diverged: "the replicas' states differ after committed position 7",
    };
    // Live: /status and /metrics stay up to name the op; not ready: clients go elsewhere.
    expect(probeAnswer('health', diverged, who).status).toBe(200);
    expect(probeAnswer('ready', diverged, who)).toMatchObject({
      status: 503,
      body: { ok: false, reason: expect.stringMatching(/diverged.*position 7.*try another/) },
    });
    expect(probeAnswer('ready', { ...well, diverged: null }, who).status).toBe(200);
  });
});
