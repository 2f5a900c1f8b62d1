import type { AddressInfo } from 'node:net';
import {
  clusterVersion,
  decodePeerFrame,
  encodeFrame,
  linkVersion,
  SPOKEN_PEER_VERSIONS,
  versionAllows,
  type PeerFrame,
  type PeerVersions,
} from '@creek/protocol';
import { pino, type Logger } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import type { PeerMessage } from '@creek/replica/host/peer-message.js';
import { ConnectionGuard } from '../../src/node/connection-guard.js';
import { edgeLimits } from '../../src/node/edge-limits.js';
import { acceptorProof, dialerProof, newNonce, proofMatches } from '../../src/node/peer-auth.js';
import {
  authFrame,
  challengeFrame,
  checkAuth,
  readChallenge,
  welcomeFrame,
  welcomeProves,
} from '../../src/node/peer-handshake.js';
import { PeerMesh } from '../../src/node/peer-mesh.js';
import { clientVersionsFromEnv, peerVersionsFromEnv } from '../../src/node/peer-versions-env.js';
import { within } from './cluster-harness.js';

/**
 * Links between replicas that speak different ranges of peer protocol versions: each runs at the
 * newest version both speak, one without a common version is refused on both sides with a log
 * line naming both ranges, a build of version 3 (which knew no ranges) still links, the cluster
 * version is the lowest newest version of the members and never falls, and the gate of new
 * message kinds holds back what a link's version does not allow.
 */
const SECRET = 'a-secret-of-sixteen-chars';
const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup.splice(0)) c();
});

/** A logger that keeps what it logs. */
function capturing(): { log: Logger; lines: { level: number; msg: string }[] } {
  const lines: { level: number; msg: string }[] = [];
  const log = pino(
    { level: 'info' },
    {
      write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }),
    },
  );
  return { log, lines };
}

async function until(what: string, check: () => boolean): Promise<void> {
  await within(
    (async () => {
      while (!check()) await new Promise((r) => setTimeout(r, 10));
    })(),
    10_000,
    what,
  );
}

/** A WebSocket server on a free port; its URL. */
async function server(): Promise<{ wss: WebSocketServer; url: string }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((r) => wss.once('listening', r));
  cleanup.push(() => wss.close());
  return { wss, url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}` };
}

interface Node {
  mesh: PeerMesh;
  lines: { level: number; msg: string }[];
  heard: PeerMessage[];
}

/**
 * Replicas 0..n-1 in one process, replica i speaking `speaks[i]`, each listening on its own server
 * and dialing the others.
 */
async function cluster(
  speaks: readonly PeerVersions[],
  since?: ReadonlyMap<string, number>,
): Promise<Node[]> {
  const servers = await Promise.all(speaks.map(() => server()));
  const peers = servers.map((s, id) => ({ id, url: s.url }));
  return speaks.map((v, id) => {
    const { log, lines } = capturing();
    const heard: PeerMessage[] = [];
    const guard = new ConnectionGuard(edgeLimits({}), log);
    const mesh = new PeerMesh(id, peers, SECRET, (_, m) => void heard.push(m), log, guard, null, {
      speaks: v,
      ...(since === undefined ? {} : { since }),
    });
    mesh.attach(servers[id]!.wss);
    mesh.start();
    cleanup.unshift(() => mesh.close());
    return { mesh, lines, heard };
  });
}

const v = (oldest: number, newest: number): PeerVersions => ({ oldest, newest });

describe('version ranges', () => {
  it('a link runs at the newest version both speak; none when they do not overlap', () => {
    expect(linkVersion(v(3, 3), v(3, 3))).toBe(3);
    expect(linkVersion(v(3, 4), v(3, 3))).toBe(3);
    expect(linkVersion(v(3, 4), v(3, 4))).toBe(4);
    expect(linkVersion(v(3, 4), v(4, 5))).toBe(4);
    expect(linkVersion(v(4, 5), v(3, 3))).toBeNull();
  });

  it('the cluster version is the lowest newest version of the members; one unheard counts as our oldest', () => {
    const heard = new Map([
      [1, v(3, 4)],
      [2, v(3, 4)],
    ]);
    expect(clusterVersion(0, v(3, 4), [0, 1, 2], heard)).toBe(4);
    expect(clusterVersion(0, v(3, 4), [0, 1, 2, 3], heard)).toBe(3);
    expect(clusterVersion(0, v(3, 3), [0, 1, 2], heard)).toBe(3);
    expect(clusterVersion(0, v(3, 4), [0, 1], new Map([[1, v(3, 3)]]))).toBe(3);
    expect(versionAllows(3, 4)).toBe(false);
    expect(versionAllows(4, 4)).toBe(true);
  });

  it('CREEK_TEST_PEER_PROTOCOL claims a range within reach, and nothing else', () => {
    expect(peerVersionsFromEnv({})).toBeNull();
    const next = SPOKEN_PEER_VERSIONS.newest + 1;
    expect(peerVersionsFromEnv({ CREEK_TEST_PEER_PROTOCOL: `3-${next}` })).toEqual(v(3, next));
    for (const bad of ['4', '4-3', '2-3', `3-${next + 2}`, 'x-y', '-1-3', '3-4-5', '3 - 4'])
      expect(() => peerVersionsFromEnv({ CREEK_TEST_PEER_PROTOCOL: bad })).toThrow(
        /CREEK_TEST_PEER_PROTOCOL \(for testing upgrades only\) must be OLDEST-NEWEST/,
      );
  });

  it('CREEK_TEST_CLIENT_PROTOCOL claims a range of client protocol versions within reach', () => {
    expect(clientVersionsFromEnv({ CREEK_TEST_PEER_PROTOCOL: '3-4' })).toBeNull();
    expect(clientVersionsFromEnv({ CREEK_TEST_CLIENT_PROTOCOL: '1-2' })).toEqual(v(1, 2));
    for (const bad of ['2', '2-1', '0-1', '1-5', 'one-two', '1-2-3'])
      expect(() => clientVersionsFromEnv({ CREEK_TEST_CLIENT_PROTOCOL: bad })).toThrow(
        /CREEK_TEST_CLIENT_PROTOCOL \(for testing upgrades only\) must be OLDEST-NEWEST with 1 <= OLDEST <= NEWEST <= 4/,
      );
  });
});

describe('links between replicas of different releases', () => {
  it('two releases in one step link at the older version until both speak the newer', async () => {
    const [a, b, c] = await cluster([v(3, 4), v(3, 4), v(3, 3)]);
    await until('all links up', () =>
      [a, b, c].every((n) => Object.values(n!.mesh.states()).every((s) => s === 'connected')),
    );
    expect(a!.mesh.protocol().links).toEqual({
      1: { version: 4, speaks: v(3, 4) },
      2: { version: 3, speaks: v(3, 3) },
    });
    expect(c!.mesh.protocol().links).toEqual({
      0: { version: 3, speaks: v(3, 4) },
      1: { version: 3, speaks: v(3, 4) },
    });
    for (const n of [a, b, c]) expect(n!.mesh.protocol().cluster).toBe(3);
    expect(a!.mesh.clusterAllows(4)).toBe(false);
  });

  it('once every member speaks the newer version, the cluster version rises', async () => {
    const nodes = await cluster([v(3, 4), v(3, 4), v(3, 4)]);
    await until('every replica heard both others', () =>
      nodes.every((n) => n.mesh.protocol().cluster === 4),
    );
    expect(nodes[0]!.mesh.clusterAllows(4)).toBe(true);
    expect(nodes[0]!.lines.map((l) => l.msg)).toContain(
      'every member speaks this peer protocol version now',
    );
  });

  it('replicas two releases apart refuse their link, and both log both ranges and what to do', async () => {
    const [a, b] = await cluster([v(3, 3), v(5, 5)]);
    const refusal = (n: Node) =>
      n.lines.find((l) => l.level === 50 && /no version in common/.test(l.msg))?.msg;
    await until(
      'both logged the refusal',
      () => refusal(a!) !== undefined && refusal(b!) !== undefined,
    );
    for (const n of [a!, b!]) {
      expect(refusal(n)).toMatch(/versions 3 and this replica|versions 5 and this replica/);
      expect(refusal(n)).toMatch(/Upgrade one release at a time/);
      expect(n.mesh.protocol().refused).toBeGreaterThan(0);
      expect(Object.values(n.mesh.states())).not.toContain('connected');
    }
    expect(refusal(a!)).toMatch(
      /replica 1 speaks peer protocol versions 5 and this replica \(0\) 3/,
    );
    expect(refusal(b!)).toMatch(
      /replica 0 speaks peer protocol versions 3 and this replica \(1\) 5/,
    );
    // Logged once per peer, not at every dial: its own refusal, and the one the peer told it of
    // (when its dial was refused), which may come a dial later.
    const refusals = (n: Node) => n.lines.filter((l) => /no version in common/.test(l.msg));
    await until('both heard the other’s refusal too', () =>
      [a!, b!].every((n) => refusals(n).length === 2),
    );
    const before = a!.lines.length;
    const refused = a!.mesh.protocol().refused;
    await until('dialed again', () => a!.mesh.protocol().refused > refused + 1);
    expect(a!.lines.slice(before).filter((l) => /no version in common/.test(l.msg))).toEqual([]);
  });

  it('a member that comes back speaking less than the cluster version is refused', async () => {
    const servers = await Promise.all([server(), server()]);
    const peers = servers.map((s, id) => ({ id, url: s.url }));
    const { log, lines } = capturing();
    const a = new PeerMesh(
      0,
      peers,
      SECRET,
      () => undefined,
      log,
      new ConnectionGuard(edgeLimits({}), log),
      null,
      {
        speaks: v(3, 4),
      },
    );
    a.attach(servers[0].wss);
    a.start();
    cleanup.unshift(() => a.close());
    const replica1 = (speaks: PeerVersions): PeerMesh => {
      const quiet = pino({ level: 'silent' });
      const m = new PeerMesh(
        1,
        peers,
        SECRET,
        () => undefined,
        quiet,
        new ConnectionGuard(edgeLimits({}), quiet),
        null,
        {
          speaks,
        },
      );
      servers[1].wss.removeAllListeners('connection');
      m.attach(servers[1].wss);
      m.start();
      cleanup.unshift(() => m.close());
      return m;
    };
    const newer = replica1(v(3, 4));
    await until('cluster version 4', () => a.protocol().cluster === 4);
    newer.close();
    for (const c of servers[1].wss.clients) c.terminate();
    replica1(v(3, 3));
    await until('the older one refused', () =>
      lines.some((l) => /below|cannot go back/.test(l.msg)),
    );
    expect(a.protocol().cluster).toBe(4);
    expect(a.states()[1]).not.toBe('connected');
    expect(lines.find((l) => /cannot go back/.test(l.msg))?.msg).toMatch(
      /replica 1 speaks peer protocol versions up to 3, and every member of this cluster already speaks 4/,
    );
  });

  it('a new message kind goes only on links whose version allows it', async () => {
    const since = new Map([['gossip.pull', 4]]);
    const [a, b, c] = await cluster([v(3, 4), v(3, 4), v(3, 3)], since);
    await until('links up', () => Object.values(a!.mesh.states()).every((s) => s === 'connected'));
    const pull: PeerMessage = { kind: 'gossip', msg: { kind: 'pull', ids: [] } };
    const gone: PeerMessage = { kind: 'gossip', msg: { kind: 'gone', ids: [] } };
    a!.mesh.sendMany(1, [pull, gone]);
    a!.mesh.sendMany(2, [pull, gone]);
    // To itself, whatever the links: a replica speaks its own newest version.
    a!.mesh.sendMany(0, [pull]);
    await until(
      'all heard',
      () => b!.heard.length === 2 && c!.heard.length === 1 && a!.heard.length === 1,
    );
    expect(b!.heard.map((m) => m.msg)).toEqual([pull.msg, gone.msg]);
    expect(c!.heard.map((m) => m.msg)).toEqual([gone.msg]);
  });
});

/**
 * A build of version 3 as it was: its challenge says `version` 3 alone, its auth has no range and
 * its proofs cover none, and its schema drops the fields it does not know.
 */
describe('a build of version 3, which knew no ranges', () => {
  it('dials a replica of this build and is welcomed at version 3', async () => {
    const { wss, url } = await server();
    const { log } = capturing();
    const peers = [
      { id: 0, url },
      { id: 1, url: 'ws://127.0.0.1:1' },
    ];
    const mesh = new PeerMesh(
      0,
      peers,
      SECRET,
      () => undefined,
      log,
      new ConnectionGuard(edgeLimits({}), log),
      null,
      {
        speaks: v(3, 4),
      },
    );
    mesh.attach(wss);
    cleanup.unshift(() => mesh.close());
    const ws = new WebSocket(`${url}/peer`);
    cleanup.push(() => ws.terminate());
    const ourNonce = newNonce();
    const welcome = await new Promise<PeerFrame>((resolve) => {
      ws.on('message', (data) => {
        const d = decodePeerFrame(data.toString());
        if (!d.ok) return;
        const f = d.frame;
        if (f.t === 'challenge') {
          // What a build of version 3 checks, and how it answers.
          expect(f.version).toBe(3);
          ws.send(
            encodeFrame({
              t: 'auth',
              from: 1,
              mac: dialerProof(SECRET, f.nonce, 1, 0),
              nonce: ourNonce,
            }),
          );
        } else resolve(f);
      });
    });
    expect(welcome.t).toBe('welcome');
    if (welcome.t !== 'welcome') return;
    expect(welcome.version).toBeUndefined();
    expect(proofMatches(acceptorProof(SECRET, ourNonce, 0, 1), welcome.mac)).toBe(true);
    expect(mesh.protocol().links[1]).toEqual({ version: null, speaks: v(3, 3) });
  });

  it('is dialed by a replica of this build, which links at version 3', async () => {
    const { wss, url } = await server();
    const proved: boolean[] = [];
    wss.on('connection', (ws) => {
      const nonce = newNonce();
      ws.send(encodeFrame({ t: 'challenge', version: 3, nonce }));
      ws.on('message', (data) => {
        const d = decodePeerFrame(data.toString());
        if (!d.ok || d.frame.t !== 'auth') return;
        const f = d.frame;
        const ok = proofMatches(dialerProof(SECRET, nonce, f.from, 1), f.mac);
        proved.push(ok);
        if (ok)
          ws.send(
            encodeFrame({ t: 'welcome', replica: 1, mac: acceptorProof(SECRET, f.nonce, 1, 0) }),
          );
      });
    });
    const { log } = capturing();
    const mine = await server();
    const mesh = new PeerMesh(
      0,
      [
        { id: 0, url: mine.url },
        { id: 1, url },
      ],
      SECRET,
      () => undefined,
      log,
      new ConnectionGuard(edgeLimits({}), log),
      null,
      { speaks: v(3, 4) },
    );
    mesh.start();
    cleanup.unshift(() => mesh.close());
    await until('connected', () => mesh.states()[1] === 'connected');
    expect(proved).toEqual([true]);
    expect(mesh.protocol()).toMatchObject({
      cluster: 3,
      links: { 1: { version: 3, speaks: v(3, 3) } },
    });
  });
});

type Frame<T extends PeerFrame['t']> = Extract<PeerFrame, { t: T }>;
interface Tamper {
  challenge?: (f: Frame<'challenge'>) => Frame<'challenge'>;
  auth?: (f: Frame<'auth'>) => Frame<'auth'>;
  welcome?: (f: Frame<'welcome'>) => Frame<'welcome'>;
}

/**
 * One handshake of dialer 0 (speaking `a`) with acceptor 1 (speaking `b`), as the mesh runs it,
 * with a network attacker changing frames in flight: the version each side's link runs at, or
 * which side refused it.
 */
function handshake(tamper: Tamper, a = v(3, 4), b = v(3, 4)): string {
  const nB = newNonce();
  const nA = newNonce();
  const challenge = (tamper.challenge ?? ((f) => f))(challengeFrame(b, nB));
  const view = readChallenge(challenge);
  const atA = linkVersion(a, view.theirs);
  if (atA === null) return 'refused by the dialer';
  const auth = (tamper.auth ?? ((f) => f))(authFrame(SECRET, 0, 1, a, challenge, view, nA));
  const checked = checkAuth(SECRET, 1, b, nB, auth);
  if (checked === null) return 'refused by the acceptor: proof';
  const atB = linkVersion(b, checked.theirs);
  if (atB === null) return 'refused by the acceptor: versions';
  const welcome = (tamper.welcome ?? ((f) => f))(
    welcomeFrame(SECRET, 1, auth, checked.ranged, atB),
  );
  if (!welcomeProves(SECRET, 0, 1, nA, view, atA, welcome)) return 'refused by the dialer: proof';
  return `dialer at ${atA}, acceptor at ${atB}`;
}

describe('a network attacker and the versions of a handshake', () => {
  it('untouched, the link runs at the newest version both speak', () => {
    expect(handshake({})).toBe('dialer at 4, acceptor at 4');
    expect(handshake({}, v(3, 4), v(3, 3))).toBe('dialer at 3, acceptor at 3');
  });

  it.each<[string, Tamper]>([
    ['strips the newest version from the challenge', { challenge: ({ newest: _, ...f }) => f }],
    ['lowers it', { challenge: (f) => ({ ...f, newest: 3 }) }],
    ['raises it', { challenge: (f) => ({ ...f, newest: 5 }) }],
    ["changes the dialer's range", { auth: (f) => ({ ...f, versions: v(3, 3) }) }],
    ["strips the dialer's range", { auth: ({ versions: _, ...f }) => f }],
  ])('%s: the acceptor refuses the proof', (_, tamper) => {
    expect(handshake(tamper)).toBe('refused by the acceptor: proof');
  });

  it.each<[string, Tamper]>([
    ["changes the welcome's version", { welcome: (f) => ({ ...f, version: 3 }) }],
    ["strips the welcome's version", { welcome: ({ version: _, ...f }) => f }],
  ])('%s: the dialer refuses the proof', (_, tamper) => {
    expect(handshake(tamper)).toBe('refused by the dialer: proof');
  });

  it('strips every range: both sides take the other for a build of version 3 and agree on 3', () => {
    // The one downgrade nothing can see, as a build of version 3 must still link: each side then
    // runs version 3, which it speaks in full, with the same proofs of the secret (peer-auth.ts).
    expect(
      handshake({ challenge: ({ newest: _, ...f }) => f, auth: ({ versions: _, ...f }) => f }),
    ).toBe('dialer at 3, acceptor at 3');
  });
});
