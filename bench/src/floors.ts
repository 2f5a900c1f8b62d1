/**
 * The floors of bench:peers: floor-server.ts processes, no Creek in them. `durable` parses a frame,
 * commits one SQLite row and answers (the least a weak op's answer takes on this stack); `relay`
 * commits, forwards to `durable`, and commits again when it answers before answering itself
 * (4 hops and 3 commits in sequence: the least a stable answer takes from a replica that needs
 * one other replica's durable vote); `relay3` forwards to `durable` and to a third member, answers
 * after the first answer and drops the second (the same path, with the work of a third member
 * that stores and answers every op on the same cores, as a 3-replica cluster's does). All commit
 * as a replica does with `fsync` as given.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const FLOOR_SERVER = fileURLToPath(new URL('./floor-server.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Floors {
  /** ws:// URLs: `@creek/client` connects to either as to a replica. */
  readonly durable: string;
  readonly relay: string;
  readonly relay3: string;
  /** Their SQLite files' directory (`stop` removes it). */
  readonly dir: string;
  /** Ends the processes and removes their files. */
  stop(): Promise<void>;
}

export async function startFloors(fsync: boolean): Promise<Floors> {
  const dir = mkdtempSync(join(tmpdir(), 'creek-floors-'));
  const procs: ChildProcess[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(procs.map(end));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const args = ['--dir', dir, '--fsync', fsync ? 'on' : 'off'];
    const durable = await startFloor(args, procs);
    const relay = await startFloor([...args, '--upstream', durable], procs);
    const third = await startFloor(args, procs);
    const relay3 = await startFloor([...args, '--upstream', `${durable},${third}`], procs);
    return { durable, relay, relay3, dir, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** Starts one floor server; its URL once it prints `port N`. */
async function startFloor(args: string[], procs: ChildProcess[]): Promise<string> {
  const proc = spawn(
    process.execPath,
    ['--conditions=creek-source', '--import', 'tsx', FLOOR_SERVER, ...args],
    // stdin stays open: a floor server exits when it closes (its parent went away).
    { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  procs.push(proc);
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-2000);
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('did not start in 10 s')), 10_000);
    proc.stdout!.on('data', (d: Buffer) => {
      const m = /port (\d+)/.exec(d.toString());
      if (m === null) return;
      clearTimeout(timer);
      resolve(Number(m[1]));
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with status ${code ?? 'none'}`));
    });
  }).catch((e: unknown) => {
    throw new Error(
      `floor server (${args.join(' ')}): ${e instanceof Error ? e.message : String(e)}${stderr === '' ? '' : `\n${stderr}`}`,
    );
  });
  return `ws://127.0.0.1:${port}`;
}

/** Ends a floor server: its stdin closes, then SIGKILL if it is still there after 2 s. */
function end(proc: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    const kill = setTimeout(() => proc.kill('SIGKILL'), 2000);
    proc.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    proc.stdin!.end();
  });
}
