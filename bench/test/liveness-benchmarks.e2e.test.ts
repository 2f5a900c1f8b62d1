import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { longestStrongGaps } from '../src/open-loop-load.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Runs a benchmark's entry with `args`; its exit status and stderr (nothing is started on bad flags). */
function run(script: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', '--conditions=creek-source', `bench/src/${script}`, ...args],
      { cwd: root, timeout: 30_000 },
      (err, _stdout, stderr) =>
        resolve({ code: err === null ? 0 : ((err as { code?: number }).code ?? null), stderr }),
    );
  });
}

describe('longestStrongGaps: the liveness figure of bench:freeze and bench:faults', () => {
  it('is the longest stretch with no success, from the start, between two, and to the end', () => {
    expect(longestStrongGaps([[12, 13, 20], [], [30]], 10, 25)).toEqual([7, 15, 15]);
  });

  it('ignores successes outside the window', () => {
    expect(longestStrongGaps([[1, 2, 11, 40]], 10, 20)).toEqual([9]);
  });
});

/** floor-server's --upstream values it refuses, and what it says. */
const upstreamCases: [string, RegExp][] = [
  ['http://127.0.0.1:1', /--upstream takes one or two ws:\/\/HOST:PORT URLs/],
  ['ws://a:1,ws://b:2,ws://c:3', /--upstream takes at most two URLs/],
  ['ws://127.0.0.1', /--upstream takes one or two ws:\/\/HOST:PORT URLs/],
  ['ws://a:1,ws://a:1', /--upstream names the same server twice/],
];

describe('the liveness, viewer, bytes, transfer, peers, tail and idle benchmarks refuse bad flags before starting a cluster', () => {
  it.each([
    ['faults.ts', ['--seconds', '0'], /--seconds must be a number from 0.1 to 3600/],
    ['faults.ts', ['--strong', '2'], /--strong must be a number from 0 to 1/],
    ['faults.ts', ['--secnds', '60'], /unknown argument '--secnds'/],
    ['faults.ts', ['--rate'], /--rate needs a value/],
    ['freeze.ts', ['--target', 'leaderr'], /--target must be leader or follower/],
    ['freeze.ts', ['--freeze', 'ten'], /--freeze must be a number/],
    ['viewer-cost.ts', ['--rounds', '1.5'], /--rounds must be a whole number from 1 to 50/],
    ['viewer-cost.ts', ['--viewers', '2'], /unknown argument '--viewers'/],
    ['bytes-per-op.ts', ['--watches', '65'], /--watches must be at most 64/],
    ['bytes-per-op.ts', ['--watches', '-1'], /--watches must be a whole number ≥ 0/],
    ['bytes-per-op.ts', ['--watches', 'ten'], /--watches needs a number/],
    ['bytes-per-op.ts', ['--wathces', '3'], /unknown argument '--wathces'/],
    ['state-transfer.ts', ['--keys', '0'], /--keys must be a whole number from 1 to 5000000/],
    ['state-transfer.ts', ['--keys', '1e9'], /--keys must be a whole number from 1 to 5000000/],
    ['state-transfer.ts', ['--in-flight', 'many'], /--in-flight must be a whole number/],
    ['state-transfer.ts', ['--kyes', '10'], /unknown argument '--kyes'/],
    ['state-transfer.ts', ['--keys'], /--keys needs a value/],
    ['replace-dead.ts', ['--keys', '0'], /--keys must be a whole number from 1 to 5000000/],
    ['replace-dead.ts', ['--value-bytes', '-1'], /--value-bytes must be a whole number/],
    ['replace-dead.ts', ['--kyes', '10'], /unknown argument '--kyes'/],
    ['peers.ts', ['--fsync', 'maybe'], /--fsync must be both, on or off/],
    ['floor-server.ts', ['--dir', '/nonexistent', '--fsync', 'yes'], /--fsync must be on or off/],
    ['floor-server.ts', ['--fsnyc', 'on'], /unknown argument '--fsnyc'/],
    ['floor-server.ts', [], /--dir DIR is required/],
    ...upstreamCases.map(([upstream, message]): [string, string[], RegExp] => [
      'floor-server.ts',
      ['--dir', '/nonexistent', '--upstream', upstream],
      message,
    ]),
    ['peers.ts', ['--ops', '5'], /--ops must be a whole number from 10 to 1000000/],
    ['peers.ts', ['--outstanding', '0'], /--outstanding must be a whole number from 1 to 4096/],
    ['peers.ts', ['--opps', '10'], /unknown argument '--opps'/],
    ['peers.ts', ['--auth', 'on'], /--auth must be both or off/],
    ['peers.ts', ['--peers', 'maybe'], /--peers must be on or off/],
    [
      'peers.ts',
      ['--auth', 'off', '--peers', 'off'],
      /--auth off with --peers off measures nothing/,
    ],
    ['tail.ts', ['--ops', '99'], /--ops must be a whole number from 100 to 1000000/],
    ['tail.ts', ['--rounds', '1.5'], /--rounds must be a whole number from 1 to 50/],
    ['tail.ts', ['--ops', '1000001'], /--ops must be a whole number from 100 to 1000000/],
    ['tail.ts', ['--rounds', '51'], /--rounds must be a whole number from 1 to 50/],
    ['tail.ts', ['--fsync', 'both'], /--fsync must be on or off/],
    ['tail.ts', ['--kinds', 'weak,medium'], /--kinds takes weak, strong or weak,strong/],
    ['tail.ts', ['--rouds', '2'], /unknown argument '--rouds'/],
    ['tail.ts', ['--ops'], /--ops needs a value/],
    ['idle-cpu.ts', ['--seconds', '0'], /--seconds must be a whole number from 1 to 600/],
    ['idle-cpu.ts', ['--replicas', '8'], /--replicas must be a whole number from 1 to 7/],
    ['idle-cpu.ts', ['--rounds', 'two'], /--rounds must be a whole number from 1 to 20/],
    ['idle-cpu.ts', ['--secnds', '5'], /unknown argument '--secnds'/],
  ])('%s %j', async (script, args, message) => {
    const r = await run(script, args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});
