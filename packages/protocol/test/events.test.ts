import { describe, expect, it } from 'vitest';
import { EventsFrameSchema, ReplicaEventSchema, WatchSchema } from '../src/events.js';

describe('the event stream schemas', () => {
  it('accept each kind of event a replica sends', () => {
    const at = 1_700_000_000_000;
    for (const e of [
      { e: 'op', at, id: 'r0#1', op: 'kv.put', level: 'weak', ts: 1.7e15, origin: 'local' },
      { e: 'response', at, id: null, level: 'tentative', ok: true },
      { e: 'commit', at, position: 0, ids: ['r0#1', 'r2#7'] },
      { e: 'execution', at, executions: 3, rollbacks: 1, reorderingCommits: 0 },
      {
        e: 'paxos',
        at,
        role: 'leader',
        ballot: 257,
        leader: 1,
        quorate: true,
        decidedBelow: 4,
        proposed: 4,
        decided: 4,
        elections: 1,
      },
      { e: 'gossip', at, peer: 2, pushes: 1, pulls: 0, summaries: 1, reqs: 5 },
      {
        e: 'links',
        at,
        peers: [
          { id: 1, state: 'connected', blockedIn: false, blockedOut: true },
          { id: 2, state: 'connected', blockedIn: false, blockedOut: false, delayMs: 43.5 },
        ],
      },
      { e: 'checkpoint', at, count: 2 },
      {
        e: 'status',
        at,
        committed: 9,
        tentative: 2,
        digest: 'ab12',
        paused: false,
        learning: false,
        halted: null,
        behind: 0,
        holding: false,
      },
      { e: 'dropped', at, count: 12 },
    ])
      expect(ReplicaEventSchema.safeParse(e).success, e.e).toBe(true);
  });

  it('refuse malformed ones: an op id not written r<replica>#<eventNo>, a negative count or delay', () => {
    const at = 1;
    expect(
      ReplicaEventSchema.safeParse({ e: 'commit', at, position: 0, ids: ['0.1'] }).success,
    ).toBe(false);
    expect(ReplicaEventSchema.safeParse({ e: 'dropped', at, count: -1 }).success).toBe(false);
    const link = { id: 1, state: 'connected', blockedIn: false, blockedOut: false, delayMs: -5 };
    expect(ReplicaEventSchema.safeParse({ e: 'links', at, peers: [link] }).success).toBe(false);
    expect(ReplicaEventSchema.safeParse({ e: 'nonsense', at }).success).toBe(false);
    expect(EventsFrameSchema.safeParse({ t: 'events', events: [{ e: 'dropped' }] }).success).toBe(
      false,
    );
  });

  it('a watch frame carries the version and a token of at most 4096 characters', () => {
    expect(WatchSchema.safeParse({ t: 'watch', version: 1, token: 'abc' }).success).toBe(true);
    expect(WatchSchema.safeParse({ t: 'watch', version: 1 }).success).toBe(false);
    expect(WatchSchema.safeParse({ t: 'watch', version: 1, token: 'x'.repeat(4097) }).success).toBe(
      false,
    );
  });
});
