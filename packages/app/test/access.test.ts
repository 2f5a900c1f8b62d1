import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkAccess, defineApp, op, type User } from '@creek/app';

const alice: User = { id: 'alice', claims: { sub: 'alice', role: 'admin' } };
const bob: User = { id: 'bob', claims: { sub: 'bob' } };

const ops = {
  open: op({ args: z.null(), public: true, run: () => 1 }),
  mine: op({ args: z.null(), run: (tx) => tx.user?.id ?? null }),
  admin: op({ args: z.null(), access: (u) => u.claims.role === 'admin', run: () => 2 }),
  throws: op({
    args: z.null(),
    access: () => {
      throw new Error('no roles claim');
    },
    run: () => 3,
  }),
};

describe('checkAccess (deny by default once auth is on)', () => {
  const app = defineApp(ops);

  it('lets anyone call a public op', () => {
    expect(checkAccess(app, 'open', null)).toBeNull();
    expect(checkAccess(app, 'open', bob)).toBeNull();
  });

  it('needs a signed-in user for an op that says nothing', () => {
    expect(checkAccess(app, 'mine', null)).toMatchObject({ code: 'unauthorized' });
    expect(checkAccess(app, 'mine', null)?.message).toMatch(/needs a signed-in user.*not applied/);
    expect(checkAccess(app, 'mine', bob)).toBeNull();
  });

  it("asks an op's access check, and refuses anonymous callers before it", () => {
    expect(checkAccess(app, 'admin', alice)).toBeNull();
    expect(checkAccess(app, 'admin', bob)).toMatchObject({ code: 'forbidden' });
    expect(checkAccess(app, 'admin', bob)?.message).toMatch(/not allowed for user 'bob'/);
    expect(checkAccess(app, 'admin', null)).toMatchObject({ code: 'unauthorized' });
  });

  it('refuses when the access check throws, saying so', () => {
    expect(checkAccess(app, 'throws', alice)?.message).toMatch(/threw \(no roles claim\)/);
  });

  it('keeps the built-in data types closed to end users unless the app opens them', () => {
    expect(checkAccess(app, 'kv.get', alice)).toMatchObject({ code: 'forbidden' });
    expect(checkAccess(app, 'queue.enqueue', null)).toMatchObject({ code: 'unauthorized' });
    const signedIn = defineApp(ops, { builtins: 'signed-in' });
    expect(checkAccess(signedIn, 'kv.get', alice)).toBeNull();
    expect(checkAccess(signedIn, 'kv.get', null)).toMatchObject({ code: 'unauthorized' });
    const open = defineApp(ops, { builtins: 'public' });
    expect(checkAccess(open, 'kv.put', null)).toBeNull();
  });

  it('opens shared contexts as the built-ins, or as the app says apart from them', () => {
    const closed = defineApp(ops);
    expect(checkAccess(closed, 'creek.context.merge', bob)).toMatchObject({ code: 'forbidden' });
    const asBuiltins = defineApp(ops, { builtins: 'signed-in' });
    expect(checkAccess(asBuiltins, 'creek.context.frontier', bob)).toBeNull();
    const contextsOnly = defineApp(ops, { contexts: 'signed-in' });
    expect(checkAccess(contextsOnly, 'creek.context.merge', bob)).toBeNull();
    expect(checkAccess(contextsOnly, 'creek.context.merge', null)).toMatchObject({
      code: 'unauthorized',
    });
    expect(checkAccess(contextsOnly, 'kv.put', bob)).toMatchObject({ code: 'forbidden' });
    expect(() => defineApp(ops, { contexts: 'all' as never })).toThrow(/contexts: must be/);
  });

  it('lets an app say who is a member of each context: its check sees the user and the id', () => {
    // A user's own contexts are `<id>:…`; the admin's are every one.
    const members = defineApp(ops, {
      contexts: (user, id) => user.claims.role === 'admin' || id.startsWith(`${user.id}:`),
    });
    const merge = (user: User | null, id: unknown) =>
      checkAccess(members, 'creek.context.merge', user, { id, seen: [] });
    expect(merge(bob, 'bob:cart')).toBeNull();
    expect(checkAccess(members, 'creek.context.frontier', bob, { id: 'bob:cart' })).toBeNull();
    expect(merge(alice, 'bob:cart')).toBeNull();
    expect(merge(bob, 'alice:cart')).toMatchObject({
      code: 'forbidden',
      message: expect.stringMatching(
        /'creek.context.merge' is not allowed for user 'bob' in context 'alice:cart'.*not applied/,
      ),
    });
    expect(merge(null, 'bob:cart')).toMatchObject({ code: 'unauthorized' });
    // Arguments that name no context, or none at all: refused.
    expect(merge(bob, 42)).toMatchObject({
      code: 'forbidden',
      message: expect.stringMatching(/names no context/),
    });
    expect(checkAccess(members, 'creek.context.frontier', bob)).toMatchObject({
      code: 'forbidden',
    });
    // The app's other built-ins keep their own setting.
    expect(checkAccess(members, 'kv.get', bob)).toMatchObject({ code: 'forbidden' });
    // A check that throws refuses, saying so; a truthy answer that is not `true` refuses too.
    const throwing = defineApp(ops, {
      contexts: () => {
        throw new Error('no tenant claim');
      },
    });
    expect(
      checkAccess(throwing, 'creek.context.merge', bob, { id: 'x', seen: [] })?.message,
    ).toMatch(/in context 'x': its access check threw \(no tenant claim\)/);
    const truthy = defineApp(ops, { contexts: (() => 1) as never });
    expect(checkAccess(truthy, 'creek.context.frontier', bob, { id: 'x' })).toMatchObject({
      code: 'forbidden',
    });
    expect(() => defineApp(ops, { contexts: 42 as never })).toThrow(
      /contexts: must be one of public, signed-in, none or a function/,
    );
  });

  it('always lets a caller abandon an op of its own session', () => {
    expect(checkAccess(app, 'creek.abandon', null)).toBeNull();
  });

  it('leaves unknown ops to the replica, which names the ops it has', () => {
    expect(checkAccess(app, 'nope', null)).toBeNull();
  });

  it('refuses definitions that are ambiguous or malformed', () => {
    const both = { x: op({ args: z.null(), public: true, access: () => true, run: () => 0 }) };
    expect(() => defineApp(both)).toThrow(/give one of them/);
    const bad = { x: { args: z.null(), access: 'admin', run: () => 0 } } as never;
    expect(() => defineApp(bad)).toThrow(/access must be a function/);
    expect(() => defineApp(ops, { builtins: 'everyone' as never })).toThrow(/builtins: must be/);
  });
});
