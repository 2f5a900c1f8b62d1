/**
 * bench:latency's child processes (the replicas and the echo server) and the temporary
 * directories they write: every child is tracked and stopped, and every directory removed, on
 * success, error, Ctrl-C and exit. One child that dies during the run ends the run, since every
 * figure after it would be wrong.
 */
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';

export interface Child {
  readonly name: string;
  readonly proc: ChildProcess;
  /** The last lines it wrote, shown when it dies or the cluster does not come up. */
  readonly tail: string[];
}

export const children: Child[] = [];
/**
 * The directories removed with the children: the cluster's data directory and the floor
 * servers' SQLite files.
 */
const dirs: string[] = [];
let stopping = false;

/** Whether shutdown() has begun: a child's exit or a failing connection is then expected. */
export const isStopping = (): boolean => stopping;

/** Removes `dir` when the run ends, however it ends. */
export function removeOnExit(dir: string): void {
  dirs.push(dir);
}

export function track(name: string, proc: ChildProcess): Child {
  const child: Child = { name, proc, tail: [] };
  const keep = (data: Buffer): void => {
    for (const line of data.toString().split('\n')) {
      if (line.trim() === '') continue;
      child.tail.push(line);
      if (child.tail.length > 20) child.tail.shift();
    }
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  proc.on('exit', (code, signal) => {
    if (stopping) return;
    console.error(`\nbench:latency: ${name} exited (${signal ?? `code ${code}`}) during the run`);
    printTail(child);
    void shutdown(1);
  });
  proc.on('error', (err) => {
    if (stopping) return;
    console.error(`\nbench:latency: could not run ${name}: ${err.message}`);
    void shutdown(1);
  });
  children.push(child);
  return child;
}

export function printTail(child: Child): void {
  if (child.tail.length === 0) return;
  console.error(`  last output of ${child.name}:`);
  for (const line of child.tail) console.error(`    ${line}`);
}

export const alive = (c: Child): boolean => c.proc.exitCode === null && c.proc.signalCode === null;

/** SIGTERM, up to 2 s to exit, then SIGKILL; removes the data directories; exits with `code`. */
export async function shutdown(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    const running = children.filter(alive);
    for (const c of running) c.proc.kill('SIGTERM');
    const deadline = Date.now() + 2000;
    while (running.some(alive) && Date.now() < deadline) await sleep(20);
    for (const c of running) if (alive(c)) c.proc.kill('SIGKILL');
    removeDataDirs();
  }
  process.exit(code);
}

function removeDataDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/**
 * The handlers that stop the children when this process ends some other way: installed once,
 * before anything starts.
 */
export function installExitHandlers(): void {
  // The last line of defence: a synchronous exit (an uncaught error, process.exit anywhere).
  process.on('exit', () => {
    for (const c of children) if (alive(c)) c.proc.kill('SIGKILL');
    removeDataDirs();
  });
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.on(signal, () => {
      if (stopping) process.exit(code); // a second Ctrl-C: the exit handler kills what is left
      console.error(`\nbench:latency: ${signal}, stopping every child process`);
      void shutdown(code);
    });
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
