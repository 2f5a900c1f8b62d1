import { describe, expect, it } from 'vitest';
import type { ServerFrame } from '@creek/protocol';
import type { InvokeRequest } from '@creek/replica/core/replica.js';
import type { Outcome, Response } from '@creek/replica/core/types.js';
import { LiveQueries } from '@creek/replica/host/live-queries.js';

/**
 * LiveQueries on its own, with the replica's reads answered by hand in any order: what the client
 * is sent, frame by frame. (The simulator covers it end to end: test/sim/live-queries.test.ts.)
 */
function harness() {
  const reads: InvokeRequest[] = [];
  const sent: ServerFrame[] = [];
  let tag = 0;
  const lq = new LiveQueries<string>(
    (r) => reads.push(r),
    (_conn, f) => sent.push(f),
    () => ++tag,
  );
  const answer = (watch: 'tentative' | 'stable', value: number, position?: number): void => {
    const r = reads.findLast((x) => x.watch === watch)!;
    const response: Response = {
      type: 'respond',
      tag: r.tag,
      id: null,
      level: watch === 'stable' ? 'stable' : 'tentative',
      outcome: { ok: true, value } as Outcome,
      reads: { keys: ['k'], prefixes: [] },
      ...(position === undefined ? {} : { position }),
    };
    expect(lq.respond(response)).toBe(true);
  };
  const pushes = (): string[] =>
    sent.map((f) =>
      f.t === 'watched'
        ? `${f.level} ${JSON.stringify((f.outcome as { value: unknown }).value)}${f.position === undefined ? '' : `@${f.position}`}`
        : f.t,
    );
  return { lq, reads, answer, pushes };
}

describe('LiveQueries', () => {
  it('a key changed while the first read is on its way: the read runs again once it answers', () => {
    const h = harness();
    h.lq.watch('c', { watchId: 'w', op: 'get', args: {} });
    expect(h.reads).toHaveLength(2);
    expect(h.lq.reading).toBe(2);
    // What the first reads read is not known until they answer, so any change may concern them.
    h.lq.changed(new Set(['k']));
    h.answer('tentative', 0);
    h.answer('stable', 0, 3);
    expect(h.reads).toHaveLength(4);
    h.answer('tentative', 7);
    h.answer('stable', 7, 4);
    expect(h.lq.reading).toBe(0);
    expect(h.pushes()).toEqual(['tentative 0', 'stable 0@3', 'tentative 7', 'stable 7@4']);
  });

  it('the committed reader answering first: the equal tentative result is followed by the stable one again', () => {
    const h = harness();
    h.lq.watch('c', { watchId: 'w', op: 'get', args: {} });
    h.answer('stable', 0, 3);
    h.answer('tentative', 0);
    // The client's latest view is the stable one: the value is confirmed.
    expect(h.pushes()).toEqual(['stable 0@3', 'tentative 0', 'stable 0@3']);
  });

  it('a tentative result that differs from the stable one is not followed by it; the commit brings it', () => {
    const h = harness();
    h.lq.watch('c', { watchId: 'w', op: 'get', args: {} });
    h.answer('tentative', 0);
    h.answer('stable', 0, 3);
    h.lq.changed(new Set(['k']));
    h.answer('tentative', 50);
    h.answer('stable', 0, 3); // not committed yet: unchanged, nothing sent
    expect(h.pushes()).toEqual(['tentative 0', 'stable 0@3', 'tentative 50']);
    h.lq.changed(new Set(['k']));
    h.answer('stable', 50, 4);
    h.answer('tentative', 50); // unchanged: nothing sent
    expect(h.pushes().slice(3)).toEqual(['stable 50@4']);
  });

  it('a tentative result back to the committed one says so with the stable result', () => {
    const h = harness();
    h.lq.watch('c', { watchId: 'w', op: 'get', args: {} });
    h.answer('tentative', 7);
    h.answer('stable', 5, 2);
    h.lq.changed(new Set(['k']));
    h.answer('tentative', 5); // the op that made it 7 was withdrawn
    expect(h.pushes()).toEqual(['tentative 7', 'stable 5@2', 'tentative 5', 'stable 5@2']);
  });
});
