import { describe, expect, it } from 'vitest';
import type { JsonValue } from '@creek/app';
import { Entry, newVersion, rankOf, TENTATIVE, type Version } from '@creek/replica/core/entry.js';
import { VersionStore } from '@creek/replica/core/version-store.js';
import { MirrorFeed, writerName } from '@creek/replica/exec/mirror-feed.js';
import { MirrorStore } from '@creek/replica/exec/mirror-store.js';

/**
 * A worker runs the jobs queued on it one after another; the main thread installs each result
 * only when it comes back. The worker's mirror takes each job's writes as its own versions at
 * once (MirrorStore.installOwn), so the jobs behind it read them, and the main thread reads those
 * reads as the versions it installed from that job's result (MirrorFeed.ownResult).
 */
function entry(ts: number, eventNo: number): Entry {
  const e = new Entry(
    { ts, id: { replica: 0, eventNo }, op: 'x', args: null, strong: false, causalCtx: null },
    null,
    0,
  );
  e.commitSeq = TENTATIVE;
  return e;
}

/** A store with its feed, one mirror, and the mirror brought up to date. */
function setUp() {
  const feed = new MirrorFeed(1);
  const store = new VersionStore(feed);
  const mirror = new MirrorStore();
  const sync = () => mirror.apply(feed.take(0));
  return { feed, store, mirror, sync };
}

/** The core installs job `jobId`'s result for `writer`, as the worker pool hands it over. */
function handOver(
  feed: MirrorFeed,
  store: VersionStore,
  jobId: number,
  writer: Entry,
  writes: [string, JsonValue | undefined][],
  install = true,
): Version[] {
  feed.ownResult(
    0,
    jobId,
    writerName(writer),
    writes.map(([key]) => key),
    feed.resets,
  );
  const versions = writes.map(([key, value]) => newVersion(writer, key, value));
  if (install) store.install(versions);
  feed.ownResultDone();
  return versions;
}

describe("a worker's mirror and its own jobs' writes", () => {
  it('lets a job read the writes of the job before it on the same worker, and resolves the read to the installed version', () => {
    const { feed, store, mirror, sync } = setUp();
    const base = entry(1, 1);
    store.install([newVersion(base, 'd', 10)]);
    sync();
    const w = entry(2, 2);
    const r = entry(3, 3);
    // The worker ran w (job 7): d = 11, taken as its own.
    mirror.installOwn(writerName(w), 7, rankOf(w), [['d', 11]]);
    // r, queued behind it, reads w's value, named by job.
    const snapshot = mirror.reader(rankOf(r));
    expect(snapshot.get('d')).toBe(11);
    expect(snapshot.reads).toEqual([['key', 'd', writerName(w), -7]]);
    // w's result comes back and is installed; r's read is w's installed version.
    const [installed] = handOver(feed, store, 7, w, [['d', 11]]);
    expect(feed.resolve(snapshot.reads[0]!)).toEqual({ kind: 'key', key: 'd', version: installed });
    // The installation the main thread sends back renumbers the worker's own version.
    sync();
    const again = mirror.reader(rankOf(r));
    expect(again.get('d')).toBe(11);
    expect(again.reads[0]![3]).toBeGreaterThan(0);
    expect(mirror.size()).toBe(2);
  });

  it('sends the worker that ran a job the installation of its result without the values, and the other mirrors the values', () => {
    const feed = new MirrorFeed(2);
    const store = new VersionStore(feed);
    const base = entry(1, 1);
    store.install([newVersion(base, 'd', 10)]);
    const mirrors = [new MirrorStore(), new MirrorStore()];
    mirrors.forEach((m, i) => m.apply(feed.take(i)));
    const w = entry(2, 2);
    mirrors[0]!.installOwn(writerName(w), 7, rankOf(w), [
      ['d', 11],
      ['gone', undefined],
    ]);
    const [installed] = handOver(feed, store, 7, w, [
      ['d', 11],
      ['gone', undefined],
    ]);
    const [toRunner] = feed.take(0);
    const [toOther] = feed.take(1);
    expect(toRunner).toEqual(['own', writerName(w), installed!.install, rankOf(w), 7]);
    expect(toOther).toEqual([
      'install',
      writerName(w),
      installed!.install,
      rankOf(w),
      [
        ['d', 11],
        ['gone', undefined],
      ],
    ]);
    mirrors[0]!.apply([toRunner!]);
    mirrors[1]!.apply([toOther!]);
    // Both mirrors now hold the same versions, named alike: reads resolve to the installed ones.
    for (const m of mirrors) {
      const snapshot = m.reader(rankOf(entry(3, 3)));
      expect(snapshot.get('d')).toBe(11);
      expect(snapshot.reads).toEqual([['key', 'd', writerName(w), installed!.install]]);
      expect(feed.resolve(snapshot.reads[0]!)).toEqual({
        kind: 'key',
        key: 'd',
        version: installed,
      });
      expect(m.size()).toBe(3);
    }
  });

  it('sends the values of a same-op installation that is not the result: a result with no writes, then the op run again inline', () => {
    const { feed, store, mirror, sync } = setUp();
    sync();
    const w = entry(2, 2);
    // The worker ran w (job 7), which wrote nothing; the core installs the result (nothing), finds
    // it invalid and runs w again on the main thread, within the same hand-off: d = 12.
    mirror.installOwn(writerName(w), 7, rankOf(w), []);
    feed.ownResult(0, 7, writerName(w), [], feed.resets);
    store.install([]);
    const [again] = [newVersion(w, 'd', 12)];
    store.install([again!]);
    feed.ownResultDone();
    const updates = feed.take(0);
    expect(updates).toEqual([['install', writerName(w), again!.install, rankOf(w), [['d', 12]]]]);
    mirror.apply(updates);
    const snapshot = mirror.reader(rankOf(entry(3, 3)));
    expect(snapshot.get('d')).toBe(12);
    expect(feed.resolve(snapshot.reads[0]!)).toEqual({ kind: 'key', key: 'd', version: again });
  });

  it('keeps nothing of jobs that wrote nothing', () => {
    const { mirror, sync } = setUp();
    sync();
    for (let job = 1; job <= 100; job++) {
      const w = entry(job + 1, job + 1);
      mirror.installOwn(writerName(w), job, rankOf(w), []);
    }
    expect(mirror.writersHeld()).toBe(0);
    expect(mirror.size()).toBe(0);
  });

  it('forgets a result being handed over when a new store is attached, and counts the reset', () => {
    const feed = new MirrorFeed(1);
    new VersionStore(feed);
    expect(feed.resets).toBe(1);
    const w = entry(2, 2);
    feed.ownResult(0, 7, writerName(w), ['d'], feed.resets);
    const store = new VersionStore(feed);
    expect(feed.resets).toBe(2);
    const [v] = [newVersion(w, 'd', 11)];
    store.install([v!]);
    feed.ownResultDone();
    // The new store's installation is no mirror's own: the values go, and no remove follows.
    expect(feed.take(0)).toEqual([
      ['reset'],
      ['install', writerName(w), v!.install, rankOf(w), [['d', 11]]],
    ]);
  });

  it("takes no result of a job sent before the last reset as a mirror's own", () => {
    const feed = new MirrorFeed(1);
    new VersionStore(feed);
    const sentUnder = feed.resets;
    const store = new VersionStore(feed);
    feed.take(0);
    const w = entry(2, 2);
    // Job 7 was sent to the mirror before the reset; its result comes back after it.
    feed.ownResult(0, 7, writerName(w), ['d'], sentUnder);
    const [v] = [newVersion(w, 'd', 11)];
    store.install([v!]);
    feed.ownResultDone();
    // The values go, as to any mirror that never had them, and no remove follows.
    expect(feed.take(0)).toEqual([['install', writerName(w), v!.install, rankOf(w), [['d', 11]]]]);
  });

  it('renumbers only the versions still tagged with the job, and takes the rank the writer has now', () => {
    const { mirror } = setUp();
    const w = entry(2, 2);
    const later = entry(5, 5);
    mirror.installOwn(writerName(later), 9, rankOf(later), [['d', 30]]);
    mirror.installOwn(writerName(w), 7, rankOf(w), [
      ['d', 11],
      ['e', 12],
    ]);
    // e's version of w was replaced since (another execution of w, installed as 40).
    mirror.apply([['install', writerName(w), 40, rankOf(w), [['e', 13]]]]);
    // w was committed meanwhile (commit position 0): it now precedes every tentative writer.
    mirror.apply([['own', writerName(w), 41, [0, 2, 0, 2], 7]]);
    const snapshot = mirror.reader(rankOf(entry(6, 6)));
    expect(snapshot.get('d')).toBe(30);
    expect(snapshot.get('e')).toBe(13);
    expect(snapshot.reads).toEqual([
      ['key', 'd', writerName(later), -9],
      ['key', 'e', writerName(w), 40],
    ]);
    // A committed reader before `later` sees w's version of d, renumbered.
    const early = mirror.reader([1, 9, 0, 9]);
    expect(early.get('d')).toBe(11);
    expect(early.reads).toEqual([['key', 'd', writerName(w), 41]]);
  });

  it('reads a scan of its own versions the same way', () => {
    const { feed, store, mirror } = setUp();
    const w = entry(2, 2);
    mirror.installOwn(writerName(w), 3, rankOf(w), [
      ['acct/1', 5],
      ['acct/2', 6],
    ]);
    const snapshot = mirror.reader(rankOf(entry(3, 3)));
    expect(snapshot.scan('acct/')).toEqual([
      ['acct/1', 5],
      ['acct/2', 6],
    ]);
    const versions = handOver(feed, store, 3, w, [
      ['acct/1', 5],
      ['acct/2', 6],
    ]);
    expect(feed.resolve(snapshot.reads[0]!)).toEqual({ kind: 'scan', prefix: 'acct/', versions });
  });

  it('takes a read of a result the core rolled back and ran again for stale, never for the new version', () => {
    const { feed, store, mirror } = setUp();
    const w = entry(2, 2);
    mirror.installOwn(writerName(w), 7, rankOf(w), [['d', 11]]);
    const snapshot = mirror.reader(rankOf(entry(3, 3)));
    snapshot.get('d');
    const first = handOver(feed, store, 7, w, [['d', 11]]);
    // The core found w's result invalid: rolled back, run again inline with another value.
    store.remove(first);
    store.install([newVersion(w, 'd', 12)]);
    expect(feed.resolve(snapshot.reads[0]!)).toEqual({
      kind: 'key',
      key: 'd',
      version: null,
      stale: true,
    });
    expect(feed.staleReads).toBe(1);
  });

  it('takes a read of a result the core never installed for stale, and the mirror drops that result', () => {
    const { feed, store, mirror, sync } = setUp();
    const base = entry(1, 1);
    store.install([newVersion(base, 'd', 10)]);
    sync();
    const w = entry(2, 2);
    mirror.installOwn(writerName(w), 7, rankOf(w), [['d', 11]]);
    const snapshot = mirror.reader(rankOf(entry(3, 3)));
    snapshot.get('d');
    // Its op was dropped while it ran (its origin closed): nothing is installed.
    handOver(feed, store, 7, w, [['d', 11]], false);
    expect(feed.resolve(snapshot.reads[0]!)).toMatchObject({ version: null, stale: true });
    sync();
    expect(mirror.reader(rankOf(entry(3, 3))).get('d')).toBe(10);
    expect(mirror.size()).toBe(1);
  });
});
