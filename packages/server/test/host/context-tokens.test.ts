import { readContextToken, type ServerFrame } from '@creek/protocol';
import { ContextTokens } from '@creek/replica/host/context-tokens.js';
import { describe, expect, it } from 'vitest';
import { contextMac } from '../../src/node/context-key.js';
import { connectionsHarness, lastFrame, sessionHello } from './connections-harness.js';

/**
 * The replica's side of context tokens (ClientConnections with a `contextMac`): it signs what a
 * session saw together with what it holds, welcomes a hello presenting a token only once it holds
 * every op the token covers, and refuses tokens it did not sign.
 */
const mac = contextMac('the cluster secret');
const hello = sessionHello;
const last = lastFrame;

describe('context tokens at the replica', () => {
  it('signs the larger of what the session saw and what it holds, only after welcome', () => {
    // It has op 1 of replica 1 past a gap: the session saw it, so the replica must hold it.
    const { cc, frames } = connectionsHarness({
      contextMac: mac,
      seen: () => [4, 0, 2],
      received: (replica, e) => replica === 1 && e === 1,
    });
    cc.open('a');
    cc.frame('a', { t: 'context', n: 1 });
    expect(last(frames('a'))).toMatchObject({ t: 'error', code: 'out-of-order' });
    cc.open('b');
    cc.frame('b', hello());
    cc.frame('b', { t: 'context', n: 7, seen: [3, 1] });
    const answer = last(frames('b')) as Extract<ServerFrame, { t: 'context' }>;
    expect(answer).toMatchObject({ t: 'context', n: 7 });
    const read = readContextToken(answer.token);
    expect(read.ok && read.seen).toEqual([4, 1, 2]);
    // Another replica of the cluster (the same key) takes it; one of another cluster does not.
    expect(new ContextTokens(mac).open(answer.token!)).toEqual({ ok: true, seen: [4, 1, 2] });
    expect(new ContextTokens(contextMac('another secret')).open(answer.token!)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/not signed by this cluster/),
    });
  });

  it('welcomes a hello after a token only once it holds every op the token covers', () => {
    let now = 0;
    const held = new Set(['0/1', '0/2']);
    const { cc, frames } = connectionsHarness({
      contextMac: mac,
      seen: () => [2],
      received: (replica, e) => held.has(`${replica}/${e}`),
      now: () => now,
    });
    const token = new ContextTokens(mac).sign([3, 1]);
    cc.open('c');
    cc.frame('c', hello({ after: token }));
    cc.afterTurn();
    expect(frames('c').some((f) => f.t === 'welcome')).toBe(false);
    held.add('0/3');
    cc.afterTurn();
    expect(frames('c').some((f) => f.t === 'welcome')).toBe(false);
    held.add('1/1');
    cc.afterTurn();
    expect(last(frames('c'))).toMatchObject({ t: 'welcome' });
    // Not caught up in time: sent to another replica, saying why.
    cc.open('d');
    cc.frame('d', hello({ after: new ContextTokens(mac).sign([9]) }));
    now = 3_001;
    cc.afterTurn();
    expect(last(frames('d'))).toMatchObject({
      t: 'error',
      code: 'unavailable',
      message: expect.stringMatching(/context token it started after/),
    });
  });

  it('where reads see only the committed state, waits until the covered ops are committed', () => {
    let committed = false;
    const { cc, frames } = connectionsHarness({
      contextMac: mac,
      seen: () => [3],
      received: () => true,
      readsSee: () => committed,
    });
    cc.open('s');
    cc.frame('s', hello({ seen: [3] }));
    cc.afterTurn();
    expect(frames('s').some((f) => f.t === 'welcome')).toBe(false);
    committed = true;
    cc.afterTurn();
    expect(last(frames('s'))).toMatchObject({ t: 'welcome' });
  });

  it('holds a request covering ops it lacks (client.after) until it has them, or for 3 s', () => {
    let now = 0;
    const held = new Set<string>();
    const { cc, frames } = connectionsHarness({
      contextMac: mac,
      seen: () => [],
      received: (replica, e) => held.has(`${replica}/${e}`),
      now: () => now,
    });
    cc.open('w');
    cc.frame('w', hello());
    cc.frame('w', { t: 'context', n: 1, seen: [0, 1] });
    cc.frame('w', { t: 'context', n: 2, seen: [5] });
    cc.afterTurn();
    expect(frames('w').filter((f) => f.t === 'context')).toEqual([]);
    held.add('1/1');
    cc.afterTurn();
    const first = last(frames('w')) as Extract<ServerFrame, { t: 'context' }>;
    expect(first).toMatchObject({ t: 'context', n: 1 });
    expect(readContextToken(first.token)).toMatchObject({ ok: true, seen: [0, 1] });
    // Ops that never come: refused once it has waited 3 s.
    now = 3_001;
    cc.afterTurn();
    expect(last(frames('w'))).toMatchObject({
      t: 'context',
      n: 2,
      code: 'unavailable',
      message: expect.stringMatching(/has not caught up with what the context request covers/),
    });
    // At most 16 wait at once on a connection.
    for (let n = 10; n < 27; n++) cc.frame('w', { t: 'context', n, seen: [7] });
    expect(last(frames('w'))).toMatchObject({ t: 'context', n: 26, code: 'busy' });
  });

  it('refuses an altered token, and tokens at a replica without a key', () => {
    const { cc, frames, out } = connectionsHarness({ contextMac: mac });
    const token = new ContextTokens(mac).sign([1, 2]);
    cc.open('e');
    cc.frame('e', hello({ after: token.replace('ct1.1-2.', 'ct1.1-3.') }));
    expect(last(frames('e'))).toMatchObject({ t: 'error', code: 'unauthorized' });
    expect(out.at(-1)?.o).toEqual({ t: 'refused', reason: 'context token refused' });

    const keyless = connectionsHarness();
    keyless.cc.open('f');
    keyless.cc.frame('f', hello({ after: token }));
    expect(last(keyless.frames('f'))).toMatchObject({
      t: 'error',
      code: 'unauthorized',
      message: expect.stringMatching(/signs and takes no context tokens/),
    });
    keyless.cc.open('g');
    keyless.cc.frame('g', hello());
    keyless.cc.frame('g', { t: 'context', n: 1 });
    expect(last(keyless.frames('g'))).toMatchObject({ t: 'context', n: 1, code: 'unavailable' });
  });

  it('answers a connection at client protocol 1 that asks for a token with an error', () => {
    const { cc, frames } = connectionsHarness({ contextMac: mac });
    cc.open('h');
    cc.frame('h', { t: 'hello', version: 1, session: 'session-under-test' });
    cc.frame('h', { t: 'context', n: 1 });
    expect(last(frames('h'))).toMatchObject({
      t: 'error',
      code: 'out-of-order',
      message: expect.stringMatching(/came with client protocol 2; this connection runs at 1/),
    });
  });
});
