import { afterEach, describe, expect, it, vi } from 'vitest';
import { ClientSession } from '@creek/client/session';
import { ClientConnections } from '@creek/replica/host/client-connections.js';
import { runSimulation, type SimResult } from '../../src/sim/simulation.js';

/**
 * Sessions that sign in (SimConfig.userTokens): the SDK's sessions present their users' tokens,
 * which the replicas' endpoints verify; many tokens lapse within a run, so hellos wait for
 * verdicts, sessions refresh their tokens on their own timers (from the tokens' exp) and when
 * replicas ask, with ops in flight, and connections whose tokens lapse close, under every fault.
 * Every checker judges these runs, checker (u) among them with each op's caller as its session
 * signed in.
 */
afterEach(() => vi.restoreAllMocks());

// Seeds whose runs meet none of the known failures of sdk runs (sdk-clients.test.ts).
const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
const run = (seed: number): SimResult =>
  runSimulation({ seed, replicas: 3, faults: 'all', clients: 'sdk', userTokens: true });

describe('sessions that sign in, in the simulator', () => {
  it('keep every guarantee while their tokens are refreshed and lapse', () => {
    const frames = new Map<string, number>();
    const received = ClientSession.prototype.frameReceived;
    vi.spyOn(ClientSession.prototype, 'frameReceived').mockImplementation(function (
      this: ClientSession,
      connection: number,
      data: string,
    ) {
      const t = (JSON.parse(data) as { t: string }).t;
      if (t.startsWith('auth')) frames.set(t, (frames.get(t) ?? 0) + 1);
      received.call(this, connection, data);
    });
    let timers = 0;
    const due = ClientSession.prototype.refreshDue;
    vi.spyOn(ClientSession.prototype, 'refreshDue').mockImplementation(function (
      this: ClientSession,
      connection: number,
    ) {
      timers++;
      due.call(this, connection);
    });
    const results = SEEDS.map(run);
    expect(results.filter((r) => !r.ok).map((r) => `${r.seed}: ${r.violations[0]}`)).toEqual([]);
    // Not vacuous: sessions refreshed on their own timers, replicas asked too, took the fresh
    // tokens, and closed lapsed connections.
    expect(timers).toBeGreaterThan(50);
    expect(frames.get('auth-expiring') ?? 0).toBeGreaterThan(0);
    expect(frames.get('authed') ?? 0).toBeGreaterThan(50);
    expect(frames.get('auth-expired') ?? 0).toBeGreaterThan(0);
  });

  it('catches an endpoint that runs a signed-in session’s ops as another user', () => {
    const verified = ClientConnections.prototype.verified;
    vi.spyOn(ClientConnections.prototype, 'verified').mockImplementation(function (
      this: ClientConnections<unknown>,
      conn: unknown,
      v,
    ) {
      const swapped = v.ok ? { ...v, user: { id: 'mallory', claims: { sub: 'mallory' } } } : v;
      verified.call(this, conn, swapped);
    });
    const v = [1, 2, 3].flatMap((seed) => run(seed).violations);
    // Every replica ran it as mallory, but its client had signed in as someone else.
    const caught = v.filter((x) => x.startsWith('(u)'));
    expect(caught.length).toBeGreaterThan(0);
    expect(caught[0]).toMatch(/saw \{.*"mallory".*, but its client as \{/);
  });
});
