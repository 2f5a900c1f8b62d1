import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { ReplicaStatus } from '@creek/protocol';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { RawClient, within } from './cluster-harness.js';

const APP = fileURLToPath(new URL('./fixtures/counter-app.mjs', import.meta.url));

/** Polls `check` until it returns a value, or fails after `ms` with what it last saw. */
async function until<T>(what: string, ms: number, check: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== null) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The issue's reproduction against real processes: an app whose op sneaks nondeterminism past
 * any guard (a module-level counter) leaves one replica's state unlike the others'. The replicas
 * catch it within 5 s, name the op in /status and in their logs, and no replica serves a stable
 * answer for the key that contradicts another's: the odd one refuses, the others answer alike.
 */
describe('a nondeterministic op against a real cluster', () => {
  let cluster: LocalCluster | null = null;
  afterEach(async () => {
    await cluster?.stop(1_000);
    cluster = null;
  });

  it('is caught and named, and the replica whose state no majority holds stops answering', async () => {
    const logs: string[][] = [[], [], []];
    cluster = await LocalCluster.start({
      replicas: 3,
      app: APP,
      onLog: (replica, line) => logs[replica]?.push(line),
    });
    const c = cluster;
    // Replica 0's process counts three bumps; the others' none.
    const at0 = await RawClient.connect(c.url(0), c.token);
    for (let i = 1; i <= 3; i++) {
      const bump = at0.invoke('bump', {}, 'weak');
      await within(bump.done, 20_000, 'a bump');
      expect(bump.views.frames[0]?.outcome).toEqual({ ok: true, value: i });
    }
    const at1 = await RawClient.connect(c.url(1), c.token);
    const stamp = at1.invoke('stamp', { key: 'k' }, 'strong');
    await within(stamp.done, 20_000, 'the stamp answered');
    const id = (stamp.views.frames.find((f) => f.t === 'view') as { id?: unknown } | undefined)
      ?.id as { replica: number; eventNo: number };
    const opId = `r${id.replica}#${id.eventNo}`;

    // Caught (the replicas compare every 50 ms; how soon is bench's, not this test's).
    const report = (s: ReplicaStatus | null) => s?.divergence.current ?? null;
    await until('a replica to report the divergence', 30_000, async () =>
      (await c.statuses()).some((s) => report(s) !== null) ? true : null,
    );

    // Every replica names the op, and knows who holds the majority's state: 1 and 2 (their
    // counter was 0), not 0 (3).
    const settled = await until('every replica to judge it', 30_000, async () => {
      const s = await c.statuses();
      const r = s.map(report);
      // Wait for the sides too: a replica can serve stable answers while its side is still
      // 'undecided' (it has not heard both peers' digests for the op yet).
      return r.every((x) => x !== null && x.op === 'stamp' && x.exact) &&
        r[0]!.servesStable === false &&
        r[0]!.side === 'minority' &&
        r[1]!.servesStable &&
        r[1]!.side === 'majority' &&
        r[2]!.servesStable &&
        r[2]!.side === 'majority'
        ? s
        : null;
    });
    for (const [i, s] of settled.entries()) {
      const r = report(s)!;
      expect(r.id).toBe(opId);
      expect(r.side).toBe(i === 0 ? 'minority' : 'majority');
      expect(r.digests['1']).toBe(r.digests['2']);
      expect(r.digests['0']).not.toBe(r.digests['1']);
    }
    expect(report(settled[0]!)!.reason).toMatch(/op 'stamp'.*minority.*majority: replicas 1, 2/);

    // The log says it too, naming the op.
    for (const i of [0, 1, 2])
      await until(`replica ${i}'s log line`, 10_000, async () =>
        logs[i]!.some((l) => l.includes('replicas diverged') && l.includes(`stamp ${opId}`))
          ? true
          : null,
      );
    // (Its first report may not have named the op yet: peers' digests name it a round later.)
    const line = JSON.parse(logs[0]!.find((l) => l.includes(`stamp ${opId}`))!) as {
      op: string;
      id: string;
      level: number;
    };
    expect(line).toMatchObject({ op: 'stamp', id: opId });
    expect(line.level).toBeGreaterThanOrEqual(50); // error

    // Metrics and readiness.
    for (const i of [0, 1, 2]) expect(await c.metrics(i)).toMatch(/^creek_divergence\{[^}]*\} 1$/m);
    expect(await c.metrics(0)).toMatch(/^creek_stable_answers_stopped\{[^}]*\} 1$/m);
    expect(await c.metrics(1)).toMatch(/^creek_stable_answers_stopped\{[^}]*\} 0$/m);
    const ready0 = await fetch(`${c.httpUrl(0)}/ready`);
    expect(ready0.status).toBe(503);
    expect(await ready0.text()).toMatch(/diverged/);
    expect((await fetch(`${c.httpUrl(1)}/ready`)).status).toBe(200);

    // A strong read of the key at each replica: the majority's value, or a clear refusal.
    const reads = await Promise.all(
      [0, 1, 2].map(async (i) => {
        const client = await RawClient.connect(c.url(i), c.token);
        const read = client.invoke('kv.get', { key: 'k' }, 'strong');
        await within(read.done, 20_000, `a strong read at replica ${i}`);
        client.close();
        return read.views.frames;
      }),
    );
    expect(reads[0]!.at(-1)).toMatchObject({
      t: 'error',
      code: 'unavailable',
      message: expect.stringMatching(/diverged.*op 'stamp'/),
    });
    for (const i of [1, 2]) {
      const last = reads[i]!.filter((f) => f.t === 'view').at(-1);
      expect(last?.outcome).toEqual({ ok: true, value: 0 });
    }
    at0.close();
    at1.close();
  });

  it('with no majority holding one state, every replica stops answering stably', async () => {
    cluster = await LocalCluster.start({ replicas: 3, app: APP });
    const c = cluster;
    // Counters 3, 1 and 0: no two replicas agree.
    for (const [i, bumps] of [
      [0, 3],
      [1, 1],
    ] as const) {
      const client = await RawClient.connect(c.url(i), c.token);
      for (let n = 0; n < bumps; n++)
        await within(client.invoke('bump', {}, 'weak').done, 20_000, 'a bump');
      client.close();
    }
    const at2 = await RawClient.connect(c.url(2), c.token);
    await within(at2.invoke('stamp', { key: 'k' }, 'strong').done, 20_000, 'the stamp answered');
    at2.close();
    const statuses = await until('every replica to stop', 30_000, async () => {
      const s = await c.statuses();
      return s.every(
        (x) => x?.divergence.current?.servesStable === false && x.divergence.current.op === 'stamp',
      )
        ? s
        : null;
    });
    for (const s of statuses) {
      expect(s!.divergence.current!.side).toBe('undecided');
      expect(s!.divergence.current!.reason).toMatch(/no majority of the members/);
    }
    for (const i of [0, 1, 2]) {
      const client = await RawClient.connect(c.url(i), c.token);
      const read = client.invoke('kv.get', { key: 'k' }, 'strong');
      await within(read.done, 20_000, `a strong read at replica ${i}`);
      client.close();
      expect(read.views.frames.at(-1)).toMatchObject({ t: 'error', code: 'unavailable' });
    }
  });
});
