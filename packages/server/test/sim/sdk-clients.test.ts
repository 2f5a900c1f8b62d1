import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { runSimulation, type SimResult } from '../../src/sim/simulation.js';
import { simInAPage } from './sim-in-page.js';
import { expectCaughtBy, plantedRuns, seeds } from './planted.js';

/**
 * Client sessions in the simulator (SimConfig.clients 'sdk'): the clients of each replica are the
 * SDK's own pure session, talking over simulated links to the replicas' side of their client
 * connections, the same code the runtime serves sockets with. Failover, resubmission with the same
 * op id and number, abandon and live queries then run under every fault, and every checker judges
 * the run, with those of what the clients saw (sim/session-checkers.ts).
 */

function run(seed: number, replicas: number, extra: object = {}): SimResult {
  return runSimulation({ seed, replicas, faults: 'all', clients: 'sdk', ...extra });
}

function failures(results: readonly SimResult[]): string[] {
  return results
    .filter((r) => !r.ok)
    .map(
      (r) =>
        `seed ${r.seed} (${r.replicas} replicas): ${r.violations[0]} — npm run sim -- --seed ${r.seed} --replicas ${r.replicas} --clients sdk --verbose`,
    );
}

// Seeds whose runs meet none of the failures the sessions found in the replicas and the SDK (the
// known ones below); the others of 1–25 at 3 replicas and 1–16 at 5 are among those. Seed 32 met
// a live query that showed an older committed state after a failover, until sessions dropped those.
// Seed 9 met live queries a replica still learning from its peers refused as unavailable, which
// the session left unasked for as long as it stayed connected, until it moved on as for an op.
// Seed 233 met a session that failed over to a replica without its confirmed strong write, until
// confirmations said what their replica had (`seen`) as views do (test/host/confirm-seen.test.ts).
const SEEDS_3 = [
  1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15, 16, 17, 18, 20, 21, 22, 23, 24, 25, 32, 233,
];
const SEEDS_5 = [1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 13, 15, 16];

describe('client sessions in the simulator (clients: sdk)', () => {
  it('keeps every guarantee under every fault, and exercises what the sessions do', () => {
    const results = [...SEEDS_3.map((s) => run(s, 3)), ...SEEDS_5.map((s) => run(s, 5))];
    expect(failures(results)).toEqual([]);
    // Not vacuous: the sessions failed over, resubmitted, timed out and abandoned, their links were
    // reset, and their live queries showed results.
    const total = (f: (r: SimResult) => number): number => results.reduce((n, r) => n + f(r), 0);
    expect(total((r) => r.stats.resubmissions)).toBeGreaterThan(100);
    expect(total((r) => r.stats.abandons)).toBeGreaterThan(5);
    expect(total((r) => r.stats.abandoned)).toBeGreaterThan(0);
    expect(total((r) => r.stats.sessions!.failovers)).toBeGreaterThan(50);
    expect(total((r) => r.stats.sessions!.resets)).toBeGreaterThan(10);
    expect(total((r) => r.stats.sessions!.timeouts)).toBeGreaterThan(10);
    expect(total((r) => r.stats.sessions!.watchViews)).toBeGreaterThan(1000);
  });

  it('replays a run exactly', () => {
    const a = run(8, 3);
    const b = run(8, 3);
    expect(b.committedOrder).toEqual(a.committedOrder);
    expect(b.stats).toEqual(a.stats);
    expect(a.parameters.sessions).toBeDefined();
  });

  it('runs in the browser bundle the visualizer loads, the same run as here', async () => {
    const page = await simInAPage();
    const there = vm.runInContext(
      "CreekSim.runSimulation({ seed: 5, replicas: 3, clients: 'sdk' })",
      page,
    ) as SimResult;
    const here = run(5, 3);
    expect(there.ok).toBe(true);
    expect([...there.committedOrder]).toEqual([...here.committedOrder]);
    expect(there.stats.resubmissions).toBe(here.stats.resubmissions);
  });

  it('leaves runs of the model of clients as they were, the default', () => {
    const plain = runSimulation({ seed: 4, replicas: 3 });
    const model = runSimulation({ seed: 4, replicas: 3, clients: 'model' });
    expect(model).toEqual(plain);
    expect(plain.stats.sessions).toBeUndefined();
    expect(plain.parameters.sessions).toBeUndefined();
  });

  it("catches live queries whose stable results claim the session's ops that only their tentative results hold", () => {
    // Fires on 30 of seeds 1-30.
    expectCaughtBy(
      plantedRuns(seeds(10), { clients: 'sdk', faults: 'all', unsafeStableOwnOps: true }),
      '(own ops)',
    );
  });

  it('catches an endpoint that passes no session numbers on: a resubmission is applied again', () => {
    const found: string[] = [];
    for (const seed of [1, 4, 8])
      found.push(...run(seed, 3, { unsafeDropSessions: true }).violations);
    // Exactly-once probes applied twice, and copies the clients' linearizable histories cannot explain.
    expect(found.some((v) => v.startsWith('(f)') && v.includes('not 1'))).toBe(true);
    expect(found.some((v) => v.startsWith('(linearizability)'))).toBe(true);
  });
});

/**
 * What the sessions found, and how each was mended (a known failure still open would be an
 * expected failure here, `it.fails`: when it is mended, its test fails and becomes a plain one).
 */
describe('known failures the client sessions found', () => {
  // Seed 13 failed here until a replica in a later incarnation (its disk lost, its ops numbered
  // under a new origin) stopped telling sessions its new origin's count as its id's: the session
  // waited for ops of the old origin that never existed.
  it('a session that saw ops of a replica whose disk was lost is welcomed again (seed 13, 3 replicas)', () => {
    expect(run(13, 3).violations.filter((v) => v.startsWith('liveness'))).toEqual([]);
  });

  it('a session that saw an op a lost disk took with it, dropped by its origin’s close, is welcomed again (seed 1046, 5 replicas)', () => {
    // Its seen vector covered that op; no replica will ever hold it, and every one turned the
    // session away for good, until replicas counted ops closed off as had.
    expect(run(1046, 5).violations.filter((v) => v.startsWith('liveness'))).toEqual([]);
  });

  it('a session that saw an op its replica lost with its disk before passing it on is welcomed again (seed 1023, 5 replicas, WAN)', () => {
    // No replica held the op, and none held an op of that origin above it: nothing closed the
    // origin until the replicas the session waited at closed it for the op it waited for.
    expect(
      run(1023, 5, { network: 'mix' }).violations.filter((v) => v.startsWith('liveness')),
    ).toEqual([]);
  });

  it('sessions that queued ops through an outage drain them after it, however slowly (seed 1057, 5 replicas, WAN)', () => {
    // Two thousand ops queued offline, sent two at a time at WAN round trips: the run went past
    // its settle time still answering them, and was judged not live until runs went on while
    // their callers were being answered.
    const r = run(1057, 5, { network: 'mix' });
    expect(r.violations).toEqual([]);
  });

  it('a session that saw an op only a replica lost for good held waits for it, not judged stuck (seed 1183, 5 replicas, contexts)', () => {
    // Nothing tells the cluster that replica is gone until an operator removes it; welcoming the
    // session elsewhere would go back on what it showed.
    expect(run(1183, 5, { contexts: true }).violations).toEqual([]);
  });

  it('a session is never told of an op its replica could still lose in a crash (seed 1214, 5 replicas, contexts)', () => {
    // A view told a session of its replica's own op issued after the one it answered, before that
    // op's record was durable; the replica crashed and came back without it, and no replica would
    // welcome the session, until seen vectors stopped below a replica's first op not yet durable.
    expect(run(1214, 5, { contexts: true }).violations).toEqual([]);
  });

  it('a session that saw ops of a replica whose new incarnation issued none yet is welcomed again, and its live queries catch up (seed 1087, 5 replicas, WAN)', () => {
    // Peers learnt the old origin was dead only from an op of the new one: in a quiet cluster no
    // replica closed it, until a later incarnation named its origin in its gossip summaries. The
    // session, welcomed at last, still showed a live query's old value: an abandon that never
    // went out (the connect timeout failed it) had left its op neither resubmitted nor abandoned,
    // until such an op went back to being resubmitted.
    expect(run(1087, 5, { network: 'mix' }).violations).toEqual([]);
  });

  it('a context token covers its session’s own write answered before it, not yet committed (seed 2099, 5 replicas, contexts)', () => {
    // The write was answered at one replica; the session moved, resubmitted it, and asked for its
    // token right after: the new replica answered before the resubmitted copy was durable, so the
    // token covered no copy, and a reader after it ran without the write, until a session asked
    // only once each op it had an answer to was answered again on the current connection.
    expect(run(2099, 5, { contexts: true, network: 'mix' }).violations).toEqual([]);
  });

  // Seed 121 failed here until sessions followed the membership: its sessions, given replicas
  // 0-2, waited forever once 2 was replaced by 3; they now learn of replica 3 and are welcomed
  // there. Whether a session that saw ops no member has can still wait forever is not settled.
  it('a session that saw ops a removed replica never passed on is welcomed again (seed 121, 3 replicas)', () => {
    expect(run(121, 3).violations.filter((v) => v.startsWith('liveness'))).toEqual([]);
  });
});
