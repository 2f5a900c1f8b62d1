import { describe, expect, it } from 'vitest';
import { runSimulation } from '../../src/sim/simulation.js';
import { runSimScript, type ScriptRun } from './run-script.js';

/** `npm run sim` as a user runs it: its exit status, stdout and stderr. */
const sim = (args: string[]): Promise<ScriptRun> => runSimScript('cli.ts', args, 60_000);

describe('npm run sim', () => {
  it('--json prints one JSON object per seed, with the committed order a replay must show', async () => {
    const r = await sim(['--seeds', '2', '--first', '5', '--json']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    const [first] = lines.map(
      (l) =>
        JSON.parse(l) as {
          seed: number;
          ok: boolean;
          faults: string;
          committedOrder: string[];
          stats: { committed: number };
        },
    );
    expect(first).toMatchObject({ seed: 5, ok: true, faults: 'all' });
    expect(first!.committedOrder.length).toBe(first!.stats.committed);
    for (const id of first!.committedOrder) expect(id).toMatch(/^r\d+#\d+$/);
    // The same order as the simulation run here: a seed replays exactly.
    expect(first!.committedOrder).toEqual([
      ...runSimulation({ seed: 5, replicas: 3 }).committedOrder,
    ]);
    expect(r.stderr).toMatch(/sim: 2 passed, 0 failed/);
  });

  it('--jobs runs the seeds in several processes: the same output, in seed order, and the same verdict', async () => {
    const one = await sim(['--seeds', '4', '--first', '5', '--json']);
    const two = await sim(['--seeds', '4', '--first', '5', '--json', '--jobs', '2']);
    expect(two.code).toBe(0);
    expect(two.stdout).toBe(one.stdout);
    expect(
      two.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { seed: number }).seed),
    ).toEqual([5, 6, 7, 8]);
    expect(two.stderr).toMatch(/sim: 4 seeds in 2 processes[^]*sim: 4 passed, 0 failed/);
    expect(one.stderr).not.toMatch(/processes/);
    // A failing seed fails the sweep, with its replay, whichever process ran it.
    const planted = await sim([
      '--seeds',
      '3',
      '--first',
      '20',
      '--faults',
      'crash',
      '--plant',
      'send-before-durable',
      '--jobs',
      '3',
    ]);
    expect(planted.code).toBe(1);
    expect(planted.stdout).toContain(
      'replay: npm run sim -- --seed 21 --replicas 3 --faults crash --plant send-before-durable --verbose',
    );
    expect(planted.stdout).toMatch(/sim: \d passed, [1-3] failed\n$/);
    expect(planted.stdout).toMatch(/^sim: 3 seeds in 3 processes$/m);
    // --worker takes its seeds from --jobs: typed by hand, it says so and runs nothing.
    const worker = await sim(['--seeds', '2', '--worker']);
    expect(worker.code).toBe(2);
    expect(worker.stderr).toMatch(/--worker is for the processes --jobs starts/);
    for (const bad of ['0', '65', 'two']) {
      const r = await sim(['--seeds', '2', '--jobs', bad]);
      expect(r.code, bad).toBe(2);
      expect(r.stderr).toMatch(/--jobs needs a/);
    }
  });

  it('--trace tells one run on stderr: its faults, membership changes and each replica every 100 ms', async () => {
    // Seed 5438: a fourth replica added, the first removed, two replicas crash and restart.
    const r = await sim(['--seed', '5438', '--trace']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe('sim: 1 passed, 0 failed');
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    for (const event of [
      /^ +205\.9 ms {2}the operator asks: add replica 3$/,
      /decided at instance 15, members from instance 31: 0, 1, 2, 3$/,
      /the operator asks: remove replica 0$/,
      /replica 1 crashes$/,
      /replica 1 restarts$/,
      /replica 0 has its removal in force/,
    ])
      expect(
        lines.some((l) => event.test(l)),
        String(event),
      ).toBe(true);
    const status = lines.filter((l) => / \| /.test(l));
    expect(status[0]).toMatch(/^ +100\.\d ms {2}0 \w+ b\d+ d\d+ t\d+ \[0,1,2\]/);
    expect(status.some((l) => /3 follower b0 d0 t0 \[0,1,2\] rejoining rebuilding/.test(l))).toBe(
      true,
    );
    // Tracing changes nothing in the run.
    const traced: string[] = [];
    const plain = runSimulation({ seed: 5438, replicas: 3 });
    const withTrace = runSimulation({
      seed: 5438,
      replicas: 3,
      trace: { everyMs: 100, line: (l) => traced.push(l) },
    });
    expect(withTrace.committedOrder).toEqual(plain.committedOrder);
    expect(withTrace.stats).toEqual(plain.stats);
    expect(traced).toEqual(lines);
  });

  it('refuses --trace without a seed, and a trace period below 1 ms', async () => {
    const many = await sim(['--seeds', '3', '--trace']);
    expect(many.code).toBe(2);
    expect(many.stderr).toMatch(/--trace tells one run: give it --seed S/);
    const zero = await sim(['--seed', '1', '--trace-every', '0']);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toMatch(/--trace-every needs a number of simulated ms, 1 or more/);
    for (const bad of ['abc', '2.5', '-5'])
      expect((await sim(['--seed', '1', '--trace-every', bad])).stderr).toMatch(
        /--trace-every needs a non-negative integer/,
      );
    const missing = await sim(['--seed', '1', '--trace-every']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--trace-every needs a non-negative integer, got nothing/);
    // A period longer than any run is allowed: the events, and no status line.
    const long = await sim(['--seed', '1', '--trace-every', '99999999999']);
    expect(long.code).toBe(0);
    expect(long.stderr).not.toMatch(/ \| /);
  });

  it('refuses a fault mode it does not know, listing the ones it does', async () => {
    const r = await sim(['--seed', '1', '--faults', 'lagg']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /--faults must be one of none, partition, crash, all, reconfig, lag, lag-cut, got lagg/,
    );
  });

  it('refuses --contexts without the SDK clients, which alone hand context tokens on', async () => {
    for (const args of [
      ['--seed', '1', '--contexts'],
      ['--seed', '1', '--clients', 'model', '--contexts'],
    ]) {
      const r = await sim(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/--contexts hands context tokens .*: add --clients sdk/);
      expect(r.stdout).toBe('');
    }
    const shared = await sim(['--seed', '1', '--shared-contexts']);
    expect(shared.code).toBe(2);
    expect(shared.stderr).toMatch(/--shared-contexts runs ops .*: add --clients sdk/);
  });

  it('--shared-contexts runs ops in a shared context, says how many, and replays with the flag', async () => {
    const r = await sim(['--seed', '2', '--clients', 'sdk', '--shared-contexts', '--verbose']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/, (\d+) ops in the shared context \((\d+) acknowledged\)/);
    const planted = await sim(['--seed', '13', '--plant', 'weak-context-merge']);
    expect(planted.code).toBe(1);
    expect(planted.stdout).toMatch(/\(shared contexts\) /);
    expect(planted.stdout).toContain(
      'replay: npm run sim -- --seed 13 --replicas 3 --faults lag --plant weak-context-merge --verbose',
    );
  });

  it('--plant runs with a planted bug, fails, and names the flags and the page that replay it', async () => {
    const r = await sim(['--seed', '21', '--faults', 'crash', '--plant', 'send-before-durable']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/FAILED/);
    expect(r.stdout).toContain(
      'replay: npm run sim -- --seed 21 --replicas 3 --faults crash --plant send-before-durable --verbose',
    );
    expect(r.stdout).toContain('?seed=21&replicas=3&faults=crash&bug=send-before-durable');
    const reads = await sim(['--seed', '1', '--quorum-reads', 'yes']);
    expect(reads.code).toBe(2);
    expect(reads.stderr).toMatch(/--quorum-reads must be on or off, got yes/);
    const network = await sim(['--seed', '1', '--network', 'mars']);
    expect(network.code).toBe(2);
    expect(network.stderr).toMatch(/--network must be one of/);
    const typo = await sim(['--seed', '1', '--plant', 'send-before-durabel']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(
      /--plant must be one of send-before-durable, speculate-while-behind, hold-while-cut-off, install-incomplete-transfer, genesis-quorum, drop-gossiped-users, read-without-quorum, quorum-read-single-answer, skip-divergence-check, stable-claims-own-ops, ignore-context-token, answer-context-unheld, weak-context-merge, ignore-checksums, election-below-rtt, run-when-deposed, leave-only-in-force, adopt-unchained, trust-mirror-reads, overdraw, got send-before-durabel/,
    );
  });

  it('--storage-faults adds storage faults that replicas survive, and a replay names them', async () => {
    // Seed 16: a bit flips in a record of a crashed replica's disk; it rebuilds from its peers.
    const r = await sim([
      ...['--seed', '16', '--faults', 'crash', '--storage-faults', 'torn,corrupt,stale'],
      '--verbose',
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /storage faults: 0 power losses, 0 torn writes, 1 records corrupted, 0 read back stale \(1 damaged disks rebuilt from peers\)/,
    );
    // Checksums ignored (the planted bug's configuration has these storage faults), the same
    // damage is caught.
    const planted = await sim(['--seed', '16', '--plant', 'ignore-checksums']);
    expect(planted.code).toBe(1);
    expect(planted.stdout).toMatch(/\(divergence\) replica \d reported a divergence/);
    expect(planted.stdout).toContain(
      'replay: npm run sim -- --seed 16 --replicas 3 --faults crash --plant ignore-checksums --verbose',
    );
  });

  it.each([
    [
      [],
      /--storage-faults takes all or a comma-separated list of torn, corrupt, stale, power-loss, got nothing/,
    ],
    [['tron'], /--storage-faults takes all .*, got "tron"/],
    [['torn,,stale'], /--storage-faults takes all .*, got ""/],
    [['torn,all'], /--storage-faults takes all .*, got "all"/],
  ])('refuses --storage-faults %j with the faults it knows', async (value, message) => {
    const r = await sim(['--seed', '1', '--storage-faults', ...value]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it('--nondeterministic plants an op whose effects differ, which the replicas catch', async () => {
    const r = await sim(['--seed', '3', '--faults', 'none', '--nondeterministic', '--verbose']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /planted nondeterministic ops: \d+ committed, [1-9]\d* left replicas differing, caught \d+ ms after its commit/,
    );
    // Off, the replicas compare nothing, and the run fails naming the flags that replay it.
    const off = await sim(['--seed', '3', '--faults', 'none', '--plant', 'skip-divergence-check']);
    expect(off.code).toBe(1);
    expect(off.stdout).toMatch(/\(divergence\) .* knows of no divergence at the end/);
    expect(off.stdout).toContain(
      'replay: npm run sim -- --seed 3 --replicas 3 --faults none --plant skip-divergence-check --verbose',
    );
    const typo = await sim(['--seed', '3', '--nondeterminstic']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/unknown option --nondeterminstic/);
  });
});
