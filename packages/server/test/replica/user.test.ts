import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineApp, op, toFrozenJson, type User } from '@creek/app';
import type { Response } from '@creek/replica/core/types.js';
import { Driven, remoteReq, T0 } from './harness.js';

const alice = toFrozenJson({
  id: 'alice',
  claims: { sub: 'alice', role: 'admin' },
}) as unknown as User;
const bob = toFrozenJson({ id: 'bob', claims: { sub: 'bob' } }) as unknown as User;

/** Ops that show the caller they ran as: in their result and in what they write. */
const app = defineApp({
  /** Reads `x` (so a write to it ordered earlier re-executes it) and records its caller. */
  stamp: op({
    args: z.object({ into: z.string() }),
    run(tx, { into }) {
      const who = tx.user === null ? 'anonymous' : `${tx.user.id}/${String(tx.user.claims.role)}`;
      tx.put(into, `${who} saw ${JSON.stringify(tx.get('x') ?? null)}`);
      return who;
    },
  }),
  whoami: op({ args: z.null(), readOnly: true, run: (tx) => tx.user?.id ?? null }),
  /** Tries to change the user it was given: must fail, the same way everywhere. */
  promote: op({
    args: z.null(),
    run(tx) {
      (tx.user!.claims as Record<string, unknown>).role = 'admin';
      return 'promoted';
    },
  }),
});

function invoke(r: Driven, atMs: number, tag: number, name: string, args: unknown, user?: User) {
  r.handle(
    r.replica.invoke(T0 + atMs, {
      op: name,
      args,
      strong: false,
      tag,
      ...(user === undefined ? {} : { user }),
    }),
  );
}

const valuesOf = (rs: Response[], tag: number) =>
  rs.filter((x) => x.tag === tag).map((x) => (x.outcome.ok ? x.outcome.value : x.outcome.error));

describe('tx.user: the caller travels with the op', () => {
  it('runs the op as its caller, puts the caller in the Req, and is null for an anonymous one', () => {
    const r = new Driven({ id: 0, app });
    invoke(r, 10, 101, 'stamp', { into: 'a' }, alice);
    invoke(r, 20, 102, 'stamp', { into: 'b' });
    expect(valuesOf(r.responses, 101)).toEqual(['alice/admin']);
    expect(valuesOf(r.responses, 102)).toEqual(['anonymous']);
    expect(r.rbCast[0]!.user).toEqual(alice);
    expect('user' in r.rbCast[1]!).toBe(false);
  });

  it('re-executes a reordered op as the same caller', () => {
    const r = new Driven({ id: 0, app });
    invoke(r, 10, 101, 'stamp', { into: 'a' }, alice);
    expect(r.replica.state().get('a')).toBe('alice/admin saw null');
    // Another replica's write of x ordered before it: the op reads x, so it runs again.
    r.deliver(remoteReq(1, 1, 5, 'kv.put', { key: 'x', value: 7 }));
    expect(r.replica.metrics.rollbacks).toBe(1);
    expect(r.replica.state().get('a')).toBe('alice/admin saw 7');
  });

  it("runs another replica's op as the caller its Req names", () => {
    const r = new Driven({ id: 0, app });
    r.deliver({ ...remoteReq(1, 1, 5, 'stamp', { into: 'c' }), user: bob });
    r.deliver(remoteReq(1, 2, 6, 'stamp', { into: 'd' }));
    expect(r.replica.state().get('c')).toBe('bob/undefined saw null');
    expect(r.replica.state().get('d')).toBe('anonymous saw null');
  });

  it('answers reads as their caller', () => {
    const r = new Driven({ id: 0, app });
    invoke(r, 10, 101, 'whoami', null, bob);
    invoke(r, 20, 102, 'whoami', null);
    expect(valuesOf(r.responses, 101)).toEqual(['bob']);
    expect(valuesOf(r.responses, 102)).toEqual([null]);
  });

  it('hands the op a frozen user: changing it fails the op, and the next op sees it unchanged', () => {
    const r = new Driven({ id: 0, app });
    invoke(r, 10, 101, 'promote', null, bob);
    invoke(r, 20, 102, 'stamp', { into: 'e' }, bob);
    expect(String(valuesOf(r.responses, 101)[0])).toMatch(/read only|read-only|not extensible/);
    expect(valuesOf(r.responses, 102)).toEqual(['bob/undefined']);
  });

  it("keeps a session's records its user's: another user naming the session gets its own", () => {
    const r = new Driven({ id: 0, app });
    const session = (seq: number) => ({ id: 'session-of-alice', seq, acked: 1 });
    const send = (at: number, tag: number, user: User) =>
      r.handle(
        r.replica.invoke(T0 + at, {
          op: 'kv.increment',
          args: { key: `n-${user.id}` },
          strong: false,
          tag,
          session: session(1),
          user,
        }),
      );
    send(10, 101, alice);
    send(20, 102, alice); // alice's resubmission: answered, not applied again
    send(30, 103, bob); // bob names alice's session and number: his own op, applied
    expect(valuesOf(r.responses, 101)).toEqual([1]);
    expect(valuesOf(r.responses, 102)).toEqual([1]);
    expect(valuesOf(r.responses, 103)).toEqual([1]);
    expect(r.replica.state().get('n-alice')).toBe(1);
    expect(r.replica.state().get('n-bob')).toBe(1);
  });
});
