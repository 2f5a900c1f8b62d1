import {
  EVENTS_PATH,
  EVENTS_VERSION,
  EventsFrameSchema,
  type EventsFrame,
  type ReplicaEvent,
} from '@creek/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { RawClient, within } from './cluster-harness.js';

/**
 * The /events stream behind the admin token (protocol events.ts), against real replica processes:
 * what a viewer is sent, who may watch, what a malformed, oversized, late or wrong first frame
 * gets, and a viewer that reads nothing while a burst of ops runs.
 */
let cluster: LocalCluster;

beforeAll(async () => {
  cluster = await LocalCluster.start({
    replicas: 3,
    logLevel: 'error',
    // 100 events a second for a viewer: a burst of a few thousand ops (each at least two events)
    // goes over it unless the burst is spread over a minute, so it is sampled however slowly a
    // loaded machine runs it (at 300 a second, a burst had to end within ~10 s).
    edgeLimits: { helloDeadlineMs: 500, viewerEventsPerSecond: 100 },
  });
});
afterAll(async () => {
  await cluster.stop(1_000);
});

const eventsUrl = (i: number): string => cluster.url(i).replace(/\/client$/, EVENTS_PATH);

/** A viewer of replica i: every frame it got, parsed and checked against the protocol. */
class Viewer {
  readonly frames: EventsFrame[] = [];
  readonly ws: WebSocket;
  closed: { code: number; reason: string } | null = null;
  readonly opened: Promise<void>;

  constructor(i: number) {
    this.ws = new WebSocket(eventsUrl(i));
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('error', reject);
    });
    this.ws.on('message', (d) => {
      this.frames.push(EventsFrameSchema.parse(JSON.parse(d.toString())));
    });
    this.ws.on('close', (code, reason) => (this.closed = { code, reason: reason.toString() }));
  }

  async watch(token: string = cluster.adminToken, version = EVENTS_VERSION): Promise<this> {
    await this.opened;
    this.ws.send(JSON.stringify({ t: 'watch', version, token }));
    return this;
  }

  events(): ReplicaEvent[] {
    return this.frames.flatMap((f) => (f.t === 'events' ? f.events : []));
  }

  async until(what: string, done: () => boolean, ms = 10_000): Promise<void> {
    const start = Date.now();
    while (!done()) {
      if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

describe('the event stream', () => {
  it('tells a viewer who it is, then what the replica does: ops, answers, commits, Paxos, links, status', async () => {
    const v = await new Viewer(0).watch();
    await v.until('hello', () => v.frames.length > 0);
    expect(v.frames[0]).toMatchObject({ t: 'hello', version: EVENTS_VERSION, replica: 0 });
    expect((v.frames[0] as { replicas: number[] }).replicas).toEqual([0, 1, 2]);
    const client = await RawClient.connect(cluster.url(0), cluster.token);
    const weak = client.invoke('kv.put', { key: 'ev/a', value: 1 }, 'weak');
    const strong = client.invoke('kv.increment', { key: 'ev/b' }, 'strong');
    await within(Promise.all([weak.done, strong.done]), 10_000, 'ops answered');
    const ops = () => v.events().filter((e) => e.e === 'op' && e.origin === 'local');
    await v.until('both ops, committed', () => {
      const ids = ops().map((e) => (e as { id: string }).id);
      const committed = v.events().flatMap((e) => (e.e === 'commit' ? e.ids : []));
      return ids.length === 2 && ids.every((id) => committed.includes(id));
    });
    const [put, inc] = ops() as Extract<ReplicaEvent, { e: 'op' }>[];
    expect(put).toMatchObject({ op: 'kv.put', level: 'weak', origin: 'local' });
    expect(inc).toMatchObject({ op: 'kv.increment', level: 'strong', origin: 'local' });
    expect(put!.id).toMatch(/^r0#\d+$/);
    const answers = v.events().filter((e) => e.e === 'response');
    expect(answers).toContainEqual(
      expect.objectContaining({ id: put!.id, level: 'tentative', ok: true }),
    );
    expect(answers).toContainEqual(
      expect.objectContaining({ id: inc!.id, level: 'stable', ok: true }),
    );
    // Commits carry their positions: consecutive, from 0.
    const commits = v.events().filter((e) => e.e === 'commit') as Extract<
      ReplicaEvent,
      { e: 'commit' }
    >[];
    for (let k = 1; k < commits.length; k++)
      expect(commits[k]!.position).toBe(commits[k - 1]!.position + commits[k - 1]!.ids.length);
    const kinds = new Set(v.events().map((e) => e.e));
    for (const kind of ['paxos', 'links', 'status', 'execution', 'gossip'] as const)
      expect(kinds, kind).toContain(kind);
    const status = v.events().find((e) => e.e === 'status') as Extract<
      ReplicaEvent,
      { e: 'status' }
    >;
    expect(status.digest).toMatch(/^[0-9a-f]+$/);
    expect(status.paused).toBe(false);
    const links = v.events().find((e) => e.e === 'links') as Extract<ReplicaEvent, { e: 'links' }>;
    expect(links.peers.map((p) => p.id).sort()).toEqual([1, 2]);
    // A link an operator blocks shows as blocked.
    await cluster.admin(0, 'block', { peer: 2, direction: 'out' });
    try {
      await v.until('the blocked link', () =>
        v.events().some((e) => e.e === 'links' && e.peers.some((p) => p.id === 2 && p.blockedOut)),
      );
    } finally {
      await cluster.admin(0, 'unblock');
    }
    // So does the delay an operator adds to a link, and its removal.
    expect(links.peers.every((p) => p.delayMs === 0)).toBe(true);
    await cluster.admin(0, 'delay', { peer: 1, ms: 40 });
    try {
      await v.until('the delayed link', () =>
        v
          .events()
          .some((e) => e.e === 'links' && e.peers.some((p) => p.id === 1 && p.delayMs === 40)),
      );
    } finally {
      await cluster.admin(0, 'delay', { peer: 1, ms: 0 });
    }
    await v.until('the link without delay', () => {
      const last = v.events().findLast((e) => e.e === 'links');
      return last?.e === 'links' && last.peers.find((p) => p.id === 1)?.delayMs === 0;
    });
    client.close();
    v.ws.close();
    const s = await cluster.status(0);
    expect(s!.events.viewers).toBeGreaterThanOrEqual(1);
  });

  it('refuses a wrong token, naming the problem, and closes', async () => {
    const v = await new Viewer(1).watch('not-the-admin-token');
    await v.until('close', () => v.closed !== null);
    expect(v.closed!.code).toBe(1008);
    expect(v.frames).toEqual([{ t: 'error', message: 'wrong admin token' }]);
  });

  it('refuses the client token too: events are for the admin', async () => {
    const v = await new Viewer(1).watch(cluster.token);
    await v.until('close', () => v.closed !== null);
    expect(v.closed!.code).toBe(1008);
  });

  it('refuses a first frame that is not JSON, or not a watch, or of another version', async () => {
    const notJson = new Viewer(1);
    await notJson.opened;
    notJson.ws.send('watch please');
    const notWatch = new Viewer(1);
    await notWatch.opened;
    notWatch.ws.send(JSON.stringify({ t: 'hello', version: 1, token: cluster.adminToken }));
    const future = await new Viewer(1).watch(cluster.adminToken, EVENTS_VERSION + 1);
    for (const v of [notJson, notWatch, future]) {
      await v.until('close', () => v.closed !== null);
      expect(v.closed!.code).toBe(1008);
      expect(v.frames[0]?.t).toBe('error');
    }
    expect((notJson.frames[0] as { message: string }).message).toMatch(/must be JSON/);
    expect((notWatch.frames[0] as { message: string }).message).toMatch(/"t":"watch"/);
    expect((future.frames[0] as { message: string }).message).toMatch(/upgrade the older side/);
  });

  it('closes a viewer that sends an oversized first frame, or nothing in time', async () => {
    const big = new Viewer(2);
    await big.opened;
    big.ws.send(JSON.stringify({ t: 'watch', version: 1, token: 'x'.repeat(100_000) }));
    const silent = new Viewer(2);
    await silent.opened;
    for (const v of [big, silent]) await v.until('close', () => v.closed !== null, 5_000);
    expect(big.closed!.code).toBe(1009);
    expect(silent.closed!.code).toBe(1008);
    expect(silent.closed!.reason).toMatch(/no accepted watch within 500 ms/);
  });

  it('samples a burst over the viewer budget and says how much it dropped; a viewer that reads nothing slows nothing', async () => {
    const reading = await new Viewer(1).watch();
    const stalled = await new Viewer(1).watch();
    await reading.until('hello', () => reading.frames.length > 0);
    await stalled.until('hello', () => stalled.frames.length > 0);
    // The stalled viewer stops reading its socket altogether.
    (stalled.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();
    const client = await RawClient.connect(cluster.url(1), cluster.token);
    const n = 3_000;
    const ops = Array.from(
      { length: n },
      (_, i) => client.invoke('kv.put', { key: `burst/${i % 50}`, value: i }, 'weak').done,
    );
    await within(Promise.all(ops), 60_000, 'every op of the burst answered');
    await reading.until('a dropped report', () => reading.events().some((e) => e.e === 'dropped'));
    const seen = reading.events().filter((e) => e.e === 'op' && e.origin === 'local').length;
    const dropped = reading.events().reduce((sum, e) => sum + (e.e === 'dropped' ? e.count : 0), 0);
    expect(seen).toBeLessThan(n);
    expect(dropped).toBeGreaterThan(0);
    const s = await cluster.status(1);
    expect(s!.events.dropped).toBeGreaterThan(0);
    (stalled.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    client.close();
    reading.ws.close();
    stalled.ws.close();
  });
});
