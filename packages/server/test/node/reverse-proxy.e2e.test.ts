import { spawn, type ChildProcess } from 'node:child_process';
import {
  accessSync,
  constants,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { connect, type CreekClient } from '@creek/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { markedBlock } from './doc-blocks.js';
import { freePorts } from './doc-cluster.js';
import { makeTestPki, type TestPki } from './test-ca.js';

/**
 * docs/operations.md's nginx configuration, run: the page's block is written into an nginx that
 * runs as the current user (its own prefix, pid and logs in a temporary folder, a port above
 * 1024), in front of a 3-replica LocalCluster, with a certificate from a test CA. The only changes
 * to the block: the ports (443 and 7100–7102) and the certificate's paths. A client given the
 * three per-replica URLs (wss://, through the proxy, trusting the CA) runs weak and strong ops and
 * fails over when its replica dies; a client given the round-robin URL alone does too.
 *
 * Without nginx the test is skipped with the reason, except in CI (`CI` set), where a missing
 * nginx fails it: .ci/run installs Debian's.
 */
const PAGE = 'docs/operations.md';
const nginx = findNginx();
const inCi = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';

describe.runIf(nginx === null && inCi)('the reverse proxy test in CI', () => {
  it('needs nginx, which .ci/run installs (apt-get install nginx)', () => {
    throw new Error('nginx is not installed: CI must run the reverse proxy test');
  });
});

const title = `${PAGE}: nginx in front of three replicas`;
if (nginx === null && !inCi)
  console.warn(`${title}: skipped, nginx is not installed (apt-get install nginx runs it)`);

describe.skipIf(nginx === null)(
  nginx === null ? `${title} (skipped: nginx is not installed; apt-get install nginx)` : title,
  () => {
    let pki: TestPki;
    let cluster: LocalCluster;
    let proxy: ChildProcess;
    let proxyLog = '';
    let port: number;
    let work: string;
    let ca: string;
    const clients: CreekClient[] = [];

    beforeAll(async () => {
      pki = makeTestPki('Creek proxy test CA');
      ca = readFileSync(pki.ca, 'utf8');
      cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
      [port] = (await freePorts(1)) as [number];
      work = mkdtempSync(join(tmpdir(), 'creek-nginx-'));
      writeFileSync(join(work, 'creek.conf'), proxyConfig(cluster, port, pki));
      writeFileSync(join(work, 'nginx.conf'), mainConfig(work));
      for (const d of ['logs', 'temp']) mkdirSync(join(work, d));
      // `-e`: the error log from the start, before the configuration names one (no /var/log).
      proxy = spawn(
        nginx!,
        ['-p', work, '-c', join(work, 'nginx.conf'), '-e', join(work, 'logs', 'error.log')],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      proxy.stdout!.on('data', (d: Buffer) => (proxyLog += d.toString()));
      proxy.stderr!.on('data', (d: Buffer) => (proxyLog += d.toString()));
      await untilProxyServes(port, () => proxyLog);
    }, 90_000);

    afterAll(async () => {
      for (const c of clients) c.close();
      if (proxy !== undefined && proxy.exitCode === null) {
        const exited = new Promise((r) => proxy.once('exit', r));
        proxy.kill('SIGQUIT');
        await exited;
      }
      await cluster?.stop(1_000);
      if (work !== undefined) rmSync(work, { recursive: true, force: true });
      if (pki !== undefined) rmSync(pki.dir, { recursive: true, force: true });
    });

    const client = (paths: string[]): CreekClient => {
      const c = connect({
        urls: paths.map((p) => `wss://127.0.0.1:${port}${p}`),
        token: cluster.token,
        tls: { ca },
        connectTimeoutMs: 20_000,
        // The replicas' own addresses are behind the proxy: the client keeps to its URLs.
        discover: false,
        nearest: false,
      });
      clients.push(c);
      return c;
    };

    it('serves weak and strong ops on each replica’s URL, over TLS the proxy ends', async () => {
      const paths = ['/r0/client', '/r1/client', '/r2/client'];
      for (const [i, path] of paths.entries()) {
        const c = client([path]);
        // A weak op's tentative answer, and a strong op's stable one.
        expect(await c.invokeWeak('kv.put', { key: `via-r${i}`, value: i })).toBeNull();
        expect(await c.invokeStrong('kv.increment', { key: 'through-proxy', by: 1 })).toBe(i + 1);
        // Each path reaches its own replica.
        expect(c.replica()).toBe(i);
        c.close();
      }
      const c = client(paths);
      expect(await c.invokeStrong('kv.get', { key: 'through-proxy' })).toBe(3);
      const both = c.invoke('kv.put', { key: 'two-views', value: 'x' });
      const views: string[] = [];
      both.setCallbacks({
        onUpdate: (_, v) => views.push(v.level),
        onFinal: (_, v) => views.push(v.level),
      });
      await both;
      expect(views.at(-1)).toBe('strong');
      // A client trusting no such CA is refused by the proxy's certificate, not let through.
      const stranger = connect({
        urls: [`wss://127.0.0.1:${port}/r0/client`],
        token: cluster.token,
        connectTimeoutMs: 3_000,
      });
      await expect(stranger.invokeWeak('kv.get', { key: 'x' })).rejects.toMatchObject({
        code: 'unavailable',
        message: expect.stringMatching(/certificate/),
      });
      stranger.close();
    });

    it('leaves the replicas’ HTTP endpoints off the public side', async () => {
      const r = await new Promise<number>((resolve, reject) => {
        // Node's fetch cannot trust a CA per call: a bare https request does.
        void import('node:https').then(({ get }) =>
          get(`https://127.0.0.1:${port}/status`, { ca }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          }).on('error', reject),
        );
      });
      expect(r).toBe(404);
    });

    it('needs no sticky sessions: a session moves to another replica when its own dies', async () => {
      // Per-replica URLs: the client moves to the next one.
      const perReplica = client(['/r0/client', '/r1/client', '/r2/client']);
      expect(await perReplica.invokeStrong('kv.put', { key: 'moved', value: 1 })).toBeNull();
      // The round-robin URL alone: the balancer picks a replica at each connection.
      const balanced = client(['/client']);
      expect(await balanced.invokeStrong('kv.put', { key: 'balanced', value: 1 })).toBeNull();
      const victim = balanced.replica()!;
      expect(victim).not.toBeNull();
      await cluster.killed(victim);
      // Both go on, each op applied once, and read what they wrote before the death.
      expect(await balanced.invokeStrong('kv.increment', { key: 'balanced', by: 1 })).toBe(2);
      expect(balanced.replica()).not.toBe(victim);
      expect(await perReplica.invokeStrong('kv.increment', { key: 'moved', by: 1 })).toBe(2);
      expect(await perReplica.invokeStrong('kv.get', { key: 'balanced' })).toBe(2);
    });
  },
);

/** The page's block, with this test's ports and certificate in place of the documented ones. */
function proxyConfig(cluster: LocalCluster, port: number, pki: TestPki): string {
  const block = markedBlock(PAGE, 'nginx proxy');
  expect(block.lang).toBe('nginx');
  let text = block.text;
  const swap = (from: string, to: string): void => {
    expect(text, `${block.where} no longer says ${from}: update this test`).toContain(from);
    text = text.replaceAll(from, to);
  };
  swap('listen 443 ssl;', `listen 127.0.0.1:${port} ssl;`);
  for (const i of [0, 1, 2]) swap(`127.0.0.1:${7100 + i};`, `127.0.0.1:${cluster.port(i)};`);
  swap('/etc/creek/proxy.pem;', `${pki.cert};`);
  swap('/etc/creek/proxy.key;', `${pki.key};`);
  return text;
}

/**
 * What a distribution's nginx.conf holds around a conf.d file, for an nginx of the current user:
 * everything under `dir`, in the foreground.
 */
function mainConfig(dir: string): string {
  const temp = (name: string): string => `${name}_temp_path ${join(dir, 'temp', name)};`;
  return `daemon off;
worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'logs', 'error.log')} warn;
events { worker_connections 256; }
http {
    access_log ${join(dir, 'logs', 'access.log')};
    ${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(temp).join('\n    ')}
    include ${join(dir, 'creek.conf')};
}
`;
}

/** Resolves once the proxy accepts TLS connections on `port`; throws with its log if it exits. */
async function untilProxyServes(port: number, log: () => string): Promise<void> {
  const { connect: tlsConnect } = await import('node:tls');
  const deadline = Date.now() + 30_000;
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const s = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
        s.end();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (up) return;
    if (Date.now() > deadline) throw new Error(`nginx did not serve within 30 s:\n${log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** nginx on the PATH, or where Debian puts it (/usr/sbin is not on every user's PATH); else null. */
function findNginx(): string | null {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin'];
  for (const d of dirs.filter((x) => x !== '')) {
    try {
      accessSync(join(d, 'nginx'), constants.X_OK);
      return join(d, 'nginx');
    } catch {
      // not here
    }
  }
  return null;
}
