import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { connect } from '@creek/client';
import { freeRun } from '../../src/node/local-cluster.js';

const BIN = fileURLToPath(new URL('../../bin/creek.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'creek-dev-failover-'));
let dev: ChildProcess | null = null;
afterAll(() => {
  dev?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** Polls `check` every 100 ms until it holds, or fails naming `what` after `ms`. */
async function until(what: string, check: () => boolean | Promise<boolean>, ms = 60_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The process id of `creek dev`'s replica i: its child running `creek start --id i`. */
function replicaPid(parent: number, i: number): number | null {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== parent) continue;
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const at = argv.indexOf('--id');
      if (argv.includes('start') && at >= 0 && argv[at + 1] === String(i)) return Number(entry);
    } catch {
      // the process ended while we read it
    }
  }
  return null;
}

/**
 * `creek dev` keeps the cluster up when a replica dies: a client's ops go on through failover,
 * the dead replica is restarted on its data directory and catches up, and Ctrl-C still stops
 * everything with status 0.
 */
describe('creek dev when a replica dies', () => {
  it.skipIf(process.platform !== 'linux')(
    'reports it, keeps serving, restarts it, and the replicas converge',
    async () => {
      const port = await freeRun(3, '127.0.0.1');
      dev = spawn(
        process.execPath,
        [BIN, 'dev', '--replicas', '3', '--port', String(port), '--data', 'data'],
        { cwd: dir, env: { ...process.env, CREEK_LOG_LEVEL: 'error' } },
      );
      let stdout = '';
      let stderr = '';
      dev.stdout!.on('data', (b: Buffer) => (stdout += b.toString()));
      dev.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
      const exited = new Promise<number | null>((r) => dev!.once('exit', (code) => r(code)));
      await until('creek dev to say it is ready', () => stdout.includes('Press Ctrl-C'));
      const token = /client token: (\S+)/.exec(stdout)![1]!;
      const admin = /admin token: {2}(\S+)/.exec(stdout)![1]!;
      const urls = [0, 1, 2].map((i) => `ws://127.0.0.1:${port + i}/client`);
      const http = (i: number): string => `http://127.0.0.1:${port + i}`;

      // The client starts on replica 0, the one that will die.
      const client = connect({ urls, token, WebSocket });
      let done = 0;
      let stop = false;
      const load = (async () => {
        for (let n = 0; !stop; n++) {
          await client.invokeStrong('kv.increment', { key: `k${n % 10}` });
          done++;
        }
      })();
      await until('ops answered before the kill', () => done >= 20);

      const pid = replicaPid(dev.pid!, 0);
      expect(pid, 'replica 0 is a child of creek dev').not.toBeNull();
      process.kill(pid!, 'SIGKILL');
      await until('creek dev to report the death', () =>
        stderr.includes('replica 0 exited (SIGKILL); the others keep serving'),
      );
      const before = done;
      await until('ops answered after the kill', () => done >= before + 20);
      await until('replica 0 restarted', () => stderr.includes('creek dev: replica 0 restarted'));
      await until('replica 0 ready again', async () => {
        const r = await fetch(`${http(0)}/ready`).catch(() => null);
        return r?.status === 200;
      });
      stop = true;
      await load;
      client.close();
      // Every replica, the restarted one too, ends with the same state.
      await until('the replicas to converge', async () => {
        const digests = await Promise.all(
          [0, 1, 2].map(async (i) => {
            const r = await fetch(`${http(i)}/status`, {
              headers: { authorization: `Bearer ${admin}` },
            }).catch(() => null);
            return r?.ok === true ? ((await r.json()) as { digest: string }).digest : null;
          }),
        );
        return digests[0] !== null && digests.every((d) => d === digests[0]);
      });
      expect(stderr).not.toContain('stopping');
      dev.kill('SIGINT');
      expect(await exited).toBe(0);
      dev = null;
    },
  );
});
