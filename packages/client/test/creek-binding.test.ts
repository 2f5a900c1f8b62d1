import { afterEach, describe, expect, it, vi } from 'vitest';
import { connect } from '../src/client.js';
import { connectFailure } from '../src/connect-failure.js';
import type { Correctable } from '../src/correctable.js';
import type { CreekError } from '../src/errors.js';
import { ClientClosed, ProtocolError, Unauthorized, Unavailable } from '../src/errors.js';
import { scriptedSockets, type Frame } from './scripted-sockets.js';
import { failure as failOrGuard } from './support.js';

/**
 * Every call of the Creek binding settles, whatever the replica answers: the replica is played by
 * the test through a scripted socket.
 */
/** The error `c` ends with; fails the test if it does not settle (the bug tested here). */
const failure = (c: Correctable<unknown>): Promise<CreekError> => failOrGuard(c, 5_000);

const clients: { close(): void }[] = [];
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
  vi.unstubAllGlobals();
});

function client(options: { url?: string; failWith?: string; connectTimeoutMs?: number } = {}) {
  const scripted = scriptedSockets(options.failWith);
  const creek = connect({
    urls: [options.url ?? 'ws://127.0.0.1:7100/client'],
    WebSocket: scripted.WebSocket,
    ...(options.connectTimeoutMs === undefined
      ? {}
      : { connectTimeoutMs: options.connectTimeoutMs }),
  });
  clients.push(creek);
  const invoke = (value: number) => creek.invoke('kv.put' as never, { key: 'k', value } as never);
  return { creek, invoke, ...scripted };
}

describe('an error frame that names no op', () => {
  it('fails the unanswered ops sent on its connection, which are then not resubmitted', async () => {
    const { invoke, socket } = client();
    const s = await socket(0);
    s.welcome();
    const a = invoke(1);
    const b = invoke(2);
    expect(s.invokes()).toHaveLength(2);
    s.receive({ t: 'error', code: 'bad-frame', message: 'frame is not valid JSON' });
    for (const c of [a, b]) {
      const e = await failure(c);
      expect(e).toBeInstanceOf(ProtocolError);
      expect(e.message).toMatch(
        /ws:\/\/127\.0\.0\.1:7100\/client refused a frame without naming its op \(bad-frame: frame is not valid JSON\).*may still be/,
      );
      expect((e as ProtocolError).mayHaveTakenEffect).toBe(true);
    }
    s.close(); // the next connection does not send the refused frame again
    const s2 = await socket(1);
    s2.welcome();
    expect(s2.invokes()).toEqual([]);
  });

  it('before the welcome, is a refused hello: every waiting op fails, none was sent', async () => {
    const { invoke, socket } = client();
    const a = invoke(1);
    const s = await socket(0);
    s.open();
    s.receive({ t: 'error', code: 'bad-frame', message: 'invalid frame: token: Too big' });
    const e = await failure(a);
    expect(e).toBeInstanceOf(ProtocolError);
    expect(e.message).toMatch(/refused this client's hello \(bad-frame: invalid frame: token/);
    expect((e as ProtocolError).mayHaveTakenEffect).toBe(false);
  });

  it('unauthorized: the waiting ops and every later call fail with Unauthorized', async () => {
    const { invoke, socket } = client();
    const a = invoke(1);
    const s = await socket(0);
    s.open();
    s.receive({ t: 'error', code: 'unauthorized', message: 'this cluster needs a token' });
    expect(await failure(a)).toBeInstanceOf(Unauthorized);
    expect(await failure(invoke(2))).toBeInstanceOf(Unauthorized);
  });
});

describe('an error frame that names an op', () => {
  it('fails that op alone, as not applied, and it is not resubmitted', async () => {
    const { invoke, socket } = client();
    const s = await socket(0);
    s.welcome();
    const a = invoke(1);
    const b = invoke(2);
    const [sentA, sentB] = s.invokes();
    s.receive({
      t: 'error',
      opId: sentA!.opId,
      code: 'bad-frame',
      message: 'invalid frame: op: Too big',
    });
    const e = await failure(a);
    expect(e).toBeInstanceOf(ProtocolError);
    expect((e as ProtocolError).mayHaveTakenEffect).toBe(false);
    expect(b.state).toBe('updating');
    s.close();
    const s2 = await socket(1);
    s2.welcome();
    expect(s2.invokes().map((f) => f.opId)).toEqual([sentB!.opId]);
  });
});

describe('a replica that refuses an op for now (busy, unavailable)', () => {
  const refuse = (s: { receive(f: Frame): void }, opId: unknown, code: string) =>
    s.receive({ t: 'error', opId, code, message: 'this replica is paused: try another replica' });

  it('with one URL: the caller learns it was not applied, and it is never resubmitted', async () => {
    const { invoke, socket } = client();
    const s = await socket(0);
    s.welcome();
    const a = invoke(1);
    invoke(2);
    const [sentA, sentB] = s.invokes();
    refuse(s, sentA!.opId, 'unavailable');
    const e = await failure(a);
    expect(e).toBeInstanceOf(Unavailable);
    expect((e as Unavailable).mayHaveTakenEffect).toBe(false);
    expect(e.message).toMatch(/the op was not applied/);
    // The failover that once applied a refused op behind its caller's back: only b goes again.
    s.close();
    const s2 = await socket(1);
    s2.welcome();
    expect(s2.invokes().map((f) => f.opId)).toEqual([sentB!.opId]);
  });

  it('refused after an earlier send that may have landed: it may still take effect, and is resubmitted', async () => {
    const { invoke, socket } = client();
    const s = await socket(0);
    s.welcome();
    const a = invoke(1);
    const [sentA] = s.invokes();
    s.close(); // dropped before any answer: the replica may have taken it
    const s2 = await socket(1);
    s2.welcome();
    expect(s2.invokes().map((f) => f.opId)).toEqual([sentA!.opId]);
    refuse(s2, sentA!.opId, 'busy');
    const e = await failure(a);
    expect(e).toBeInstanceOf(Unavailable);
    expect((e as Unavailable).mayHaveTakenEffect).toBe(true);
    expect(e.message).toMatch(/may have taken effect or may still/);
    s2.close();
    const s3 = await socket(2);
    s3.welcome();
    expect(s3.invokes().map((f) => f.opId)).toEqual([sentA!.opId]); // its fate is still learnt
  });

  it('unavailable with another URL: the client moves there and the op is answered, not failed', async () => {
    const scripted = scriptedSockets();
    const creek = connect({
      urls: ['ws://127.0.0.1:7100/client', 'ws://127.0.0.1:7101/client'],
      // These tests script the sockets in order: no round-trip probe among them.
      nearest: false,
      WebSocket: scripted.WebSocket,
    });
    clients.push(creek);
    const a = creek.invoke('kv.put' as never, { key: 'k', value: 1 } as never);
    const s = await scripted.socket(0);
    s.welcome();
    const [sent] = s.invokes();
    refuse(s, sent!.opId, 'unavailable');
    const s2 = await scripted.socket(1);
    expect(s2.url).toBe('ws://127.0.0.1:7101/client');
    s2.welcome();
    expect(s2.invokes().map((f) => [f.opId, f.seq])).toEqual([[sent!.opId, sent!.seq]]);
    s2.receive({
      t: 'view',
      opId: sent!.opId,
      level: 'stable',
      outcome: { ok: true, value: null },
    });
    await expect(a).resolves.toBeNull();
  });

  it('refused by every replica until the connect timeout: not applied, and forgotten', async () => {
    const scripted = scriptedSockets();
    const creek = connect({
      urls: ['ws://127.0.0.1:7100/client', 'ws://127.0.0.1:7101/client'],
      // These tests script the sockets in order: no round-trip probe among them.
      nearest: false,
      WebSocket: scripted.WebSocket,
      connectTimeoutMs: 300,
    });
    clients.push(creek);
    const a = creek.invoke('kv.put' as never, { key: 'k', value: 1 } as never);
    const done = failure(a);
    let settled = false;
    void done.then(() => (settled = true));
    for (let n = 0; !settled; n++) {
      const s = await scripted.socket(n);
      s.welcome(); // welcomed, then refused: a paused replica
      for (const f of s.invokes()) refuse(s, f.opId, 'unavailable');
      await new Promise((r) => setTimeout(r, 0));
    }
    const e = await done;
    expect(e).toBeInstanceOf(Unavailable);
    expect((e as Unavailable).mayHaveTakenEffect).toBe(false);
    expect(e.message).toMatch(/no replica answered for 300 ms/);
    expect(e.message).toMatch(/unavailable: this replica is paused/);
    // The next replica to welcome the client is sent nothing: the op was forgotten.
    const last = await scripted.socket(scripted.sockets.length);
    last.welcome();
    expect(last.invokes()).toEqual([]);
  });
});

describe('close()', () => {
  it('fails the op in flight (it may have taken effect) and every later call (nothing sent)', async () => {
    const { creek, invoke, socket } = client();
    const s = await socket(0);
    s.welcome();
    const a = invoke(1);
    creek.close();
    const inFlight = await failure(a);
    expect(inFlight).toBeInstanceOf(ClientClosed);
    expect((inFlight as ClientClosed).mayHaveTakenEffect).toBe(true);
    let later: Correctable<unknown> | undefined;
    expect(() => (later = invoke(2))).not.toThrow();
    const e = await failure(later!);
    expect(e).toBeInstanceOf(ClientClosed);
    expect((e as ClientClosed).mayHaveTakenEffect).toBe(false);
    expect(e.message).toMatch(/nothing was sent/);
    expect(s.invokes()).toHaveLength(1);
  });
});

describe('a URL whose upgrade is refused', () => {
  it('is named in the error, with the HTTP status and what client URLs look like', async () => {
    const { invoke } = client({
      url: 'ws://127.0.0.1:7100',
      failWith: 'Unexpected server response: 404',
      connectTimeoutMs: 50,
    });
    const e = await failure(invoke(1));
    expect(e).toBeInstanceOf(Unavailable);
    expect(e.message).toMatch(
      'ws://127.0.0.1:7100 (the server refused the WebSocket upgrade with HTTP status 404; Creek client URLs end in /client, e.g. ws://127.0.0.1:7100/client)',
    );
    expect(e.message).toMatch(/the op was not applied/);
    expect((e as Unavailable).mayHaveTakenEffect).toBe(false);
  });

  it('says so when the server closed the socket during the upgrade', () => {
    expect(connectFailure('ws://127.0.0.1:7100', 'socket hang up')).toBe(
      'the server closed the connection during the WebSocket upgrade; Creek client URLs end in /client, e.g. ws://127.0.0.1:7100/client',
    );
    expect(connectFailure('wss://example.com/creek/client?x=1', 'socket hang up')).toBe(
      'the server closed the connection during the WebSocket upgrade',
    );
    expect(connectFailure('ws://h:1/client', undefined)).toBe('the connection failed');
    expect(connectFailure('ws://h:1/client', 'connect ECONNREFUSED 127.0.0.1:1')).toBe(
      'connect ECONNREFUSED 127.0.0.1:1',
    );
  });
});

describe('the session id', () => {
  it('falls back to crypto.getRandomValues where randomUUID is missing (React Native)', async () => {
    vi.stubGlobal('crypto', {
      getRandomValues: (a: Uint8Array) => a.fill(0xab),
    });
    const { socket } = client();
    const s = await socket(0);
    s.open();
    expect(s.sent[0]).toMatchObject({ t: 'hello', session: 'ab'.repeat(16) });
  });

  it('says what to install where the runtime has no crypto at all', () => {
    vi.stubGlobal('crypto', undefined);
    expect(() => client()).toThrow(/react-native-get-random-values/);
  });
});

describe('a replica that answers nothing (stallTimeoutMs)', () => {
  function twoReplicas(stallTimeoutMs: number) {
    const scripted = scriptedSockets();
    const creek = connect({
      urls: ['ws://127.0.0.1:7100/client', 'ws://127.0.0.1:7101/client'],
      // These tests script the sockets in order: no round-trip probe among them.
      nearest: false,
      WebSocket: scripted.WebSocket,
      stallTimeoutMs,
    });
    clients.push(creek);
    const invoke = (value: number) => creek.invoke('kv.put' as never, { key: 'k', value } as never);
    return { invoke, ...scripted };
  }
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('is left for the next one once ops have waited the deadline with no frame; they go there', async () => {
    const { invoke, socket } = twoReplicas(200);
    const s = await socket(0);
    s.welcome();
    invoke(1);
    expect(s.invokes()).toHaveLength(1);
    const s2 = await socket(1); // made once the first has been quiet 200 ms with an op waiting
    expect(s2.url).toBe('ws://127.0.0.1:7101/client');
    s2.welcome();
    expect(s2.invokes().map((f) => f.seq)).toEqual(s.invokes().map((f) => f.seq)); // same op, same number
  });

  it('is kept while it sends frames, and when no op waits however long it is quiet', async () => {
    const { invoke, sockets, socket } = twoReplicas(200);
    const s = await socket(0);
    s.welcome();
    await sleep(400); // idle: nothing waits
    expect(sockets).toHaveLength(1);
    invoke(1); // sent after a long quiet spell: its wait starts now
    for (let i = 0; i < 4; i++) {
      await sleep(100);
      s.receive({ t: 'committed', below: 0 }); // the replica is alive and talking
    }
    expect(sockets).toHaveLength(1);
  });

  it('is left when strong ops wait that long for a stable answer, though tentative ones flow', async () => {
    const { invoke, sockets, socket } = twoReplicas(200);
    const s = await socket(0);
    s.welcome();
    invoke(1); // strong: levels weak and strong
    const [sent] = s.invokes();
    for (let i = 0; i < 3; i++) {
      await sleep(100);
      // Cut off from the leader: it answers tentatively and keeps talking, but commits nothing.
      s.receive({
        t: 'view',
        opId: sent!.opId,
        level: 'tentative',
        outcome: { ok: true, value: null },
      });
    }
    const s2 = await socket(1);
    expect(sockets).toHaveLength(2);
    s2.welcome();
    expect(s2.invokes().map((f) => f.seq)).toEqual([sent!.seq]);
  });

  it('is kept while strong ops wait if it gives stable answers to others (a busy leader)', async () => {
    const { invoke, sockets, socket } = twoReplicas(200);
    const s = await socket(0);
    s.welcome();
    invoke(1);
    invoke(2);
    const [first, second] = s.invokes();
    await sleep(150);
    s.receive({
      t: 'view',
      opId: first!.opId,
      level: 'stable',
      outcome: { ok: true, value: null },
    });
    await sleep(150);
    s.receive({
      t: 'view',
      opId: second!.opId,
      level: 'stable',
      outcome: { ok: true, value: null },
    });
    expect(sockets).toHaveLength(1);
  });

  it('is never left with one URL, or with the check off', async () => {
    const one = client();
    const s = await one.socket(0);
    s.welcome();
    one.invoke(1);
    const off = twoReplicas(0);
    const t = await off.socket(0);
    t.welcome();
    off.invoke(1);
    await sleep(3_300);
    expect(one.sockets).toHaveLength(1);
    expect(off.sockets).toHaveLength(1);
  });

  it('refuses a deadline that is not a number of milliseconds, naming it', () => {
    const { WebSocket } = scriptedSockets();
    const urls = ['ws://127.0.0.1:7100/client', 'ws://127.0.0.1:7101/client'];
    for (const name of ['stallTimeoutMs', 'connectTimeoutMs'] as const)
      for (const bad of [-1, Number.NaN, '3000', null]) {
        const make = () => connect({ urls, WebSocket, [name]: bad as never });
        expect(make, `${name}: ${String(bad)}`).toThrow(RangeError);
        expect(make).toThrow(new RegExp(`connect: ${name} must be a number of milliseconds`));
      }
    // Zero and Infinity are deadlines: off, and never.
    for (const ok of [0, Number.POSITIVE_INFINITY])
      clients.push(connect({ urls, WebSocket, stallTimeoutMs: ok }));
  });

  it("refuses an auth that is neither the user's token nor a function that gives one", () => {
    const { WebSocket } = scriptedSockets();
    const urls = ['ws://127.0.0.1:7100/client'];
    for (const bad of ['', 42, {}, null])
      expect(() => connect({ urls, WebSocket, auth: bad as never }), String(bad)).toThrow(
        /connect: auth must be the user's token/,
      );
  });
});

describe('ops in flight on one connection (maxInFlight)', () => {
  const urls = ['ws://127.0.0.1:7100/client', 'ws://127.0.0.1:7101/client'];
  const view = (opId: unknown, level: string, n: number) => ({
    t: 'view',
    opId,
    level,
    outcome: { ok: true, value: n },
    id: { replica: 0, eventNo: n },
  });
  /** A client of two scripted replicas, welcomed by the first. */
  async function welcomed(options: { maxInFlight?: number; stallTimeoutMs?: number } = {}) {
    const scripted = scriptedSockets();
    // The sockets are scripted in order: no round-trip probe among them.
    const creek = connect({ urls, WebSocket: scripted.WebSocket, nearest: false, ...options });
    clients.push(creek);
    const s = await scripted.socket(0);
    s.welcome();
    return { creek, s, scripted };
  }

  it('a failover resubmits more ops than a replica takes from one connection in turns, as answers come', async () => {
    const { creek, s, scripted } = await welcomed({ stallTimeoutMs: 0 });
    // 1,100 weak ops, each answered tentatively (done for the replica) but none committed yet.
    const ops = Array.from({ length: 1_100 }, (_, i) =>
      creek.invokeWeak('kv.put' as never, { key: 'k', value: i } as never),
    );
    const sent = s.invokes();
    expect(sent).toHaveLength(1_024); // the 1,025th waits for an answer
    for (const f of sent) s.receive(view(f.opId, 'tentative', 1));
    expect(s.invokes()).toHaveLength(1_100);
    for (const f of s.invokes().slice(1_024)) s.receive(view(f.opId, 'tentative', 1));
    expect(ops.every((c) => c.state === 'final')).toBe(true);
    // The replica dies before any commit: the next gets 1,024 of the 1,100 at the welcome.
    s.close();
    const s2 = await scripted.socket(1);
    s2.welcome();
    expect(s2.invokes()).toHaveLength(1_024);
    expect(s2.invokes()[0]!.opId).toBe(sent[0]!.opId); // in session order
    // Each answer (a view, a confirm, an error) lets one more go.
    const first = s2.invokes().slice(0, 3);
    s2.receive(view(first[0]!.opId, 'stable', 1));
    s2.receive({ t: 'confirms', opIds: [first[1]!.opId] });
    s2.receive({ t: 'error', opId: first[2]!.opId, code: 'busy', message: 'too many' });
    expect(s2.invokes()).toHaveLength(1_027);
    expect(new Set(s2.invokes().map((f) => f.opId)).size).toBe(1_027);
  });

  it('a strong op holds its slot until its stable view, not its tentative one', async () => {
    const { creek, s } = await welcomed({ maxInFlight: 1 });
    const a = creek.invokeStrong('kv.put' as never, { key: 'k', value: 1 } as never);
    const b = creek.invokeWeak('kv.put' as never, { key: 'k', value: 2 } as never);
    const [sentA] = s.invokes();
    expect(s.invokes()).toHaveLength(1);
    s.receive(view(sentA!.opId, 'tentative', 1));
    expect(s.invokes()).toHaveLength(1);
    s.receive(view(sentA!.opId, 'stable', 1));
    expect(await a).toBe(1);
    expect(s.invokes().map((f) => f.opId)).toEqual([sentA!.opId, expect.anything()]);
    s.receive(view(s.invokes()[1]!.opId, 'tentative', 2));
    expect(b.state).toBe('final');
  });

  it('an op cancelled while it waits for a slot is never sent', async () => {
    const { creek, s } = await welcomed({ maxInFlight: 1 });
    creek.invokeWeak('kv.put' as never, { key: 'k', value: 1 } as never);
    const controller = new AbortController();
    const b = creek.invoke('kv.put' as never, { key: 'k', value: 2 } as never, {
      signal: controller.signal,
    });
    controller.abort();
    await expect(b).rejects.toThrow();
    const c = creek.invoke('kv.put' as never, { key: 'k', value: 3 } as never);
    s.receive(view(s.invokes()[0]!.opId, 'tentative', 1));
    expect(s.invokes().map((f) => (f.args as { value: number }).value)).toEqual([1, 3]);
    expect(c.state).toBe('updating');
  });

  it('refuses discover or nearest that is not true or false, naming it', () => {
    const { WebSocket } = scriptedSockets();
    for (const name of ['discover', 'nearest'])
      for (const bad of ['false', 0, null]) {
        const make = () => connect({ urls, WebSocket, [name]: bad as never });
        expect(make, `${name} ${String(bad)}`).toThrow(TypeError);
        expect(make).toThrow(new RegExp(`connect: ${name} must be true or false`));
      }
  });

  it('refuses a limit that is not a whole number from 1 to 1,024, naming it', () => {
    const { WebSocket } = scriptedSockets();
    for (const bad of [0, -1, 1.5, 1_025, Number.NaN, '10']) {
      const make = () => connect({ urls, WebSocket, maxInFlight: bad as never });
      expect(make, String(bad)).toThrow(RangeError);
      expect(make).toThrow(/connect: maxInFlight must be a whole number from 1 to 1024/);
    }
  });
});
