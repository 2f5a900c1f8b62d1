import { createHash } from 'node:crypto';
import { createServer, type Socket } from 'node:net';
import { encodeFrame, PEER_PROTOCOL_VERSION } from '@creek/protocol';
import { pino } from 'pino';
import { afterEach, expect, it } from 'vitest';
import { ConnectionGuard } from '../../src/node/connection-guard.js';
import { edgeLimits } from '../../src/node/edge-limits.js';
import { PeerMesh } from '../../src/node/peer-mesh.js';
import { within } from './cluster-harness.js';
import { frame, OP } from './raw-socket.js';

/**
 * The dialing side of the peer mesh against whatever answers on a peer URL: hostile or broken
 * frames close that connection and the replica dials again; silence (no handshake, no welcome)
 * does not hold the peer 'connecting' for good.
 */
const log = pino({ level: 'silent' });
const guard = new ConnectionGuard(edgeLimits({ dialHandshakeMs: 200, helloDeadlineMs: 300 }), log);
const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup.splice(0)) c();
});

/** A TCP server on a peer URL; `behave` gets each connection and a function answering its upgrade. */
async function answering(
  behave: (socket: Socket, accept: () => void) => void,
): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    let head = '';
    const onData = (d: Buffer): void => {
      head += d.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      const key = /sec-websocket-key: *(\S+)/i.exec(head)?.[1] ?? '';
      const accept = createHash('sha1')
        .update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
        .digest('base64');
      behave(socket, () =>
        socket.write(
          'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
            `Sec-WebSocket-Accept: ${accept}\r\n\r\n`,
        ),
      );
    };
    socket.on('data', onData);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanup.push(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  const { port } = server.address() as { port: number };
  return { url: `ws://127.0.0.1:${port}`, connections: () => connections };
}

/**
 * Replica 0 dialing peer 1 at `url`; resolves once it has dialed `n` times. `heard` gets what it
 * hands the replica from the peer.
 */
async function dialsAgain(
  url: string,
  connections: () => number,
  n = 3,
  heard: (from: number, msg: unknown) => void = () => undefined,
): Promise<PeerMesh> {
  const mesh = new PeerMesh(
    0,
    [
      { id: 0, url: 'ws://127.0.0.1:1' },
      { id: 1, url },
    ],
    'a-secret-of-sixteen-chars',
    heard,
    log,
    guard,
  );
  cleanup.unshift(() => mesh.close());
  mesh.start();
  await within(
    (async () => {
      while (connections() < n) await new Promise((r) => setTimeout(r, 20));
    })(),
    10_000,
    `${n} dials`,
  );
  return mesh;
}

const challenge = (version = PEER_PROTOCOL_VERSION): Buffer =>
  frame(OP.text, encodeFrame({ t: 'challenge', version, nonce: 'a'.repeat(64) }), {
    masked: false,
  });

it('a peer URL that never answers the upgrade is dialed again', async () => {
  const peer = await answering(() => undefined);
  const mesh = await dialsAgain(peer.url, peer.connections);
  expect(mesh.states()[1]).not.toBe('connected');
});

it('a peer URL that challenges and then never welcomes is dialed again', async () => {
  const peer = await answering((socket, accept) => {
    accept();
    socket.write(challenge());
  });
  const mesh = await dialsAgain(peer.url, peer.connections);
  expect(mesh.states()[1]).not.toBe('connected');
});

const hostile: [string, () => Buffer][] = [
  ['invalid UTF-8', () => frame(OP.text, Buffer.from([0xff, 0xfe]), { masked: false })],
  ['not JSON', () => frame(OP.text, '{"t":', { masked: false })],
  ['JSON of no peer frame', () => frame(OP.text, '{"t":"gossip","msg":1}', { masked: false })],
  ['another handshake version', () => challenge(PEER_PROTOCOL_VERSION + 1)],
  ['a masked frame (servers must not mask)', () => frame(OP.text, '{}', { masked: true })],
  ['a reserved opcode', () => frame(0xb, '', { masked: false })],
  [
    'a length past maxPayload',
    () => frame(OP.binary, Buffer.alloc(4), { masked: false, claimedLength: 2 ** 40 }),
  ],
];

it.each(hostile)(
  '%s from the peer URL ends that connection only: it is dialed again',
  async (_, bad) => {
    const peer = await answering((socket, accept) => {
      accept();
      socket.write(bad());
    });
    const mesh = await dialsAgain(peer.url, peer.connections);
    expect(mesh.states()[1]).not.toBe('connected');
  },
);

it.each([
  ['a welcome whose proof is forged', { replica: 1, mac: 'c'.repeat(64) }],
  ['a welcome from another replica id', { replica: 2, mac: 'c'.repeat(64) }],
])(
  '%s leaves the peer unconnected: nothing is sent to it, and it is dialed again',
  async (_, welcome) => {
    // An impostor on peer 1's URL, without the cluster secret: it can send a challenge, but not
    // prove the secret over the dialer's nonce in its welcome.
    const peer = await answering((socket, accept) => {
      accept();
      socket.write(challenge());
      setTimeout(
        () =>
          socket.write(
            frame(OP.text, encodeFrame({ t: 'welcome', ...welcome }), { masked: false }),
          ),
        20,
      );
    });
    const mesh = await dialsAgain(peer.url, peer.connections);
    expect(mesh.states()[1]).not.toBe('connected');
    const dropped = mesh.counters.dropped;
    mesh.send(1, { kind: 'gossip', msg: { kind: 'pull', ids: [] } } as never);
    expect(mesh.counters.dropped).toBe(dropped + 1);
    expect(mesh.counters.rejected).toBeGreaterThan(0);
  },
);

it('a peer URL that sends protocol messages without proving it is the peer is not heard', async () => {
  // The replica hears messages on a connection it dialed (a removed replica is told so there)
  // only once the answering side proved the cluster secret as that peer (its welcome).
  const heard: unknown[] = [];
  const peer = await answering((socket, accept) => {
    accept();
    socket.write(challenge());
    const paxos = { t: 'paxos', msg: { type: 'catchup', from: 0 } };
    socket.write(frame(OP.text, encodeFrame(paxos as never), { masked: false }));
    socket.write(
      frame(OP.text, encodeFrame({ t: 'batch', frames: [paxos] } as never), { masked: false }),
    );
  });
  const mesh = await dialsAgain(peer.url, peer.connections, 2, (from, msg) =>
    heard.push({ from, msg }),
  );
  expect(heard).toEqual([]);
  expect(mesh.states()[1]).not.toBe('connected');
});
