import { describe, expect, it } from 'vitest';
import { apply, asFrame, converged, liveStateOf, newLiveReplica } from '../src/page/live-model.js';

const at = 1;
const status = (committed: number, tentative: number, digest: string) =>
  ({
    e: 'status',
    at,
    committed,
    tentative,
    digest,
    paused: false,
    learning: false,
    halted: null,
    behind: 0,
    holding: false,
  }) as const;

describe('the live model: a replica as its event stream tells it', () => {
  it('keeps pending ops in timestamp order until they commit, and the last committed ones', () => {
    const r = newLiveReplica(0);
    r.connection = 'open';
    apply(r, { e: 'op', at, id: 'r1#1', op: 'kv.put', level: 'weak', ts: 20, origin: 'peer' });
    apply(r, {
      e: 'op',
      at,
      id: 'r0#1',
      op: 'kv.increment',
      level: 'strong',
      ts: 10,
      origin: 'local',
    });
    apply(r, status(0, 2, 'aa'));
    expect(asFrame(r).tentativeHead).toEqual([
      { id: 'r0#1', strong: true },
      { id: 'r1#1', strong: false },
    ]);
    apply(r, { e: 'commit', at, position: 0, ids: ['r0#1'] });
    const f = asFrame(r);
    expect(f.committed).toBe(1);
    expect(f.committedTail).toEqual([{ id: 'r0#1', strong: true }]);
    expect(f.tentativeHead.map((o) => o.id)).toEqual(['r1#1']);
  });

  it('shows a replica that is not streaming, or halted, as down', () => {
    const r = newLiveReplica(1);
    expect(asFrame(r).up).toBe(false);
    r.connection = 'open';
    expect(asFrame(r).up).toBe(true);
    apply(r, { ...status(3, 0, 'bb'), halted: 'lost its data' });
    expect(asFrame(r).up).toBe(false);
  });

  it('calls replicas converged only when all stream, hold nothing tentative and agree', () => {
    const rs = [0, 1, 2].map((i) => {
      const r = newLiveReplica(i);
      r.connection = 'open';
      apply(r, status(5, 0, 'cc'));
      return r;
    });
    expect(converged(rs)).toBe(true);
    apply(rs[2]!, status(5, 1, 'cc'));
    expect(converged(rs)).toBe(false);
    apply(rs[2]!, status(5, 0, 'dd'));
    expect(converged(rs)).toBe(false);
    apply(rs[2]!, status(5, 0, 'cc'));
    rs[1]!.connection = 'closed';
    expect(converged(rs)).toBe(false);
  });

  it('names each state in words: connecting, down, halted, paused, catching up, leader, no leader', () => {
    const r = newLiveReplica(1);
    const label = () => liveStateOf(r).label;
    expect(label()).toBe('Connecting');
    r.connection = 'closed';
    expect(label()).toBe('Down');
    r.connection = 'open';
    expect(label()).toBe('No leader'); // hears no majority, knows no leader
    r.quorate = true;
    r.leader = 0;
    expect(label()).toBe('Follower');
    r.role = 'leader';
    expect(label()).toBe('Leader');
    r.holding = true;
    expect(label()).toBe('Catching up');
    r.paused = true;
    expect(label()).toBe('Paused');
    r.halted = 'its disk failed';
    expect(label()).toBe('Halted');
  });
});
