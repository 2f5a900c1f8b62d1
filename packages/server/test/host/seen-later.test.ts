import { readContextToken, type ServerFrame } from '@creek/protocol';
import type { InvokeRequest } from '@creek/replica/core/replica.js';
import { ContextTokens } from '@creek/replica/host/context-tokens.js';
import { describe, expect, it } from 'vitest';
import { contextMac } from '../../src/node/context-key.js';
import { connectionsHarness, lastFrame, sessionHello } from './connections-harness.js';

/**
 * Session guarantees for the ops of a replica's later incarnation: a replica that lost its disk
 * numbers its ops under origin `id + 256 × incarnation`, and a session that saw some of them is
 * welcomed elsewhere only once they are there, as for any op. Before seen vectors were keyed by
 * origin, they counted first incarnations only, and a session (or a client started after its
 * context token) could read at a replica without them.
 */
const mac = contextMac('the cluster secret');
const hello = sessionHello;
const last = lastFrame;

describe('seen vectors with later incarnations at the replica', () => {
  it('welcomes a session that saw ops of origin 257 only once it holds them', () => {
    const held = new Set(['257/1']);
    const { cc, frames } = connectionsHarness({
      seen: () => [3, 0],
      received: (origin, e) => held.has(`${origin}/${e}`),
    });
    cc.open('a');
    cc.frame('a', hello({ seen: [3], seenLater: [[257, 2]] }));
    cc.afterTurn();
    expect(frames('a').some((f) => f.t === 'welcome')).toBe(false);
    held.add('257/2');
    cc.afterTurn();
    expect(last(frames('a'))).toMatchObject({ t: 'welcome' });
  });

  it("tells a session the later origins' counts in views' seenLater, and signs them in tokens", () => {
    const invoked: InvokeRequest[] = [];
    const seen = [2, 1];
    seen[258] = 4;
    const { cc, frames } = connectionsHarness({
      contextMac: mac,
      invoke: (r) => invoked.push(r),
      seen: () => seen,
      received: () => true,
    });
    cc.open('b');
    cc.frame('b', hello());
    cc.frame('b', { t: 'invoke', opId: 'a', op: 'kv.put', args: {}, level: 'weak', seq: 1 });
    cc.respond({
      type: 'respond',
      tag: invoked[0]!.tag,
      id: { replica: 0, eventNo: 3 },
      level: 'tentative',
      outcome: { ok: true, value: null },
    });
    cc.afterTurn();
    expect(last(frames('b'))).toMatchObject({ t: 'view', seen: [2, 1], seenLater: [[258, 4]] });
    // A token covers what the session saw and what the replica holds, later origins included.
    cc.frame('b', { t: 'context', n: 1, seen: [1], seenLater: [[257, 6]] });
    const answer = last(frames('b')) as Extract<ServerFrame, { t: 'context' }>;
    const read = readContextToken(answer.token);
    expect(read.ok && read.payload).toBe('ct1.2-1-257:6-258:4');
  });

  it('holds a client started after a token with later origins until it has their ops', () => {
    const held = new Set<string>();
    const { cc, frames } = connectionsHarness({
      contextMac: mac,
      seen: () => [],
      received: (origin, e) => held.has(`${origin}/${e}`),
    });
    const covered: number[] = [];
    covered[513] = 1;
    cc.open('c');
    cc.frame('c', hello({ after: new ContextTokens(mac).sign(covered) }));
    cc.afterTurn();
    expect(frames('c').some((f) => f.t === 'welcome')).toBe(false);
    held.add('513/1');
    cc.afterTurn();
    expect(last(frames('c'))).toMatchObject({ t: 'welcome' });
  });
});
