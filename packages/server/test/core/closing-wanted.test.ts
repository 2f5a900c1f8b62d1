import { CLOSE_OP, type JsonValue } from '@creek/app';
import { ClosingOrigins } from '@creek/replica/core/closing-origins.js';
import type { Dependencies } from '@creek/replica/core/dependencies.js';
import type { Ordering } from '@creek/replica/core/ordering.js';
import type { ReplicaContext } from '@creek/replica/core/replica-context.js';
import { ClientView } from '@creek/replica/host/client-view.js';
import type { HostParts } from '@creek/replica/host/parts.js';
import { describe, expect, it } from 'vitest';

/**
 * Closing an origin for an op a client waits for (ClosingOrigins.want): a session that saw an op
 * of a replica that then lost its disk before anyone else had it is welcomed nowhere, as no
 * replica will ever hold that op, and no op of that origin is stranded above a gap to make a
 * replica close it. The replica the client waits at closes the origin at what it holds instead,
 * once the origin is dead and the op has not turned up in the adoption delay.
 */
const AFTER_MS = 100;

function harness(held: Map<number, number>) {
  const issued: { op: string; args: JsonValue; strong: boolean }[] = [];
  const ctx = {
    origin: 2,
    closed: new Map<number, number>(),
    order: [],
    committedEnd: 0,
    metrics: { closesIssued: 0 },
  } as unknown as ReplicaContext;
  const ordering = {
    newReq: (op: string, args: JsonValue, strong: boolean) => {
      issued.push({ op, args, strong });
      return { op, args, strong };
    },
    admit: () => undefined,
  } as unknown as Ordering;
  const deps = { receivedUpTo: (o: number) => held.get(o) ?? 0 } as unknown as Dependencies;
  return { closing: new ClosingOrigins(ctx, ordering, deps, AFTER_MS), issued, ctx };
}

describe('closing an origin a waiting client needs', () => {
  it('closes a dead origin at what it holds once the op has not come within the delay', () => {
    const { closing, issued } = harness(new Map([[0, 228]]));
    closing.want(0, 229, 1_000);
    const dead = () => true;
    expect(closing.closeIfDue(1_050, dead)).toBe(false);
    expect(issued).toEqual([]);
    expect(closing.closeIfDue(1_100, dead)).toBe(true);
    expect(issued).toEqual([{ op: CLOSE_OP, args: { origin: 0, cut: 228 }, strong: true }]);
    // Once proposed, not again while it is on its way.
    closing.want(0, 230, 1_200);
    expect(closing.closeIfDue(1_400, dead)).toBe(false);
    expect(issued).toHaveLength(1);
  });

  it('lets a want lapse once no client asks for the op again within the delay', () => {
    const { closing, issued } = harness(new Map([[0, 228]]));
    closing.want(0, 229, 0);
    closing.want(0, 229, 90);
    expect(closing.closeIfDue(150, () => true)).toBe(true);
    const other = harness(new Map([[0, 228]]));
    other.closing.want(0, 229, 0);
    // Asked once, then nobody waits any more: nothing is closed for it.
    expect(other.closing.closeIfDue(1_000, () => true)).toBe(false);
    expect(other.issued).toEqual([]);
    expect(issued).toHaveLength(1);
  });

  it('waits for an origin that may still be alive: its op may be on its way', () => {
    const { closing, issued } = harness(new Map([[0, 228]]));
    closing.want(0, 229, 0);
    expect(closing.closeIfDue(10_000, () => false)).toBe(false);
    expect(issued).toEqual([]);
  });

  it('forgets the want once the op arrived, or its origin was closed by another', () => {
    const held = new Map([
      [0, 228],
      [1, 5],
    ]);
    const { closing, issued, ctx } = harness(held);
    closing.want(0, 229, 0);
    closing.want(1, 6, 0);
    held.set(0, 229);
    ctx.closed.set(1, 5);
    expect(closing.closeIfDue(1_000, () => true)).toBe(false);
    // Gone for good: the same origin dead later closes only for a new want.
    held.set(0, 229);
    expect(closing.closeIfDue(2_000, () => true)).toBe(false);
    expect(issued).toEqual([]);
  });

  it('takes no want for its own origin, one already closed, or an op it holds', () => {
    const { closing, issued, ctx } = harness(new Map([[0, 10]]));
    ctx.closed.set(1, 3);
    closing.want(2, 1, 0);
    closing.want(1, 9, 0);
    closing.want(0, 10, 0);
    expect(closing.closeIfDue(1_000, () => true)).toBe(false);
    expect(issued).toEqual([]);
  });
});

describe('which waits a replica notes (ClientView.heldForClient)', () => {
  it('notes an op a client names only while no peer says it holds more of that origin', () => {
    const wants: number[] = [];
    let peersHold = 7;
    const parts = {
      replica: {
        hasReceived: () => false,
        closedOff: () => false,
        receivedUpTo: () => 5,
        want: (id: { eventNo: number }) => wants.push(id.eventNo),
      },
      gossip: { peersHoldUpTo: () => peersHold },
    } as unknown as HostParts;
    const view = new ClientView(
      parts,
      () => 0,
      () => null,
    );
    // A peer has ops 6 and 7: this replica lags, and what a client names is unsigned.
    expect(view.heldForClient({ replica: 0, eventNo: 6 })).toBe(false);
    expect(wants).toEqual([]);
    peersHold = 5;
    expect(view.heldForClient({ replica: 0, eventNo: 6 })).toBe(false);
    expect(wants).toEqual([6]);
  });
});
