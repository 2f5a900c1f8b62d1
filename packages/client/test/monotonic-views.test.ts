import { PROTOCOL_VERSION } from '@creek/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ClientSession } from '../src/session/client-session.js';
import type { WatchShown, WatchSink } from '../src/session/watches.js';
import { scriptedClients } from './scripted-sockets.js';

/**
 * Monotonic views of a live query, the replica played by the test: each `watched` frame says
 * which of the session's own ops the state it was read at holds (`own.upTo`, `own.failed`), and
 * the session never lets a result replace a newer one that showed more of them.
 */

type Own = {
  upTo: number;
  missing?: number[];
  failed?: { seq: number; op: string; error: string }[];
};

/** A session connected to a scripted replica, watching one query; `heard` is what its sink got. */
function watching() {
  const sent: unknown[] = [];
  let connection = 0;
  const session = new ClientSession({
    urls: ['ws://a:7100/client', 'ws://b:7100/client'],
    session: 'session-under-test',
    maxInFlight: 64,
    offline: false,
    maxQueued: 100,
    persistent: false,
    now: () => 0,
    out: (o) => {
      if (o.t === 'connect') connection = o.connection;
      if (o.t === 'send') sent.push(o.frame);
    },
  });
  const heard: string[] = [];
  const shown: { value: unknown; level: string; shown: WatchShown }[] = [];
  const sink: WatchSink = {
    view: (v, s) => {
      shown.push({ value: v.value, level: v.level, shown: s });
      const fix = s.corrected.map((c) => `${c.op}: ${c.error}`).join(', ');
      heard.push(
        `${s.latest ? 'latest' : 'stable only'} ${v.level} ${JSON.stringify(v.value)}${fix === '' ? '' : ` (corrects ${fix})`}`,
      );
    },
    failed: (e, level) => heard.push(`failed ${level} ${e.message}`),
    error: (e) => heard.push(`ended ${e.message}`),
  };
  session.watch('todo.list', { list: 'mine' }, sink);
  const open = (): void => {
    session.connectionOpened(connection);
    session.frameReceived(
      connection,
      JSON.stringify({
        t: 'welcome',
        version: PROTOCOL_VERSION,
        replica: 0,
        levels: ['weak', 'strong'],
        ops: [],
      }),
    );
  };
  session.start();
  open();
  const frame = (
    level: 'tentative' | 'stable',
    value: unknown,
    own?: Own,
    position?: number,
  ): void =>
    session.frameReceived(
      connection,
      JSON.stringify({
        t: 'watched',
        watchId: 'w1',
        level,
        outcome: { ok: true, value },
        ...(position === undefined ? {} : { position }),
        ...(own === undefined ? {} : { own }),
      }),
    );
  /** The session moves to the next replica (its watch is sent there again). */
  const failover = (): void => {
    session.connectionClosed(connection);
    session.reconnect();
    open();
  };
  return { heard, shown, frame, failover, sent };
}

describe('monotonic views, frame by frame', () => {
  it('a stable result read before the write committed arrives after the tentative one: the synced mark only', () => {
    const w = watching();
    w.frame('stable', [], { upTo: 0 }, 3);
    w.frame('tentative', ['a'], { upTo: 1 });
    w.frame('tentative', ['x', 'a'], { upTo: 1 }); // another client's write
    w.frame('stable', [], { upTo: 0 }, 4); // the same committed state, read again: nothing new
    w.frame('stable', ['x'], { upTo: 0 }, 5); // x committed; the session's op 1 not yet
    w.frame('stable', ['x', 'a'], { upTo: 1 }, 6);
    expect(w.heard).toEqual([
      'latest strong []',
      'latest weak ["a"]',
      'latest weak ["x","a"]',
      'stable only strong ["x"]',
      'latest strong ["x","a"]',
    ]);
  });

  it('the tentative result arrives after a stable one that already holds the write: it replaces it', () => {
    const w = watching();
    w.frame('stable', ['a'], { upTo: 1 }, 4);
    w.frame('tentative', ['a', 'x'], { upTo: 1 }); // someone else's tentative write, newer
    w.frame('stable', ['a', 'x'], { upTo: 1 }, 5);
    expect(w.heard).toEqual([
      'latest strong ["a"]',
      'latest weak ["a","x"]',
      'latest strong ["a","x"]',
    ]);
  });

  it('a stable result with the value shown replaces the tentative one whatever it holds; the same view again is not repeated', () => {
    const w = watching();
    w.frame('tentative', ['a'], { upTo: 2 }); // op 2 wrote elsewhere
    w.frame('stable', ['a'], { upTo: 1 }, 4);
    w.frame('stable', ['a'], { upTo: 2 }, 5);
    expect(w.heard).toEqual(['latest weak ["a"]', 'latest strong ["a"]']);
  });

  it("a result that holds the session's op failed replaces the view that showed it, and says so", () => {
    const w = watching();
    w.frame('tentative', ['a'], { upTo: 1 });
    w.frame('tentative', ['a', 'b'], { upTo: 2 });
    const failed = [{ seq: 2, op: 'todo.add', error: 'the list is full' }];
    w.frame('stable', ['a'], { upTo: 1 }, 7); // before op 2 committed: not a correction
    w.frame('tentative', ['a'], { upTo: 2, failed }); // op 2 re-executed at its place, and failed
    w.frame('stable', ['a'], { upTo: 2, failed }, 8);
    expect(w.heard).toEqual([
      'latest weak ["a"]',
      'latest weak ["a","b"]',
      'stable only strong ["a"]',
      'latest weak ["a"] (corrects todo.add: the list is full)',
      'latest strong ["a"]',
    ]);
  });

  it('a failure the latest view already showed, or of an op it never showed, is no correction', () => {
    const w = watching();
    const failed = [{ seq: 1, op: 'todo.add', error: 'no' }];
    w.frame('tentative', ['a'], { upTo: 1, failed }); // op 1 failed, and another client wrote a
    w.frame('tentative', ['a', 'c'], { upTo: 2, failed });
    expect(w.heard).toEqual(['latest weak ["a"]', 'latest weak ["a","c"]']);
  });

  it('after a failover: results of a replica that has fewer of the session ops are held back, and older committed states dropped', () => {
    const w = watching();
    w.frame('tentative', ['a', 'b'], { upTo: 2 });
    w.frame('stable', ['a'], { upTo: 1 }, 10);
    w.failover();
    expect(w.sent.filter((f) => (f as { t: string }).t === 'watch')).toHaveLength(2);
    w.frame('stable', [], { upTo: 0 }, 6); // a replica behind: an older committed state
    w.frame('tentative', ['a'], { upTo: 1 }); // op 2, resubmitted, not there yet
    w.frame('tentative', ['a', 'b'], { upTo: 2 }); // it is now: the same view, not repeated
    w.frame('stable', ['a', 'b'], { upTo: 2 }, 11);
    expect(w.heard).toEqual([
      'latest weak ["a","b"]',
      'stable only strong ["a"]',
      'latest strong ["a","b"]',
    ]);
  });

  it('results of a replica that does not say what it holds replace the latest view, as they come', () => {
    const w = watching();
    w.frame('tentative', ['a'], { upTo: 1 });
    w.frame('stable', []);
    w.frame('tentative', ['a']);
    expect(w.heard).toEqual(['latest weak ["a"]', 'latest strong []', 'latest weak ["a"]']);
  });
});

describe('monotonic views through a LiveQuery (scripted socket)', () => {
  const client = scriptedClients();

  it('latest() keeps the tentative view, latestStable() the synced mark, and onCorrection says what failed', async () => {
    const { creek, socket } = client();
    const q = creek.watch('todo.list' as never, { list: 'mine' } as never);
    const heard: string[] = [];
    q.subscribe({
      onView: (v) => heard.push(`view ${JSON.stringify(v)}`),
      onStable: (v) => heard.push(`stable ${JSON.stringify(v)}`),
      onCorrection: (c) =>
        heard.push(
          `correction ${JSON.stringify(c.previous.value)} -> ${JSON.stringify(c.view.value)}: ${c.failed.map((f) => f.error).join()}`,
        ),
    });
    const s = await socket(0);
    s.welcome();
    const watchId = s.sent.find((f) => f.t === 'watch')!.watchId;
    const frame = (level: string, value: unknown, own: Own, position?: number) =>
      s.receive({
        t: 'watched',
        watchId,
        level,
        outcome: { ok: true, value },
        own,
        ...(position === undefined ? {} : { position }),
      });
    frame('tentative', ['a'], { upTo: 1 });
    frame('stable', [], { upTo: 0 }, 2);
    expect(q.latest()).toEqual({ value: ['a'], level: 'weak', final: false });
    expect(q.latestStable()).toEqual({ value: [], level: 'strong', final: false });
    frame('stable', [], { upTo: 1, failed: [{ seq: 1, op: 'todo.add', error: 'rejected' }] }, 3);
    expect(q.latest()).toEqual({ value: [], level: 'strong', final: false });
    expect(heard).toEqual([
      'view ["a"]',
      'stable []',
      'correction ["a"] -> []: rejected',
      'view []',
      'stable []',
    ]);
    q.close();
  });
});

/**
 * Random runs of one session invoking ops 1..n while it watches a list (where another client adds
 * and removes an item of its own). Op i adds item i, or writes elsewhere; some fail at their place
 * in the committed order (tentatively they applied). The ops reach the replicas mostly in their
 * numbering, not always. The replica the session is connected to reads the list at its tentative
 * state (the ops it has) or its committed one, in any interleaving; a failover moves the session to
 * a replica that has what was committed (or, behind, less), and the other ops reach it again.
 * Whatever the interleaving, the views the session shows never lose an item they showed unless a
 * correction names its op, stable views never go back in committed position, and the last frames
 * leave the latest view and the latest stable at the final state.
 */
describe('monotonic views, over random interleavings of frames', () => {
  type Step =
    'tentative' | 'stable' | 'arrive' | 'commit' | 'other' | 'failover' | 'failover-behind';
  const step = fc.constantFrom<Step>(
    'tentative',
    'stable',
    'arrive',
    'commit',
    'other',
    'failover',
    'failover-behind',
  );

  it('never go back in the session order', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.constantFrom('adds', 'fails', 'elsewhere'), { minLength: 6, maxLength: 6 }),
        fc.shuffledSubarray([1, 2, 3, 4, 5, 6], { minLength: 6, maxLength: 6 }),
        fc.array(step, { maxLength: 60 }),
        fc.boolean(),
        (n, kinds, shuffled, steps, tentativeLast) => {
          const fails = (i: number): boolean => kinds[i - 1] === 'fails';
          const w = watching();
          // The order the ops reach the replicas in: mostly their numbering, but not always (an
          // op one replica refused goes to another after the next one was taken).
          const order = shuffled.filter((i) => i <= n);
          // The replica the session is connected to has the first `have` ops of `order`, and
          // committed the first `committed`.
          let have = 0;
          let committed = 0;
          // Another client's item, there or not (its writes commit at once, here).
          let other = false;
          const isCommitted = (i: number): boolean => order.indexOf(i) < committed;
          const ownAt = (count: number): Own => {
            const held = order.slice(0, count);
            const upTo = Math.max(0, ...held);
            const missing = [];
            for (let i = 1; i <= upTo; i++) if (!held.includes(i)) missing.push(i);
            const failed = held
              .filter((i) => fails(i) && isCommitted(i))
              .sort((a, b) => a - b)
              .map((i) => ({ seq: i, op: 'todo.add', error: `op ${i} failed` }));
            return { upTo, missing, failed };
          };
          // An op that fails does so at its place in the committed order: tentatively it applied.
          const items = (count: number): string[] => {
            const out = other ? ['other'] : [];
            for (let i = 1; i <= n; i++)
              if (
                order.indexOf(i) < count &&
                kinds[i - 1] !== 'elsewhere' &&
                !(fails(i) && isCommitted(i))
              )
                out.push(`item-${i}`);
            return out;
          };
          const read = (level: 'tentative' | 'stable'): void => {
            const count = level === 'tentative' ? have : committed;
            w.frame(level, items(count), ownAt(count), level === 'stable' ? committed : undefined);
          };
          for (const s of steps) {
            if (s === 'arrive' && have < n) have++;
            else if (s === 'commit' && committed < have) committed++;
            else if (s === 'other') other = !other;
            else if (s === 'failover' || s === 'failover-behind') {
              // The next replica has what was committed (or, behind, less of it); the session's
              // other ops reach it as it resubmits them.
              w.failover();
              if (s === 'failover-behind') committed = Math.max(0, committed - 2);
              have = committed;
            } else if (s === 'tentative' || s === 'stable') read(s);
          }
          // The run ends: every op invoked, arrived and committed, and both levels read.
          have = committed = n;
          if (tentativeLast) read('stable');
          read('tentative');
          if (!tentativeLast) read('stable');

          const latest = w.shown.filter((v) => v.shown.latest);
          // (1) Once shown, an item stays, unless a correction named its op.
          const corrected = new Set<string>();
          const ever = new Set<string>();
          for (const v of latest) {
            ever.delete('other');
            for (const c of v.shown.corrected) corrected.add(c.error);
            const now = v.value as string[];
            for (const item of ever)
              if (!now.includes(item))
                expect(corrected.has(`op ${item.slice('item-'.length)} failed`)).toBe(true);
            for (const item of now) ever.add(item);
          }
          // (2) Stable views never go back in committed position.
          const positions = w.shown.flatMap((v) =>
            v.shown.position === undefined ? [] : [v.shown.position],
          );
          expect(positions).toEqual([...positions].sort((a, b) => a - b));
          // (3) The last frames leave the latest view, and the latest stable, at the final state.
          const last = latest.at(-1)!;
          expect(last.value).toEqual(items(n));
          expect(w.shown.filter((v) => v.level === 'strong').at(-1)!.value).toEqual(items(n));
        },
      ),
      {
        numRuns: 1000,
        examples: [
          // A stable result from before the session's op 2 (which wrote elsewhere) stands for the
          // latest view; another client's item comes and goes; the last stable result, equal to
          // the latest view, must still become the latest stable (the simulator, seed 51).
          [
            2,
            ['adds', 'elsewhere', 'adds', 'adds', 'adds', 'adds'],
            [1, 2, 3, 4, 5, 6],
            ['arrive', 'arrive', 'tentative', 'commit', 'stable', 'other', 'stable', 'other'],
            true,
          ],
          // Op 3 reached the order before op 2: the committed state holds ops up to 3 but not 2,
          // and must not replace the tentative view that showed 2.
          [
            3,
            ['adds', 'adds', 'adds', 'adds', 'adds', 'adds'],
            [1, 3, 2, 4, 5, 6],
            ['arrive', 'arrive', 'arrive', 'tentative', 'commit', 'commit', 'stable'],
            false,
          ],
        ],
      },
    );
  });
});
