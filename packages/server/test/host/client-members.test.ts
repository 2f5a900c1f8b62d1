import { describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION, type ReplicaUrls } from '@creek/protocol';
import { connectionsHarness } from './connections-harness.js';

/**
 * The replica's side of client connections telling clients where the cluster's replicas are: the
 * welcome lists the members' client URLs, a change is pushed to every welcomed connection at the
 * end of the turn, and a `ping` is answered with a `pong` before any hello (how a client measures
 * its distance to a replica). (The socket driver and real processes:
 * client/test/nearest-replica.e2e.test.ts.)
 */
function harness(members: { now: ReplicaUrls } | null) {
  const { cc, out, frames } = connectionsHarness({
    authorize: (token) => token === undefined || token === 'good',
    ...(members === null ? {} : { members: () => members.now }),
  });
  const hello = (conn: string, token?: string) => {
    cc.open(conn);
    cc.frame(conn, {
      t: 'hello',
      version: PROTOCOL_VERSION,
      ...(token === undefined ? {} : { token }),
    });
  };
  return { cc, out, frames, hello };
}

const three: ReplicaUrls = [
  { id: 0, url: 'ws://a:7100/client' },
  { id: 1, url: 'ws://b:7100/client' },
  { id: 2, url: 'ws://c:7100/client' },
];

describe('the members a replica tells its clients', () => {
  it('lists them in the welcome', () => {
    const h = harness({ now: three });
    h.hello('c');
    expect(h.frames('c')[0]).toMatchObject({ t: 'welcome', members: three });
  });

  it('says nothing of them when the driver gives none (an older replica’s welcome)', () => {
    const h = harness(null);
    h.hello('c');
    expect(h.frames('c')[0]!.t).toBe('welcome');
    expect(h.frames('c')[0]).not.toHaveProperty('members');
    h.cc.afterTurn();
    expect(h.frames('c')).toHaveLength(1);
  });

  it('pushes a change to every welcomed connection once, at the end of the turn', () => {
    const members = { now: three };
    const h = harness(members);
    h.hello('welcomed');
    h.hello('refused', 'bad'); // not welcomed: hears nothing of the cluster
    h.cc.afterTurn();
    expect(h.frames('welcomed').map((f) => f.t)).toEqual(['welcome']);
    // Replica 2 replaced by replica 3: a new array, as the drivers make one per change.
    const replaced = [three[0]!, three[1]!, { id: 3, url: 'ws://d:7100/client' }];
    members.now = replaced;
    expect(h.cc.sendsThisTurn()).toBe(true);
    h.cc.afterTurn();
    expect(h.frames('welcomed').at(-1)).toEqual({ t: 'members', members: replaced });
    expect(h.frames('refused').some((f) => f.t === 'members')).toBe(false);
    // Told once; an equal list in a new array is no change.
    members.now = replaced.map((m) => ({ ...m }));
    expect(h.cc.sendsThisTurn()).toBe(false);
    h.cc.afterTurn();
    expect(h.frames('welcomed').filter((f) => f.t === 'members')).toHaveLength(1);
  });

  it('answers a ping with a pong before any hello, and without a token', () => {
    const h = harness({ now: three });
    h.cc.open('probe');
    h.cc.frame('probe', { t: 'ping', n: 7 });
    expect(h.frames('probe')).toEqual([{ t: 'pong', n: 7 }]);
    // The probe is no client: a later hello still needs a good token.
    h.cc.frame('probe', { t: 'hello', version: PROTOCOL_VERSION, token: 'bad' });
    expect(h.out.filter((x) => x.conn === 'probe').at(-1)?.o.t).toBe('refused');
  });
});
