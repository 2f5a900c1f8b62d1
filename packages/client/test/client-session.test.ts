import { CLIENT_PROTOCOL_OLDEST, PROTOCOL_VERSION, type ClientFrame } from '@creek/protocol';
import { describe, expect, it } from 'vitest';
import { Unavailable } from '../src/errors.js';
import type { WatchSink } from '../src/session/watches.js';
import { A, B, driven, recorder } from './session-harness.js';

/**
 * The client session on its own (session-harness.ts): the test plays the driver and the
 * replicas, so every step is explicit and every run the same.
 */
const invokes = (fs: { frame: ClientFrame }[]) =>
  fs.flatMap(({ frame }) => (frame.t === 'invoke' ? [frame] : []));
const stable = (opId: string, value: unknown) => ({
  t: 'view',
  opId,
  level: 'stable',
  outcome: { ok: true, value },
});

describe('connecting and failing over', () => {
  it('asks for the first URL, then the next after a close, waiting longer each time', () => {
    const { session, take, connectIn } = driven();
    session.start();
    const first = connectIn(take());
    expect(first).toEqual({ t: 'connect', connection: 1, url: A });
    session.connectionErrored(1, 'connect ECONNREFUSED 10.0.0.1:7100');
    session.connectionClosed(1);
    expect(take()).toEqual([{ t: 'disconnected' }, { t: 'reconnect', afterMs: 50 }]);
    session.reconnect();
    expect(connectIn(take())).toEqual({ t: 'connect', connection: 2, url: B });
    session.connectionClosed(2);
    expect(take()).toEqual([{ t: 'disconnected' }, { t: 'reconnect', afterMs: 100 }]);
    session.reconnect();
    expect(connectIn(take()).url).toBe(A);
  });

  it('leaves a replica that welcomes it at a client protocol version it does not speak, for the next one', () => {
    const { session, take, connectIn, receive, welcome } = driven();
    session.start();
    const first = connectIn(take());
    expect(first.url).toBe(A);
    session.connectionOpened(first.connection);
    take();
    receive(first.connection, {
      t: 'welcome',
      version: PROTOCOL_VERSION + 1,
      replica: 0,
      levels: ['weak', 'strong'],
      ops: ['kv.put'],
    });
    expect(session.status).not.toBe('connected');
    const outs = take();
    expect(outs).toContainEqual({ t: 'drop', connection: first.connection, terminate: false });
    session.connectionClosed(first.connection);
    take();
    session.reconnect();
    const next = connectIn(take());
    expect(next.url).toBe(B);
    session.connectionOpened(next.connection);
    take();
    welcome(next.connection);
    expect(session.status).toBe('connected');
  });

  it('counts a confirmed op in what it has seen, as its confirmation says, and presents it at the next hello', () => {
    const { session, take, frames, serve, receive } = driven();
    session.submit('kv.put', { key: 'k' }, ['strong'], recorder().sink);
    session.start();
    const one = serve(take());
    const [sent] = frames(take()).filter((f) => f.frame.t === 'invoke');
    const opId = (sent!.frame as { opId: string }).opId;
    receive(one, {
      t: 'view',
      opId,
      level: 'tentative',
      outcome: { ok: true, value: null },
      seen: [3, 0, 0],
    });
    receive(one, { t: 'confirm', opId, seen: [4, 0, 0] });
    session.connectionClosed(one);
    take();
    session.reconnect();
    const { connection } = take().find((o) => o.t === 'connect') as { connection: number };
    session.connectionOpened(connection);
    expect(frames(take())[0]!.frame).toMatchObject({ t: 'hello', seen: [4, 0, 0] });
  });

  it("keeps what views say of a replica's later incarnations, and presents it at the next hello", () => {
    // Replica 1 lost its disk and numbers its ops under origin 257: the session saw two of them.
    const { session, take, frames, serve, receive } = driven();
    session.submit('kv.put', { key: 'k' }, ['weak'], recorder().sink);
    session.start();
    const one = serve(take());
    const [sent] = frames(take()).filter((f) => f.frame.t === 'invoke');
    const opId = (sent!.frame as { opId: string }).opId;
    receive(one, {
      t: 'view',
      opId,
      level: 'tentative',
      outcome: { ok: true, value: null },
      seen: [3, 1],
      seenLater: [[257, 2]],
    });
    receive(one, { t: 'confirm', opId, seen: [4, 1] });
    session.connectionClosed(one);
    take();
    session.reconnect();
    const { connection } = take().find((o) => o.t === 'connect') as { connection: number };
    session.connectionOpened(connection);
    expect(frames(take())[0]!.frame).toMatchObject({
      t: 'hello',
      seen: [4, 1],
      seenLater: [[257, 2]],
    });
  });

  it.each([
    ['a negative count', [-1, 0, 0]],
    ['a fraction', [1.5, 0, 0]],
    ['65 origins', Array.from({ length: 65 }, () => 1)],
    ['a string', '4,0,0'],
  ])(
    'fails its op, and takes nothing into what it has seen, when a confirmation says %s',
    (_, seen) => {
      const { session, take, frames, serve, receive } = driven();
      const { sink, errors } = recorder();
      session.submit('kv.put', { key: 'k' }, ['strong'], sink);
      session.start();
      const one = serve(take());
      const [sent] = frames(take()).filter((f) => f.frame.t === 'invoke');
      const opId = (sent!.frame as { opId: string }).opId;
      receive(one, {
        t: 'view',
        opId,
        level: 'tentative',
        outcome: { ok: true, value: null },
        seen: [3, 0, 0],
      });
      receive(one, { t: 'confirm', opId, seen });
      expect(errors.map((e) => e.message)).toEqual([
        expect.stringMatching(/sent a frame this client cannot read/),
      ]);
      session.connectionClosed(one);
      take();
      session.reconnect();
      const { connection } = take().find((o) => o.t === 'connect') as { connection: number };
      session.connectionOpened(connection);
      expect(frames(take())[0]!.frame).toMatchObject({ t: 'hello', seen: [3, 0, 0] });
    },
  );

  it('says hello with its session id and what it has seen, and is connected once welcomed', () => {
    const { session, take, frames, receive, welcome } = driven();
    session.start();
    take();
    session.connectionOpened(1);
    expect(frames(take())).toEqual([
      {
        connection: 1,
        frame: {
          t: 'hello',
          version: CLIENT_PROTOCOL_OLDEST,
          newest: PROTOCOL_VERSION,
          session: 'session-under-test',
        },
      },
    ]);
    const { sink } = recorder();
    welcome(1);
    expect(session.status).toBe('connected');
    session.submit('kv.put', { key: 'k' }, ['weak'], sink);
    receive(1, {
      t: 'view',
      opId: '1',
      level: 'tentative',
      outcome: { ok: true, value: null },
      id: { replica: 0, eventNo: 1 },
      seen: [3, 0, 2],
    });
    session.connectionClosed(1);
    take();
    session.reconnect();
    session.connectionOpened(2);
    expect(frames(take())[0]!.frame).toMatchObject({ t: 'hello', seen: [3, 0, 2] });
  });

  it('resubmits an op in flight on the next connection with the same id and number, and answers it once', () => {
    const { session, take, frames, serve, receive } = driven();
    session.start();
    const one = serve(take());
    const { sink, heard } = recorder();
    session.submit('kv.put', { key: 'k', value: 1 }, ['weak', 'strong'], sink);
    const [sent] = invokes(frames(take()));
    expect(sent).toMatchObject({ op: 'kv.put', level: 'strong', seq: 1, acked: 1 });
    session.connectionClosed(one); // dropped before any answer: the replica may have it
    expect(session.status).toBe('connecting');
    session.reconnect();
    const two = serve(take());
    const resent = invokes(frames(take()));
    expect(resent).toEqual([sent]);
    // The old connection is not listened to any more: its late answer changes nothing.
    receive(one, stable(sent!.opId, 'late'));
    expect(heard).toEqual([]);
    receive(two, stable(sent!.opId, 7));
    expect(heard).toEqual(['committed', 'view strong final']);
    expect(session.unacknowledged()).toBe(0);
  });

  it('leaves a replica that sends nothing while an op waits, once the stall deadline passes', () => {
    const { session, clock, take, serve } = driven({ stallTimeoutMs: 200 });
    expect(session.tickEveryMs).toBe(50);
    session.start();
    const one = serve(take());
    session.submit('kv.put', {}, ['weak'], recorder().sink);
    take();
    clock.now += 199;
    session.tick();
    expect(take()).toEqual([]);
    clock.now += 1;
    session.tick();
    expect(take()).toEqual([
      { t: 'disconnected' },
      { t: 'status', status: 'connecting' },
      { t: 'drop', connection: one, terminate: true },
      { t: 'reconnect', afterMs: 50 },
    ]);
  });

  it('gives a cluster slower than the stall deadline longer, until a stable answer comes within it', () => {
    // Across regions a strong op can take longer than a deadline chosen on one site; a session
    // that left every replica before its stable answer came resubmitted its ops for good.
    const { session, clock, take, frames, serve, receive } = driven({ stallTimeoutMs: 200 });
    session.start();
    const one = serve(take());
    const { sink, heard } = recorder();
    session.submit('kv.put', {}, ['strong'], sink);
    const [sent] = invokes(frames(take()));
    clock.now += 200;
    session.tick();
    expect(take()).toContainEqual({ t: 'drop', connection: one, terminate: true });
    session.reconnect();
    const two = serve(take());
    expect(invokes(frames(take()))).toEqual([sent]);
    // Left once without a stable answer: the next replica has twice as long.
    clock.now += 399;
    session.tick();
    expect(take()).toEqual([]);
    receive(two, stable(sent!.opId, 1));
    expect(heard).toEqual(['committed', 'view strong final']);
    // That answer took longer than 200 ms: the deadline stays doubled.
    session.submit('kv.put', {}, ['strong'], recorder().sink);
    const [next] = invokes(frames(take()));
    clock.now += 150;
    receive(two, stable(next!.opId, 2));
    // Answered within 200 ms: the cluster is quick again, and so is the deadline.
    session.submit('kv.put', {}, ['strong'], recorder().sink);
    take();
    clock.now += 199;
    session.tick();
    expect(take()).toEqual([]);
    clock.now += 1;
    session.tick();
    expect(take()).toContainEqual({ t: 'drop', connection: two, terminate: true });
  });

  it('keeps the doubled deadline while stable answers take longer than the one asked for', () => {
    const { session, clock, take, frames, serve, receive } = driven({ stallTimeoutMs: 200 });
    session.start();
    const one = serve(take());
    session.submit('kv.put', {}, ['strong'], recorder().sink);
    const [sent] = invokes(frames(take()));
    clock.now += 200;
    session.tick();
    expect(take()).toContainEqual({ t: 'drop', connection: one, terminate: true });
    session.reconnect();
    const two = serve(take());
    take();
    clock.now += 300;
    receive(two, stable(sent!.opId, 1));
    session.submit('kv.put', {}, ['strong'], recorder().sink);
    take();
    clock.now += 399;
    session.tick();
    expect(take()).toEqual([]);
    clock.now += 1;
    session.tick();
    expect(take()).toContainEqual({ t: 'drop', connection: two, terminate: true });
  });

  it('moves on at once when a replica refuses an op as unavailable, and the op goes to the next', () => {
    const { session, take, frames, serve, receive } = driven();
    session.start();
    const one = serve(take());
    const { sink, heard } = recorder();
    session.submit('kv.put', {}, ['strong'], sink);
    const [sent] = invokes(frames(take()));
    receive(one, { t: 'error', opId: sent!.opId, code: 'unavailable', message: 'paused' });
    expect(take()).toContainEqual({ t: 'drop', connection: one, terminate: true });
    session.reconnect();
    serve(take());
    expect(invokes(frames(take()))).toEqual([sent]);
    expect(heard).toEqual([]);
  });

  it('fails the ops waiting once no replica answered for the connect timeout, naming each URL', () => {
    const { session, clock, take } = driven({ connectTimeoutMs: 100 });
    const { sink, errors } = recorder();
    session.submit('kv.put', {}, ['weak'], sink);
    session.start();
    session.connectionClosed(1);
    clock.now += 101;
    session.reconnect();
    session.connectionErrored(2, 'Unexpected server response: 404');
    session.connectionClosed(2);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(Unavailable);
    expect(errors[0]!.message).toContain(
      `no replica answered for 100 ms; tried ${A} (the connection failed); ${B} (the server refused the WebSocket upgrade with HTTP status 404)`,
    );
    expect(session.unacknowledged()).toBe(0); // never sent: forgotten
    take();
  });
});

describe('abandon', () => {
  it('an op that may have taken effect is abandoned: it is not resubmitted, and its fate is known', async () => {
    const { session, take, frames, serve, receive } = driven({ urls: [A] });
    session.start();
    const one = serve(take());
    const { sink, heard, errors } = recorder();
    session.submit('kv.put', { key: 'k' }, ['weak', 'strong'], sink);
    const [sent] = invokes(frames(take()));
    session.connectionClosed(one);
    session.reconnect();
    const two = serve(take());
    expect(invokes(frames(take()))).toEqual([sent]);
    // Refused this time, but the first send may have landed: indeterminate.
    receive(two, { t: 'error', opId: sent!.opId, code: 'busy', message: 'too many' });
    expect(errors[0]!.mayHaveTakenEffect).toBe(true);
    const handle = errors[0]!.indeterminate!;
    expect(handle).not.toBeNull();
    const fate = handle.abandon();
    const [abandon] = invokes(frames(take()));
    expect(abandon).toMatchObject({
      op: 'creek.abandon',
      args: { seq: sent!.seq },
      level: 'strong',
      tentative: false,
      seq: 2,
    });
    receive(two, stable(abandon!.opId, { abandoned: true }));
    await expect(fate).resolves.toEqual({ fate: 'abandoned' });
    expect(heard).toEqual(['error Unavailable', 'never commits']);
    expect(session.unacknowledged()).toBe(0);
    // The next connection resubmits neither.
    session.connectionClosed(two);
    session.reconnect();
    serve(take());
    expect(invokes(frames(take()))).toEqual([]);
  });

  it('an abandon that no replica took leaves the op as it was: resubmitted, and abandoned again later', async () => {
    const { session, clock, take, frames, serve, receive } = driven({
      urls: [A],
      connectTimeoutMs: 100,
    });
    session.start();
    const one = serve(take());
    const { sink, errors } = recorder();
    session.submit('kv.put', { key: 'k' }, ['strong'], sink);
    const [sent] = invokes(frames(take()));
    session.connectionClosed(one);
    session.reconnect();
    const two = serve(take());
    take();
    receive(two, { t: 'error', opId: sent!.opId, code: 'busy', message: 'too many' });
    const handle = errors[0]!.indeterminate!;
    // The replica goes away before the abandon goes out, and none answers for the timeout.
    session.connectionClosed(two);
    const fate = handle.abandon();
    take();
    clock.now += 101;
    session.reconnect();
    session.connectionClosed(take().find((o) => o.t === 'connect')!.connection);
    const failed = await fate.then(
      () => null,
      (e: unknown) => e,
    );
    expect(failed).toBeInstanceOf(Unavailable);
    expect((failed as Unavailable).mayHaveTakenEffect).toBe(false);
    // The op is still the session's: the next replica gets it again (it must learn whether it
    // committed), and the caller can still abandon it.
    take();
    session.reconnect();
    const three = serve(take());
    expect(invokes(frames(take()))).toEqual([sent]);
    expect(session.unacknowledged()).toBe(1);
    const again = handle.abandon();
    const [abandon] = invokes(frames(take()));
    expect(abandon).toMatchObject({ op: 'creek.abandon', args: { seq: sent!.seq } });
    receive(three, stable(abandon!.opId, { abandoned: true }));
    await expect(again).resolves.toEqual({ fate: 'abandoned' });
  });

  it('an op aborted before any replica took it is forgotten and never sent', () => {
    const { session, take, frames, serve, receive } = driven({ maxInFlight: 1 });
    session.start();
    const one = serve(take());
    session.submit('kv.put', { n: 1 }, ['weak'], recorder().sink);
    const { sink, heard } = recorder();
    const kept = session.submit('kv.put', { n: 2 }, ['weak'], sink)!;
    expect(invokes(frames(take()))).toHaveLength(1); // the second waits for a slot
    session.abort(kept, undefined);
    expect(heard).toEqual(['never commits']);
    receive(one, {
      t: 'view',
      opId: '1',
      level: 'tentative',
      outcome: { ok: true, value: null },
      id: { replica: 0, eventNo: 1 },
    });
    expect(invokes(frames(take()))).toEqual([]);
  });
});

describe('the offline queue', () => {
  it('queues ops once the connect timeout passes, bounds the queue, and drains it in order when a replica answers', () => {
    const { session, clock, take, frames, serve, receive } = driven({
      offline: true,
      maxQueued: 2,
      connectTimeoutMs: 100,
    });
    const a = recorder();
    session.submit('kv.put', { key: 'a' }, ['weak', 'strong'], a.sink);
    session.start();
    session.connectionClosed(1);
    clock.now += 101;
    session.reconnect();
    session.connectionClosed(2);
    expect(session.status).toBe('offline');
    expect(take()).toContainEqual({ t: 'status', status: 'offline' });
    expect(a.heard).toEqual(['queued']);
    const b = recorder();
    session.submit('kv.put', { key: 'b' }, ['weak'], b.sink);
    expect(b.heard).toEqual(['queued']);
    const c = recorder();
    expect(session.submit('kv.put', { key: 'c' }, ['weak'], c.sink)).toBeNull();
    expect(c.errors[0]).toBeInstanceOf(Unavailable);
    expect(c.errors[0]!.message).toMatch(/2 ops already wait in the queue \(maxQueued 2\)/);

    session.reconnect();
    const three = serve(take());
    const sent = invokes(frames(take()));
    expect(sent.map((f) => [f.seq, (f.args as { key: string }).key])).toEqual([
      [1, 'a'],
      [2, 'b'],
    ]);
    expect(session.status).toBe('offline'); // welcomed, but nothing answered yet
    receive(three, {
      t: 'view',
      opId: sent[1]!.opId,
      level: 'tentative',
      outcome: { ok: true, value: null },
      id: { replica: 0, eventNo: 1 },
    });
    expect(session.status).toBe('connected');
    expect(a.heard).toEqual(['queued', 'unqueued']);
    expect(b.heard).toEqual(['queued', 'unqueued', 'view weak final']);
  });

  it('asks for a save at each change, and what it keeps is the session and its ops not known committed', () => {
    const { session, take, frames, serve, receive } = driven({ persistent: true });
    session.submit('kv.put', { key: 'a' }, ['weak', 'strong'], recorder().sink);
    session.submit('kv.get', { key: 'a' }, ['strong'], recorder().sink);
    expect(take()).toEqual([{ t: 'persist' }, { t: 'persist' }]);
    expect(session.stored()).toEqual({
      version: 1,
      session: 'session-under-test',
      user: null, // an anonymous client's
      nextSeq: 3,
      ops: [
        { seq: 1, op: 'kv.put', args: { key: 'a' }, level: 'strong', stableOnly: false },
        { seq: 2, op: 'kv.get', args: { key: 'a' }, level: 'strong', stableOnly: true },
      ],
    });
    session.start();
    const one = serve(take());
    const [first] = invokes(frames(take()));
    receive(one, stable(first!.opId, null));
    expect(take()).toContainEqual({ t: 'persist' });
    expect(session.stored().ops.map((o) => o.seq)).toEqual([2]);
  });

  it('a restored session says hello with its id and resubmits its ops, numbering new ones after them', () => {
    const { session, take, frames, connectIn, welcome } = driven();
    const sinks: string[] = [];
    session.restore(
      {
        version: 1,
        session: 'restored-session',
        nextSeq: 8,
        ops: [{ seq: 5, op: 'kv.put', args: { key: 'x' }, level: 'weak', stableOnly: false }],
      },
      (s) => {
        sinks.push(s.op);
        return recorder().sink;
      },
    );
    session.submit('kv.put', { key: 'y' }, ['weak'], recorder().sink);
    session.start();
    const { connection } = connectIn(take());
    session.connectionOpened(connection);
    expect(frames(take())[0]!.frame).toMatchObject({ t: 'hello', session: 'restored-session' });
    welcome(connection);
    expect(invokes(frames(take())).map((f) => [f.seq, f.opId])).toEqual([
      [5, '5'],
      [8, '8'],
    ]);
    expect(sinks).toEqual(['kv.put']);
  });
});

describe('live queries', () => {
  function watchRecorder() {
    const heard: string[] = [];
    const sink: WatchSink = {
      view: (v) => heard.push(`${v.level} ${JSON.stringify(v.value)}`),
      failed: (e, level) => heard.push(`${level} failed ${e.message}`),
      error: (e) => heard.push(`ended ${e.name}`),
    };
    return { sink, heard };
  }

  it('is sent at the welcome, again after a reconnect, and ended with unwatch', () => {
    const { session, take, frames, serve, receive } = driven();
    const { sink, heard } = watchRecorder();
    const stop = session.watch('kv.get', { key: 'k' }, sink);
    session.start();
    const one = serve(take());
    const watch = { t: 'watch', watchId: 'w1', op: 'kv.get', args: { key: 'k' } };
    expect(frames(take()).map((f) => f.frame)).toEqual([watch]);
    receive(one, {
      t: 'watched',
      watchId: 'w1',
      level: 'tentative',
      outcome: { ok: true, value: 1 },
    });
    session.connectionClosed(one);
    session.reconnect();
    const two = serve(take());
    expect(frames(take())).toEqual([{ connection: two, frame: watch }]);
    receive(two, { t: 'watched', watchId: 'w1', level: 'stable', outcome: { ok: true, value: 2 } });
    expect(heard).toEqual(['weak 1', 'strong 2']);
    stop();
    expect(frames(take())).toEqual([{ connection: two, frame: { t: 'unwatch', watchId: 'w1' } }]);
  });

  it('moves to the next replica when one takes nothing for now, the query with it, and ends when one refuses it', () => {
    const { session, take, serve, receive, frames, connectIn } = driven();
    const { sink, heard } = watchRecorder();
    session.watch('kv.get', {}, sink);
    session.start();
    const one = serve(take());
    take();
    receive(one, { t: 'unwatched', watchId: 'w1', code: 'unavailable', message: 'paused' });
    expect(heard).toEqual([]);
    expect(take()).toContainEqual({ t: 'drop', connection: one, terminate: true });
    session.reconnect();
    const outs = take();
    expect(connectIn(outs).url).toBe(B);
    const two = serve(outs);
    expect(frames(take()).map((f) => f.frame.t)).toContain('watch');
    receive(two, { t: 'unwatched', watchId: 'w1', code: 'invalid-arguments', message: 'no' });
    expect(heard).toEqual(['ended InvalidArguments']);
  });

  it('ends with ClientClosed when the session is closed, and a later watch fails at once', () => {
    const { session, take, serve } = driven();
    const first = watchRecorder();
    session.watch('kv.get', {}, first.sink);
    session.start();
    const one = serve(take());
    take();
    session.close();
    expect(first.heard).toEqual(['ended ClientClosed']);
    expect(take()).toEqual([{ t: 'drop', connection: one, terminate: false }]);
    const later = watchRecorder();
    session.watch('kv.get', {}, later.sink);
    expect(later.heard).toEqual(['ended ClientClosed']);
  });
});

describe("the client session with a user's tokens (connect({ auth }))", () => {
  it('asks its driver for a token at every connection, and presents it in the hello', () => {
    const d = driven({ auth: true });
    d.session.start();
    const { connection } = d.connectIn(d.take());
    d.session.connectionOpened(connection);
    expect(d.take()).toEqual([{ t: 'token', connection }]); // no hello before the token
    d.session.tokenProvided(connection, 'jwt-1');
    const [hello] = d.frames(d.take());
    expect(hello!.frame).toMatchObject({
      t: 'hello',
      auth: 'jwt-1',
      session: 'session-under-test',
    });
    // A token for a connection the session has left is dropped.
    d.session.tokenProvided(connection, 'late');
    expect(d.take()).toEqual([]);
  });

  it('sends a fresh token when the replica asks, with its ops in flight left where they are', () => {
    const d = driven({ auth: true });
    d.session.start();
    const { connection } = d.connectIn(d.take());
    d.session.connectionOpened(connection);
    d.session.tokenProvided(connection, 'jwt-1');
    d.welcome(connection);
    const r = recorder();
    d.session.submit('kv.put', { key: 'k', value: 1 }, ['strong'], r.sink);
    const [invoke] = invokes(d.frames(d.take()));
    d.receive(connection, { t: 'auth-expiring', inMs: 1_000 });
    d.receive(connection, { t: 'auth-expiring', inMs: 900 }); // one refresh at a time
    expect(d.take()).toEqual([{ t: 'token', connection }]);
    d.session.tokenProvided(connection, 'jwt-2');
    expect(d.frames(d.take()).map((f) => f.frame)).toEqual([{ t: 'reauth', token: 'jwt-2' }]);
    d.receive(connection, { t: 'authed', user: 'alice', expiresInMs: 60_000 });
    d.receive(connection, stable(invoke!.opId, null));
    expect(r.heard).toContain('view strong final');
  });

  it('moves on when the token expired, and resubmits its ops with a fresh token', () => {
    const d = driven({ auth: true });
    d.session.start();
    const first = d.connectIn(d.take()).connection;
    d.session.connectionOpened(first);
    d.session.tokenProvided(first, 'jwt-1');
    d.welcome(first);
    d.session.submit('kv.put', { key: 'k', value: 1 }, ['strong'], recorder().sink);
    const [sent] = invokes(d.frames(d.take()));
    d.receive(first, { t: 'auth-expired', message: 'expired' });
    const outs = d.take();
    expect(outs).toContainEqual({ t: 'drop', connection: first, terminate: true });
    d.session.reconnect();
    const next = d.connectIn(d.take()).connection;
    d.session.connectionOpened(next);
    expect(d.take()).toEqual([{ t: 'token', connection: next }]);
    d.session.tokenProvided(next, 'jwt-2');
    expect(d.frames(d.take())[0]!.frame).toMatchObject({ t: 'hello', auth: 'jwt-2' });
    d.welcome(next);
    // The same op id and number: applied once.
    const [again] = invokes(d.frames(d.take()));
    expect(again).toMatchObject({ opId: sent!.opId, seq: sent!.seq });
  });

  it('leaves a replica when the app cannot give a token, and asks again at the next one', () => {
    const d = driven({ auth: true });
    d.session.start();
    const first = d.connectIn(d.take()).connection;
    d.session.connectionOpened(first);
    d.take();
    d.session.tokenFailed(first, 'signed out');
    expect(d.take()).toContainEqual({ t: 'drop', connection: first, terminate: true });
  });

  it('asks for nothing without auth', () => {
    const d = driven();
    d.session.start();
    const { connection } = d.connectIn(d.take());
    d.session.connectionOpened(connection);
    const [hello] = d.frames(d.take());
    expect(hello!.frame).toMatchObject({ t: 'hello' });
    expect(hello!.frame).not.toHaveProperty('auth');
  });
});
