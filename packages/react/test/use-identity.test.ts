// @vitest-environment happy-dom
import { connect, type Identity } from '@creek/client';
import { act, createElement, type ReactNode } from 'react';
import { createRoot } from 'react-dom/client';
import { describe, expect, it } from 'vitest';
import { createCreekHooks, type OpState } from '../src/index.js';

/**
 * useIdentity: the component renders the client's user as it signs in, changes and signs out; and
 * when the user changes, a live query shown starts afresh for the new user instead of keeping the
 * previous user's result on screen. The replica is played by a WebSocket the test drives: it
 * welcomes each hello as the user its token names (an unsigned JWT: the client never verifies
 * tokens, the replicas do, and here the test is the replica).
 */
(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

const b64 = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
const jwt = (sub: string): string =>
  `${b64({ alg: 'HS256' })}.${b64({ sub, role: 'member', exp: Date.now() / 1000 + 600 })}.c2ln`;
const subOf = (token: string): string =>
  (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { sub: string }).sub;

const sockets: Replica[] = [];
class Replica {
  readyState = 0;
  readonly sent: { t: string; watchId?: string; auth?: string; session?: string }[] = [];
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: string }) => void) | null = null;
  onclose: ((ev: unknown) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  constructor(readonly url: string) {
    sockets.push(this);
    setTimeout(() => {
      this.readyState = 1;
      this.onopen?.({});
    }, 0);
  }
  send(text: string): void {
    const f = JSON.parse(text) as Replica['sent'][number] & { version?: number };
    this.sent.push(f);
    if (f.t === 'hello')
      this.push({
        t: 'welcome',
        version: f.version,
        replica: 0,
        levels: ['weak', 'strong'],
        ops: [],
        auth: { user: f.auth === undefined ? null : subOf(f.auth), expiresInMs: 600_000 },
      });
  }
  push(frame: unknown): void {
    if (this.readyState === 1) this.onmessage?.({ data: JSON.stringify(frame) });
  }
  close(): void {
    if (this.readyState === 3) return;
    this.readyState = 3;
    setTimeout(() => this.onclose?.({}), 0);
  }
  terminate(): void {
    this.close();
  }
}

const { CreekProvider, useIdentity, useWatch } = createCreekHooks();

const until = async (what: string, ok: () => boolean) => {
  for (let i = 0; i < 400 && !ok(); i++)
    await act(async () => {
      await new Promise((r) => setTimeout(r, 2));
    });
  if (!ok()) throw new Error(`timed out: ${what}`);
};

describe('useIdentity', () => {
  it('renders the user as it signs in, changes and signs out; a live query starts afresh for each user', async () => {
    const client = connect({
      urls: ['ws://replica.test/client'],
      WebSocket: Replica as never,
      auth: jwt('alice'),
    });
    const identities: Identity[] = [];
    const todos: OpState<unknown>[] = [];
    function Todos(): ReactNode {
      identities.push(useIdentity());
      todos.push(useWatch('todos.list' as never, {} as never));
      return null;
    }
    const root = createRoot(document.createElement('div'));
    act(() => root.render(createElement(CreekProvider, { client }, createElement(Todos))));
    /** The watch frame on socket `n`, answered with `value`. */
    const answer = async (n: number, value: unknown) => {
      await until(
        `the watch on socket ${n}`,
        () => sockets[n]?.sent.some((f) => f.t === 'watch') === true,
      );
      const watchId = sockets[n]!.sent.find((f) => f.t === 'watch')!.watchId!;
      act(() =>
        sockets[n]!.push({
          t: 'watched',
          watchId,
          level: 'tentative',
          outcome: { ok: true, value },
        }),
      );
    };
    try {
      expect(identities[0]).toMatchObject({ state: 'signing-in', user: null, session: 1 });
      await until('signed in', () => identities.at(-1)!.state === 'signed-in');
      expect(identities.at(-1)).toMatchObject({
        user: { id: 'alice', claims: { sub: 'alice', role: 'member' } },
        error: null,
      });
      await answer(0, ['alice’s todo']);
      expect(todos.at(-1)).toMatchObject({ value: ['alice’s todo'], pending: false });

      act(() => client.setAuth(jwt('bob')));
      expect(identities.at(-1)).toMatchObject({ state: 'signing-in', user: null, session: 2 });
      // Alice's list is not on screen for bob, not even as an error: a new query, pending.
      expect(todos.at(-1)).toMatchObject({ value: undefined, pending: true, error: undefined });
      await until('bob signed in', () => identities.at(-1)!.user?.id === 'bob');
      await answer(1, []);
      expect(todos.at(-1)).toMatchObject({ value: [], pending: false });
      expect(sockets[1]!.sent[0]!.session).not.toBe(sockets[0]!.sent[0]!.session);

      act(() => client.setAuth(null));
      expect(identities.at(-1)).toMatchObject({ state: 'signed-out', user: null, session: 3 });
      await until(
        'the anonymous hello',
        () => sockets[2]?.sent.some((f) => f.t === 'hello') === true,
      );
      expect(sockets[2]!.sent.find((f) => f.t === 'hello')).not.toHaveProperty('auth');
    } finally {
      act(() => root.unmount());
      client.close();
    }
  });
});
