import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from '@creek/client';
import { afterAll, describe, expect, it } from 'vitest';
import { markedBlock, shellCommands } from './doc-blocks.js';
import { freePorts, untilReady } from './doc-cluster.js';

/**
 * docs/operations.md's single-machine recipe, run as written: its setup commands in a shell, then
 * its three `npx creek start` commands as three processes (the repository's `creek` for `npx
 * creek`, and free ports for 7100–7102, the only changes). Each replica must answer /ready, and a
 * client given the three URLs and the recipe's token runs weak and strong ops on them.
 */
const BIN = fileURLToPath(new URL('../../bin/creek.js', import.meta.url));
const PAGE = 'docs/operations.md';
const block = markedBlock(PAGE, 'one-machine recipe');
const work = mkdtempSync(join(tmpdir(), 'creek-recipe-'));
const replicas: ChildProcess[] = [];
const logs: string[] = [];

afterAll(async () => {
  await Promise.all(
    replicas.map(
      (r) =>
        new Promise<void>((resolve) => {
          if (r.exitCode !== null || r.signalCode !== null) return resolve();
          r.once('exit', () => resolve());
          r.kill('SIGKILL');
        }),
    ),
  );
  rmSync(work, { recursive: true, force: true });
});

describe(`${PAGE}: three replicas on one machine without TLS`, () => {
  it('starts as the page says, and serves weak and strong ops on the three URLs', async () => {
    expect(block.lang).toBe('sh');
    const commands = shellCommands(block);
    const starts = commands.filter((c) => c.startsWith('npx creek start '));
    expect(starts, `${block.where}: three \`npx creek start\` commands`).toHaveLength(3);
    const firstStart = commands.indexOf(starts[0]!);
    expect(commands.slice(firstStart), 'the replicas start last').toEqual(starts);

    // The setup, as one shell runs it (its `cd` holds for the replicas); `pwd` says where it ended.
    const setup = spawnSync(
      'sh',
      ['-c', ['set -e', ...commands.slice(0, firstStart), 'pwd'].join('\n')],
      {
        cwd: work,
        encoding: 'utf8',
      },
    );
    expect(setup.status, setup.stderr).toBe(0);
    const dir = setup.stdout.trim().split('\n').at(-1)!;
    expect(dir.startsWith(work)).toBe(true);

    const documented = [
      ...new Set(starts.flatMap((c) => [...c.matchAll(/127\.0\.0\.1:(\d+)/g)].map((m) => m[1]!))),
    ];
    expect(documented.sort()).toEqual(['7100', '7101', '7102']);
    const ports = await freePorts(3);
    const local = (c: string): string =>
      documented.reduce((s, p, i) => s.replaceAll(`127.0.0.1:${p}`, `127.0.0.1:${ports[i]}`), c);

    for (const [i, start] of starts.entries()) {
      expect(start, 'plain words: the test splits the command on spaces').not.toMatch(/["'$`\\]/);
      const [npx, creek, ...args] = local(start).split(/\s+/);
      expect([npx, creek]).toEqual(['npx', 'creek']);
      const child = spawn(process.execPath, [BIN, ...args], {
        cwd: dir,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, CREEK_LOG_LEVEL: 'warn' },
      });
      logs[i] = '';
      child.stdout!.on('data', (d: Buffer) => (logs[i] += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (logs[i] += d.toString()));
      replicas.push(child);
    }
    await untilReady(
      ports.map((p) => `http://127.0.0.1:${p}`),
      60_000,
      () => logs.map((l, i) => `replica ${i}:\n${l}`).join('\n'),
    );
    for (const i of [0, 1, 2]) expect(existsSync(join(dir, 'data', String(i)))).toBe(true);

    const client = connect({
      urls: ports.map((p) => `ws://127.0.0.1:${p}/client`),
      token: readFileSync(join(dir, 'client.token'), 'utf8').trim(),
    });
    try {
      expect(await client.invokeWeak('kv.put', { key: 'greeting', value: 'hello' })).toBeNull();
      expect(await client.invokeStrong('kv.increment', { key: 'visits', by: 2 })).toBe(2);
      expect(await client.invokeStrong('kv.get', { key: 'greeting' })).toBe('hello');
    } finally {
      client.close();
    }
    // A client without the recipe's token is refused.
    const stranger = connect({
      urls: [`ws://127.0.0.1:${ports[0]}/client`],
      token: 'not-the-token-at-all',
      connectTimeoutMs: 5_000,
    });
    await expect(stranger.invokeWeak('kv.get', { key: 'greeting' })).rejects.toMatchObject({
      code: 'unauthorized',
    });
    stranger.close();

    // SIGTERM: each replica drains and exits 0.
    const exits = replicas.map(
      (r) => new Promise<number | null>((resolve) => r.once('exit', (code) => resolve(code))),
    );
    for (const r of replicas) r.kill('SIGTERM');
    expect(await Promise.all(exits)).toEqual([0, 0, 0]);
  });
});
