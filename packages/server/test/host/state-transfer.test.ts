import { describe, expect, it } from 'vitest';
import { toFrozenJson } from '@creek/app';
import { decodePeerFrame } from '@creek/protocol';
import { DottedVersionVector } from '@creek/replica/core/dvv.js';
import type { Req } from '@creek/replica/core/types.js';
import {
  fromChunks,
  IncomingTransfer,
  MAX_TRANSFER_ANSWER_CHARS,
  MAX_TRANSFER_WINDOW,
  OutgoingTransfers,
  paceFor,
  TRANSFER_CHUNK_CHARS,
  toChunks,
  TRANSFER_RETRY_MS,
  TRANSFER_SNAPSHOT_EVERY_MS,
  TRANSFER_SWITCH_MS,
  TRANSFER_WINDOW,
  type TransferMessage,
  type TransferPart,
  type TransferredState,
} from '@creek/replica/host/state-transfer.js';
import { HostCluster } from './host-cluster.js';

function req(eventNo: number, args: unknown = { key: `k${eventNo}` }): Req {
  return {
    ts: 1000 + eventNo,
    id: { replica: 1, eventNo },
    op: 'kv.increment',
    args: toFrozenJson(args),
    strong: eventNo % 3 === 0,
    causalCtx: eventNo % 3 === 0 ? DottedVersionVector.fromPrefixes([[0, eventNo]]) : null,
  };
}

function state(keys: number, reqs = 40): TransferredState {
  return {
    finalized: 500,
    committedLive: 10,
    known: DottedVersionVector.fromPrefixes([
      [0, 300],
      [1, 200],
    ]),
    hlc: 123_456,
    truncatedBelow: 77,
    config: [
      { from: 0, members: [0, 1, 2].map((id) => ({ id, address: `ws://h${id}` })), retired: [] },
      {
        from: 70,
        members: [0, 1, 3].map((id) => ({ id, address: `ws://h${id}` })),
        retired: [2],
        nonce: 'n1',
      },
    ],
    delivered: [{ replica: 1, eventNo: 198 }],
    state: Array.from({ length: keys }, (_, i) => [`key/${i}`, toFrozenJson({ n: i })] as const),
    reqs: Array.from({ length: reqs }, (_, i) => req(i + 1)),
    held: [req(500), req(501)],
  };
}

type Chunk = Extract<TransferMessage, { type: 'chunk' }>;

describe('state transfer chunks', () => {
  it('split a checkpoint into bounded chunks that make it up again, in any order', () => {
    const s = state(2_000);
    const parts = toChunks(s, 4_000);
    expect(parts.length).toBeGreaterThan(10);
    expect(parts[0]!.kind).toBe('header');
    for (const p of parts.slice(1)) expect(JSON.stringify(p).length).toBeLessThan(4_000 + 600);
    const shuffled = [...parts.entries()].reverse();
    const back: TransferPart[] = [];
    for (const [i, p] of shuffled) back[i] = p;
    const r = fromChunks(back);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.state.state).toEqual(s.state);
    expect(r.state.reqs.map((q) => q.id)).toEqual(s.reqs.map((q) => q.id));
    expect(r.state.held).toHaveLength(2);
    expect(r.state.known.toJSON()).toEqual(s.known.toJSON());
    expect(r.state.truncatedBelow).toBe(77);
    expect(r.state.config).toEqual(s.config);
  });

  it('are refused when one is missing, mangled, or from another checkpoint', () => {
    const parts = toChunks(state(500), 2_000);
    const missing = [...parts];
    delete missing[3];
    expect(fromChunks(missing)).toEqual({
      ok: false,
      reason: expect.stringMatching(/chunk 3 .* missing/),
    });
    // A value changed in flight: the counts add up, the digest does not.
    const mangled = parts.map((p) =>
      p.kind === 'state' && p.entries[0]![0] === 'key/0'
        ? { ...p, entries: [['key/0', toFrozenJson({ n: 999 })] as const, ...p.entries.slice(1)] }
        : p,
    );
    expect(fromChunks(mangled)).toEqual({ ok: false, reason: expect.stringMatching(/digest/) });
    // A chunk of another checkpoint (the same keys, other values) in place of one of these.
    const changed = state(500);
    const other = toChunks(
      { ...changed, state: changed.state.map(([k, v]) => [k, toFrozenJson({ was: v })] as const) },
      2_000,
    );
    const mixed = [...parts];
    mixed[1] = other[1]!;
    expect(fromChunks(mixed).ok).toBe(false);
    expect(fromChunks([]).ok).toBe(false);
  });

  it('are pulled a window at a time, asked again after a silence, and from another peer after a long one', () => {
    const out = new OutgoingTransfers();
    let snapshots = 0;
    const snap = () => {
      snapshots++;
      return state(3_000);
    };
    const t = new IncomingTransfer(1, 7, 0);
    let now = 0;
    const first = out.answer(
      2,
      t.asks(now)[0] as Extract<TransferMessage, { type: 'ask' }>,
      now,
      snap,
      4_000,
    );
    expect(first).toHaveLength(TRANSFER_WINDOW);
    // The window arrives but for one chunk: the receiver waits, then asks from the missing one.
    const lost = first[2] as Chunk;
    const results = first.filter((m) => m !== lost).map((m) => t.onChunk(1, m as Chunk, now));
    expect(results.every((r) => r === 'wait')).toBe(true);
    expect(t.due(now + TRANSFER_RETRY_MS - 1)).toBe(null);
    now += TRANSFER_RETRY_MS;
    expect(t.due(now)).toBe('retry');
    const again = t.asks(now)[0] as Extract<TransferMessage, { type: 'ask' }>;
    expect(again.next).toBe(2);
    let answer = out.answer(2, again, now, snap, 4_000);
    let complete = false;
    while (!complete) {
      let next = false;
      for (const m of answer) {
        const r = t.onChunk(1, m as Chunk, now);
        if (r === 'complete') complete = true;
        if (r === 'next') next = true;
      }
      if (complete) break;
      expect(next).toBe(true);
      answer = out.answer(
        2,
        t.asks(now)[0] as Extract<TransferMessage, { type: 'ask' }>,
        now,
        snap,
        4_000,
      );
    }
    // One snapshot served the whole session, whatever was asked again.
    expect(snapshots).toBe(1);
    const r = fromChunks(t.chunks());
    expect(r.ok && r.state.state.length).toBe(3_000);
    // Chunks of another session, or from another peer, are not taken.
    const t2 = new IncomingTransfer(1, 8, now);
    expect(t2.onChunk(0, answer[0] as Chunk, now)).toBe('duplicate');
    expect(t2.onChunk(1, answer[0] as Chunk, now)).toBe('duplicate');
    // A sender asked to go on with a session it has no snapshot of refuses (it restarted).
    expect(
      new OutgoingTransfers().answer(2, { type: 'ask', session: 8, next: 3 }, now, snap),
    ).toEqual([{ type: 'refuse', session: 8 }]);
    expect(t2.progress().received).toBe(0);
    expect(t2.due(now + TRANSFER_SWITCH_MS)).toBe('switch');
  });
});

describe('state transfer paced for long round trips', () => {
  type Ask = Extract<TransferMessage, { type: 'ask' }>;
  const pacing = { window: 32, retryMs: 500, selective: true, burstGapMs: 100 };

  it('asks for a window of its own, and again only for the chunks lost', () => {
    const out = new OutgoingTransfers();
    const snap = () => state(3_000);
    const t = new IncomingTransfer(1, 7, 0, pacing);
    let now = 0;
    const serve = (asks: readonly TransferMessage[]) =>
      asks.flatMap((a) => out.answer(2, a as Ask, now, snap, 2_000) as Chunk[]);
    const firstAsks = t.asks(now);
    expect(firstAsks).toEqual([{ type: 'ask', session: 7, next: 0, window: 32 }]);
    const first = serve(firstAsks);
    expect(first).toHaveLength(32);
    // Chunks 3 and 4 are lost, the rest arrive; half the window in, it asks for more at once.
    now = 150;
    const more: TransferMessage[] = [];
    for (const c of first.filter((c) => c.index !== 3 && c.index !== 4))
      if (t.onChunk(1, c, now) === 'next') more.push(...t.more(now));
    expect(more.length).toBeGreaterThan(0);
    expect(more.every((a) => (a as Ask).next >= 32)).toBe(true);
    // No chunk for the burst gap: it asks again for the two lost chunks only, in one ask.
    expect(t.due(now + 99)).toBe(null);
    now += 100;
    expect(t.due(now)).toBe('retry');
    const again = t.asks(now) as Ask[];
    expect(again[0]).toEqual({ type: 'ask', session: 7, next: 3, window: 2 });
    let pending = [...serve(again), ...serve(more)];
    let complete = false;
    for (let round = 0; round < 100 && !complete; round++) {
      const asks: TransferMessage[] = [];
      for (const c of pending) {
        const r = t.onChunk(1, c, now);
        if (r === 'complete') complete = true;
        if (r === 'next') asks.push(...t.more(now));
      }
      now += 500;
      if (!complete && asks.length === 0) asks.push(...t.asks(now));
      pending = serve(asks);
    }
    expect(complete).toBe(true);
    const r = fromChunks(t.chunks());
    expect(r.ok && r.state.state.length).toBe(3_000);
  });

  it("keeps the default pacing's asks as they were, and a sender bounds the window it serves", () => {
    // The default pacing names no window: an ask reads as before asks could name one.
    expect(new IncomingTransfer(1, 7, 0).asks(0)).toEqual([{ type: 'ask', session: 7, next: 0 }]);
    const ask = (window: number): Ask => ({ type: 'ask', session: 1, next: 0, window });
    const small = new OutgoingTransfers().answer(2, ask(1_000), 0, () => state(30_000), 100);
    expect(small).toHaveLength(MAX_TRANSFER_WINDOW);
    // Large chunks: a few MB per answer, whatever was asked (8 MB of state in 1 MB chunks).
    const big = new OutgoingTransfers().answer(2, ask(64), 0, () => state(270_000), 1_000_000);
    expect(big).toHaveLength(Math.floor(MAX_TRANSFER_ANSWER_CHARS / 1_000_000));
    // A receiver asks for no more than a sender of chunks its size serves: with full-size chunks,
    // a window of 64 is 20, and with the simulator's small ones it stays 64.
    const wan = { window: 64, retryMs: 500, selective: true, burstGapMs: 100 };
    expect(paceFor(wan).window).toBe(MAX_TRANSFER_ANSWER_CHARS / TRANSFER_CHUNK_CHARS);
    expect(paceFor(wan, 600)).toBe(wan);
    expect(new IncomingTransfer(1, 7, 0, paceFor(wan)).asks(0)).toEqual([
      { type: 'ask', session: 7, next: 0, window: 20 },
    ]);
    // Over the wire, a window beyond the bound is a bad frame.
    const frame = (window: number) =>
      JSON.stringify({ t: 'transfer', msg: { type: 'ask', session: 1, next: 0, window } });
    expect(decodePeerFrame(frame(64)).ok).toBe(true);
    expect(decodePeerFrame(frame(MAX_TRANSFER_WINDOW + 1)).ok).toBe(false);
    expect(decodePeerFrame(frame(0)).ok).toBe(false);
  });
});

describe('state transfer at the edge', () => {
  it('makes a peer at most one new snapshot a second, and takes no chunk numbers past its bound', () => {
    const out = new OutgoingTransfers();
    let snapshots = 0;
    const snap = () => {
      snapshots++;
      return state(10);
    };
    expect(out.answer(2, { type: 'ask', session: 1, next: 0 }, 0, snap)[0]!.type).toBe('chunk');
    // A peer asking for new sessions in a loop gets refusals, not a snapshot each.
    for (let session = 2; session < 50; session++)
      expect(out.answer(2, { type: 'ask', session, next: 0 }, 10, snap)).toEqual([
        { type: 'refuse', session },
      ]);
    expect(snapshots).toBe(1);
    expect(
      out.answer(2, { type: 'ask', session: 60, next: 0 }, TRANSFER_SNAPSHOT_EVERY_MS, snap)[0]!
        .type,
    ).toBe('chunk');
    expect(snapshots).toBe(2);
    // A chunk claiming more parts than any checkpoint could have is a bad frame.
    const chunk = (total: number) =>
      JSON.stringify({
        t: 'transfer',
        msg: { type: 'chunk', session: 1, index: 0, total, part: { kind: 'held', reqs: [] } },
      });
    expect(decodePeerFrame(chunk(3)).ok).toBe(true);
    expect(decodePeerFrame(chunk(2_000_000)).ok).toBe(false);
  });
});

describe('state transfer between replicas', () => {
  it('rebuilds a wiped replica from a peer that compacted, through lost and reordered chunks', () => {
    const c = new HostCluster(3, 41, { checkpointEvery: 20, transferChunkChars: 100 });
    c.workload(200, { keys: 40, strongEvery: 4 });
    c.settle();
    c.run(500); // checkpoints, truncation and pruning everywhere
    expect(c.host(0).inspect().paxos.status().truncatedBelow).toBeGreaterThan(0);
    // One chunk in four is lost on the way.
    let n = 0;
    c.dropIf = (_from, to, msg) =>
      to === 2 && msg.kind === 'transfer' && msg.msg.type === 'chunk' && n++ % 4 === 1;
    c.wipe(2);
    c.run(3_000);
    c.dropIf = () => false;
    expect(c.halts).toEqual([]);
    const h = c.host(2);
    expect(h.counters.transfersIn).toBeGreaterThanOrEqual(1);
    expect(n).toBeGreaterThan(4); // chunks were lost, and asked for again
    expect(h.counters.chunksReceived).toBeGreaterThan(4);
    expect(h.counters.transfersRejected).toBe(0);
    c.workload(40, { keys: 40, strongEvery: 4 });
    c.settle();
    for (const i of [1, 2])
      expect(c.host(i).inspect().replica.stateDigest()).toBe(
        c.host(0).inspect().replica.stateDigest(),
      );
    // What it installed is on its disk, in one checkpoint record: a restart comes back the same.
    c.crash(2);
    c.restart(2);
    c.settle();
    expect(c.host(2).inspect().replica.stateDigest()).toBe(
      c.host(0).inspect().replica.stateDigest(),
    );
    expect(c.halts).toEqual([]);
  });

  it('resumes after the rebuilding replica crashes mid-transfer, from the chunks on its disk', () => {
    const c = new HostCluster(3, 43, { checkpointEvery: 20, transferChunkChars: 100 });
    c.workload(200, { keys: 40, strongEvery: 4 });
    c.settle();
    c.run(500);
    // Chunks reach replica 2 until it has 5 of them; then it crashes (its disk kept).
    let got = 0;
    c.dropIf = (_from, to, msg) =>
      to === 2 && msg.kind === 'transfer' && msg.msg.type === 'chunk' && ++got > 5;
    c.wipe(2);
    c.run(1_000);
    expect(c.host(2).rebuilding).toBe(true);
    const onDisk = c.nodes[2]!.disk.filter((r) => r.layer === 'transfer').length;
    expect(onDisk).toBe(5);
    c.crash(2);
    c.dropIf = () => false;
    c.restart(2);
    expect(c.host(2).rebuilding).toBe(true);
    expect(c.host(2).counters.transfersResumed).toBe(1);
    c.run(2_000);
    const h = c.host(2);
    expect(h.counters.transfersIn).toBeGreaterThanOrEqual(1);
    // It asked for the rest only, from the same peer and session.
    expect(h.counters.transferAttempts).toBe(0);
    expect(h.counters.transfersRejected).toBe(0);
    // The installed checkpoint superseded the chunks.
    expect(c.nodes[2]!.disk.some((r) => r.layer === 'transfer')).toBe(false);
    c.workload(20, { keys: 40, strongEvery: 4 });
    c.settle();
    expect(h.inspect().replica.stateDigest()).toBe(c.host(0).inspect().replica.stateDigest());
    expect(c.halts).toEqual([]);
  });

  it('starts over elsewhere when the sender lost the snapshot it was pulling', () => {
    const c = new HostCluster(3, 44, { checkpointEvery: 20, transferChunkChars: 100 });
    c.workload(200, { keys: 40, strongEvery: 4 });
    c.settle();
    c.run(500);
    let got = 0;
    let sender = -1;
    c.dropIf = (from, to, msg) => {
      if (to !== 2 || msg.kind !== 'transfer' || msg.msg.type !== 'chunk') return false;
      sender = from;
      return ++got > 5;
    };
    c.wipe(2);
    c.run(1_000);
    expect(sender).toBeGreaterThanOrEqual(0);
    // Both restart: the receiver resumes, the sender has no snapshot of that session any more.
    c.crash(2);
    c.crash(sender);
    c.dropIf = () => false;
    c.restart(sender);
    c.restart(2);
    c.run(3_000);
    const h = c.host(2);
    expect(h.counters.transfersResumed).toBe(1);
    expect(h.counters.transferAttempts).toBeGreaterThanOrEqual(1); // a new session after the refusal
    expect(h.counters.transfersIn).toBeGreaterThanOrEqual(1);
    c.settle();
    expect(h.inspect().replica.stateDigest()).toBe(c.host(0).inspect().replica.stateDigest());
    expect(c.halts).toEqual([]);
  });
});
