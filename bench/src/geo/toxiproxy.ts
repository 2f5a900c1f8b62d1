/**
 * Toxiproxy (Shopify's TCP proxy that injects faults, written in Go), driven over its HTTP API with
 * `fetch`: the WAN links of `bench:geo`. Each proxy forwards one TCP listener to one upstream and
 * delays what crosses it with a latency toxic. No npm client: the API is four JSON requests, and
 * the server binary is what must be pinned.
 *
 * The binary is `toxiproxy-server` built by `go install` at a pinned version into `$(go env
 * GOPATH)/bin/server`; it is built there when missing (the Go module proxy serves it).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ports } from '../peer-servers.js';

/** The pinned release; its API is the v2 one used below. */
export const TOXIPROXY_MODULE = 'github.com/Shopify/toxiproxy/v2/cmd/server@v2.12.0';

/** Where `go install` puts the binary (`$(go env GOPATH)/bin/server`), building it if missing. */
export function ensureToxiproxy(log: (line: string) => void): string {
  const gopath = spawnSync('go', ['env', 'GOPATH'], { encoding: 'utf8' });
  if (gopath.error !== undefined || gopath.status !== 0)
    throw new Error(
      `bench:geo needs Toxiproxy, built with Go, and \`go\` is not on the PATH: install Go (https://go.dev/doc/install), or run \`go install ${TOXIPROXY_MODULE}\` where Go is and put the binary at $(go env GOPATH)/bin/server`,
    );
  const bin = join(gopath.stdout.trim(), 'bin', 'server');
  if (existsSync(bin)) return bin;
  log(`building Toxiproxy: go install ${TOXIPROXY_MODULE}`);
  const built = spawnSync('go', ['install', TOXIPROXY_MODULE], { stdio: 'inherit' });
  if (built.status !== 0 || !existsSync(bin))
    throw new Error(`go install ${TOXIPROXY_MODULE} failed (see above); ${bin} is missing`);
  return bin;
}

/** What the API answers on creating a proxy: the address it really listens on. */
const ProxyAnswer = z.object({ name: z.string(), listen: z.string() });

/** One link's delay: a latency toxic (whole ms; Toxiproxy's unit) with uniform ± jitter. */
export interface LinkDelay {
  readonly latencyMs: number;
  readonly jitterMs: number;
}

export interface Toxiproxy {
  /**
   * A proxy to `upstream` (host:port) delaying each direction as given, listening on `listen`
   * (host:port; default a fresh loopback port); resolves with its port.
   */
  proxy(
    name: string,
    upstream: string,
    delay: { readonly up: LinkDelay; readonly down: LinkDelay },
    listen?: string,
  ): Promise<number>;
  stop(): Promise<void>;
}

/** Starts a Toxiproxy server on a free loopback port and waits until its API answers. */
export async function startToxiproxy(bin: string): Promise<Toxiproxy> {
  const [port] = await ports(1, 28_000);
  const api = `http://127.0.0.1:${port}`;
  const proc: ChildProcess = spawn(bin, ['-host', '127.0.0.1', '-port', String(port)], {
    // Its log is a line per connection: nothing a run's reader needs.
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const stop = (): Promise<void> =>
    new Promise((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
      proc.once('exit', () => resolve());
      proc.kill('SIGTERM');
    });
  const deadline = Date.now() + 20_000;
  for (;;) {
    const up = await fetch(`${api}/version`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (proc.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`Toxiproxy (${bin}) did not answer on ${api} within 20 s`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const post = async (path: string, body: unknown): Promise<unknown> => {
    const r = await fetch(`${api}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await r.text();
    if (!r.ok) throw new Error(`Toxiproxy POST ${path}: HTTP ${r.status} ${text}`);
    return JSON.parse(text) as unknown;
  };
  return {
    async proxy(name, upstream, delay, listen = '127.0.0.1:0') {
      const created = ProxyAnswer.parse(
        await post('/proxies', { name, listen, upstream, enabled: true }),
      );
      for (const [stream, d] of [
        ['upstream', delay.up],
        ['downstream', delay.down],
      ] as const) {
        if (d.latencyMs === 0 && d.jitterMs === 0) continue;
        await post(`/proxies/${name}/toxics`, {
          name: `${stream}-latency`,
          type: 'latency',
          stream,
          toxicity: 1,
          attributes: { latency: d.latencyMs, jitter: d.jitterMs },
        });
      }
      const listenPort = Number(created.listen.slice(created.listen.lastIndexOf(':') + 1));
      if (!Number.isInteger(listenPort) || listenPort <= 0)
        throw new Error(`Toxiproxy proxy ${name} listens on '${created.listen}', not a port`);
      return listenPort;
    },
    stop,
  };
}
