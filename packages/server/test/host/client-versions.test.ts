import { describe, expect, it } from 'vitest';
import {
  clientFrameAllowed,
  helloVersionFields,
  negotiateClientVersion,
  SPOKEN_CLIENT_VERSIONS,
  type ClientVersions,
  type ReplicaUrls,
  type ServerFrame,
} from '@creek/protocol';
import { connectionsHarness } from './connections-harness.js';

/**
 * The client protocol's versions, negotiated at each connection's hello (protocol
 * client-versions.ts): the welcome names the newest version both sides speak, ranges that do not
 * overlap are refused with the error `version` naming both, and a frame kind newer than a
 * connection's version is held back from it. (Real processes and the SDK:
 * test/node/upgrade.e2e.test.ts, "a rolling upgrade to the next client protocol version".)
 */
function harness(speaks?: ClientVersions, since?: ReadonlyMap<string, number>) {
  const members: { now: ReplicaUrls } = { now: [{ id: 0, url: 'ws://a:7100/client' }] };
  const { cc, frames } = connectionsHarness({
    members: () => members.now,
    ...(speaks === undefined && since === undefined
      ? {}
      : { versions: { ...(speaks ? { speaks } : {}), ...(since ? { since } : {}) } }),
  });
  const hello = (conn: string, version: number, newest?: number): ServerFrame => {
    cc.open(conn);
    cc.frame(conn, { t: 'hello', version, ...(newest === undefined ? {} : { newest }) });
    return frames(conn)[0]!;
  };
  return { cc, frames, hello, members };
}

describe('client protocol versions', () => {
  it('welcome a client of this build, and one that names no newest version, at this build’s', () => {
    const h = harness();
    expect(
      h.hello('now', SPOKEN_CLIENT_VERSIONS.oldest, SPOKEN_CLIENT_VERSIONS.newest),
    ).toMatchObject({ t: 'welcome', version: SPOKEN_CLIENT_VERSIONS.newest });
    expect(h.hello('older', SPOKEN_CLIENT_VERSIONS.oldest)).toMatchObject({
      t: 'welcome',
      version: SPOKEN_CLIENT_VERSIONS.oldest,
    });
  });

  it('run a connection at the newest version both speak, in either order of upgrade', () => {
    // The next release's client (1 to 2) on this release's replica (1): version 1.
    expect(harness({ oldest: 1, newest: 1 }).hello('c', 1, 2)).toMatchObject({
      t: 'welcome',
      version: 1,
    });
    // This release's client (1) on the next release's replica (1 to 2): version 1.
    expect(harness({ oldest: 1, newest: 2 }).hello('c', 1)).toMatchObject({
      t: 'welcome',
      version: 1,
    });
    // Both upgraded: version 2.
    expect(harness({ oldest: 1, newest: 2 }).hello('c', 1, 2)).toMatchObject({
      t: 'welcome',
      version: 2,
    });
  });

  it('refuse ranges that do not overlap, naming both and the side to upgrade', () => {
    // A client two releases ahead, which dropped version 1.
    const ahead = harness({ oldest: 1, newest: 1 }).hello('c', 2, 3);
    expect(ahead).toMatchObject({ t: 'error', code: 'version' });
    expect((ahead as { message: string }).message).toMatch(
      /this replica speaks client protocol 1, the client 2 to 3: upgrade the replica/,
    );
    // A replica two releases ahead, which dropped the client's version.
    const behind = harness({ oldest: 2, newest: 3 }).hello('c', 1);
    expect((behind as { message: string }).message).toMatch(
      /speaks client protocol 2 to 3, the client 1: upgrade the client/,
    );
    // Refused: the connection takes no ops.
    const h = harness({ oldest: 2, newest: 2 });
    h.hello('c', 1);
    h.cc.frame('c', { t: 'invoke', opId: 'a', op: 'kv.put', args: {}, level: 'weak' });
    expect(h.frames('c').map((f) => f.t)).toEqual(['error', 'error']);
    expect(h.frames('c')[1]).toMatchObject({ code: 'out-of-order' });
  });

  it('refuse a hello whose newest version is below its version', () => {
    const f = harness().hello('c', 3, 2);
    expect(f).toMatchObject({ t: 'error', code: 'version' });
    expect((f as { message: string }).message).toMatch(/newest version \(2\) is below its version/);
  });

  it('hold a frame kind back from connections older than the version that brought it', () => {
    // Planted: `members` frames as if version 2 brought them.
    const h = harness({ oldest: 1, newest: 2 }, new Map([['members', 2]]));
    h.hello('old', 1);
    h.hello('new', 1, 2);
    h.members.now = [...h.members.now, { id: 1, url: 'ws://b:7100/client' }];
    h.cc.afterTurn();
    expect(h.frames('old').map((f) => f.t)).toEqual(['welcome']);
    expect(h.frames('new').map((f) => f.t)).toEqual(['welcome', 'members']);
  });

  it('negotiate as a pure rule', () => {
    expect(negotiateClientVersion({ oldest: 1, newest: 4 }, { version: 2, newest: 3 })).toEqual({
      ok: true,
      version: 3,
    });
    expect(clientFrameAllowed(1, 'members', new Map([['members', 2]]))).toBe(false);
    expect(clientFrameAllowed(2, 'members', new Map([['members', 2]]))).toBe(true);
    expect(clientFrameAllowed(1, 'welcome', new Map([['members', 2]]))).toBe(true);
    // A build that speaks one version says it as every earlier build did, `version` alone.
    expect(helloVersionFields({ oldest: 1, newest: 1 })).toEqual({ version: 1 });
    expect(helloVersionFields({ oldest: 1, newest: 2 })).toEqual({ version: 1, newest: 2 });
  });
});
