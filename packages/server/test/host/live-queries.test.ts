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
  const answer = (
    watch: 'tentative' | 'stable',
    value: number,
    position?: number,
    sessionOps?: Response['sessionOps'],
  ): void => {
    const r = reads.findLast((x) => x.watch === watch)!;
    const response: Response = {
      type: 'respond',
      tag: r.tag,
      id: null,
      level: watch === 'stable' ? 'stable' : 'tentative',
      outcome: { ok: true, value } as Outcome,
      reads: { keys: ['k'], prefixes: [] },
      ...(position === undefined ? {} : { position }),
      ...(sessionOps === undefined ? {} : { sessionOps }),
    };
    expect(lq.respond(response)).toBe(true);
  };
  const pushes = (): string[] =>
    sent.map((f) =>
      f.t === 'watched'
        ? `${f.level} ${JSON.stringify((f.outcome as { value: unknown }).value)}${f.position === undefined ? '' : `@${f.position}`}${f.own === undefined ? '' : ` own ${JSON.stringify(f.own)}`}`
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

  it("reads for a session's connection say which of its ops they hold, and a result that holds others is sent even with the same value", () => {
    const h = harness();
    h.lq.watch('c', { watchId: 'w', op: 'get', args: {} }, 'sess');
    expect(h.reads.map((r) => r.reader)).toEqual(['sess', 'sess']);
    const held = (upTo: number, missing: number[] = []) => ({ upTo, missing, failed: [] });
    h.answer('tentative', 1, undefined, held(3, [2]));
    h.answer('stable', 0, 5, held(1));
    h.lq.changed(new Set(['k']));
    h.answer('stable', 0, 6, held(1)); // the same: nothing
    h.lq.changed(new Set(['k']));
    h.answer('stable', 0, 7, held(3, [2])); // the same value, but the session's op 3 is in it now
    expect(h.pushes()).toEqual([
      'tentative 1 own {"upTo":3,"missing":[2]}',
      'stable 0@5 own {"upTo":1}',
      'stable 0@7 own {"upTo":3,"missing":[2]}',
    ]);
  });

  it('sent again after a failover, sends nothing older than what the client shows, then a result equal to the first held back', () => {
    const h = harness();
    const shown = { position: 10, own: { upTo: 4 } };
    h.lq.watch('c', { watchId: 'w', op: 'get', args: {}, shown }, 'sess');
    h.answer('stable', 3, 8, { upTo: 4, missing: [], failed: [] }); // a replica behind: not sent
    h.answer('tentative', 3, undefined, { upTo: 2, missing: [], failed: [] }); // ops 3, 4 not here yet
    expect(h.pushes()).toEqual([]);
    // The session's resubmitted op writes its record: the tentative read runs again, whatever
    // keys it reads, and so does the stable one when its keys change.
    h.lq.changed(new Set(['~creek/session/sess/3']));
    expect(h.reads.filter((r) => r.watch === 'tentative')).toHaveLength(2);
    h.answer('tentative', 3, undefined, { upTo: 3, missing: [], failed: [] }); // still not 4
    h.lq.changed(new Set(['~creek/session/sess/4', 'k']));
    h.answer('tentative', 3, undefined, { upTo: 4, missing: [], failed: [] });
    h.answer('stable', 3, 10, { upTo: 4, missing: [], failed: [] });
    expect(h.pushes()).toEqual(['tentative 3 own {"upTo":4}', 'stable 3@10 own {"upTo":4}']);
    // Another session's records run nothing.
    h.lq.changed(new Set(['~creek/session/other/1']));
    expect(h.lq.reading).toBe(0);
  });
});
