import { spawn } from 'node:child_process';
import { readFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { StateDigest } from '@creek/replica/core/state-digest.js';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { RawClient, within } from './cluster-harness.js';
import { makeTestPki, type TestPki } from './test-ca.js';

/**
 * TLS (README, "A cluster on three hosts"): replicas serve https:// and wss:// on their one port,
 * dial their peers over wss:// and verify them against the cluster CA; clients verify the same CA.
 * The CA and certificates are made by the test itself.
 */
const BIN = fileURLToPath(new URL('../../bin/creek.js', import.meta.url));
let pki: TestPki;
let rogue: TestPki;
beforeAll(() => {
  pki = makeTestPki();
  rogue = makeTestPki('Someone else');
});

describe('a three-replica cluster over TLS', () => {
  let cluster: LocalCluster;
  beforeAll(async () => {
    cluster = await LocalCluster.start({ replicas: 3, logLevel: 'silent', tls: pki });
  }, 60_000);
  afterAll(() => cluster.stop(1_000));

  it('answers weak ops tentatively and strong ops stably, and converges', async () => {
    expect(cluster.url(0)).toMatch(/^wss:\/\//);
    const ca = readFileSync(pki.ca, 'utf8');
    const a = await RawClient.connect(cluster.url(0), cluster.token, ca);
    const b = await RawClient.connect(cluster.url(2), cluster.token, ca);
    const ops = [];
    for (let i = 0; i < 20; i++)
      ops.push(
        (i % 2 === 0 ? a : b).invoke('kv.increment', { key: 'n' }, i % 4 === 3 ? 'strong' : 'weak'),
      );
    await within(Promise.all(ops.map((o) => o.done)), 20_000, 'every op answered');
    for (const [i, o] of ops.entries()) {
      const last = o.views.frames.at(-1)!;
      if (i % 4 === 3) expect(['confirm', 'view']).toContain(last.t);
      expect(o.views.frames.some((f) => f.t === 'error')).toBe(false);
    }
    const s = await cluster.converged();
    expect(s[0]!.digest).toBe(StateDigest.of([['n', 20]]));
    a.close();
    b.close();
  });

  it('refuses a client that does not trust the cluster CA, and one speaking plain ws://', async () => {
    const untrusting = new WebSocket(cluster.url(0), { ca: readFileSync(rogue.ca, 'utf8') });
    const err = await new Promise<Error & { code?: string }>((r) => untrusting.once('error', r));
    expect(err.code).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN/);
    const plain = new WebSocket(cluster.url(0).replace('wss:', 'ws:'));
    const plainErr = await new Promise<Error>((r) => plain.once('error', r));
    expect(plainErr.message).toMatch(/socket hang up|ECONNRESET|Unexpected server response/);
  });
});

it('a replica whose peer presents a certificate from another CA refuses the link and says why', async () => {
  // Peer 1 is a wss:// server with a certificate the replica's CA did not sign.
  const server = createServer({
    cert: readFileSync(rogue.cert, 'utf8'),
    key: readFileSync(rogue.key, 'utf8'),
  });
  const wss = new WebSocketServer({ server });
  let peerConnections = 0;
  wss.on('connection', () => peerConnections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const peerPort = (server.address() as { port: number }).port;
  const dir = mkdtempSync(join(tmpdir(), 'creek-tls-'));
  const ownPort = await freePort();
  writeFileSync(join(dir, 'secret'), 'a-cluster-secret-of-some-length\n');
  const replica = spawn(
    process.execPath,
    [
      BIN,
      'start',
      '--id',
      '0',
      '--listen',
      `127.0.0.1:${ownPort}`,
      '--peers',
      `0=wss://127.0.0.1:${ownPort},1=wss://127.0.0.1:${peerPort}`,
      '--data',
      join(dir, 'data'),
      '--secret-file',
      join(dir, 'secret'),
      '--tls-cert',
      pki.cert,
      '--tls-key',
      pki.key,
      '--tls-ca',
      pki.ca,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CREEK_LOG_LEVEL: 'info' } },
  );
  let log = '';
  replica.stdout.on('data', (d: Buffer) => (log += d.toString()));
  replica.stderr.on('data', (d: Buffer) => (log += d.toString()));
  try {
    await within(
      new Promise<void>((resolve) => {
        const check = setInterval(() => {
          if (/does not trust/.test(log)) {
            clearInterval(check);
            resolve();
          }
        }, 50);
      }),
      15_000,
      'the replica to log the TLS failure',
    );
    expect(log).toMatch(
      /peer 1 at wss:\/\/127\.0\.0\.1:\d+ presented a certificate this replica does not trust/,
    );
    expect(log).toMatch(/--tls-ca must hold the CA/);
    // Logged once, not once per reconnect attempt.
    expect(log.match(/does not trust/g)).toHaveLength(1);
    expect(peerConnections).toBe(0);
  } finally {
    replica.kill('SIGKILL');
    wss.close();
    server.close();
  }
});

/** A port free on 127.0.0.1 now. */
async function freePort(): Promise<number> {
  const s = createNetServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}
