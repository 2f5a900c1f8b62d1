import { parseArgs } from 'node:util';
import { z } from 'zod';
import { PLANTED_BUG_NAMES, PLANTED_BUGS, type PlantedBug } from './planted-bugs.js';
import {
  FAULT_MODES,
  runSimulation,
  STORAGE_FAULTS,
  type FaultMode,
  type SimResult,
  type StorageFault,
} from './simulation.js';
import { parseStorageFaults } from './storage-faults.js';

/**
 * `npm run sim:soak -- --minutes N [--first S | --from HEX] [--replicas R] [--faults F] [--storage-faults LIST] [--plant BUG]`
 *
 * A time-boxed sweep of new seeds, the way TigerBeetle's VOPR runs: the fixed seeds of the test
 * suite are regression tests, and this explores seeds nobody ran before. It runs seeds S, S+1, …
 * until N minutes have passed, each under one configuration of a rotation (3 and 5 replicas with
 * every fault, membership changes, crashes with live queries, a lagging replica cut off, strong
 * reads by quorum, the SMR baseline, the SDK's client sessions handing context tokens on), prints
 * progress every 15 s and a summary line, and for each failure the exact command that replays
 * it. `--from HEX` derives the first seed from a commit id (CI passes its HEAD), so every commit
 * explores a range of its own, printed at the start, and a failure found there replays anywhere.
 * `--replicas` or `--faults` pins the rotation to one configuration; `--storage-faults` adds storage
 * faults to every seed (SimConfig.storageFaults; they strike with crashes); `--plant` runs with a
 * planted bug (planted-bugs.ts), to see a sweep catch one. Exits 1 if any seed failed.
 */

/** One configuration of the rotation. */
interface Shape {
  readonly replicas: number;
  readonly faults: FaultMode;
  readonly liveQueries: boolean;
  /** Strong reads by quorum (SimConfig.quorumReads). */
  readonly quorumReads?: boolean;
  /** The SMR baseline as the runtime runs it (SimConfig.smr). */
  readonly smr?: boolean;
  /** The SDK's own client sessions, handing context tokens on (SimConfig.clients, contexts). */
  readonly sdkContexts?: boolean;
  /** With sdkContexts: the sessions also share a context (SimConfig.sharedContexts). */
  readonly sharedContexts?: boolean;
}

const ROTATION: readonly Shape[] = [
  { replicas: 3, faults: 'all', liveQueries: false },
  { replicas: 5, faults: 'all', liveQueries: false },
  { replicas: 3, faults: 'reconfig', liveQueries: false },
  { replicas: 3, faults: 'crash', liveQueries: true },
  { replicas: 3, faults: 'all', liveQueries: true },
  { replicas: 3, faults: 'lag-cut', liveQueries: false },
  { replicas: 5, faults: 'all', liveQueries: false, quorumReads: true },
  { replicas: 3, faults: 'reconfig', liveQueries: false, quorumReads: true },
  { replicas: 3, faults: 'all', liveQueries: false, smr: true },
  { replicas: 3, faults: 'all', liveQueries: false, sdkContexts: true },
  { replicas: 3, faults: 'lag', liveQueries: false, sdkContexts: true, sharedContexts: true },
];

/** Seeds below this are the suite's and the hand sweeps' (1–100,000); a derived range starts above. */
const DERIVED_BASE = 1_000_000;

const FlagsSchema = z
  .object({
    minutes: z.coerce
      .number()
      .positive()
      .max(24 * 60),
    first: z.coerce.number().int().nonnegative().optional(),
    from: z
      .string()
      .regex(/^[0-9a-f]{7,64}$/i, 'a commit id (hex)')
      .optional(),
    replicas: z.coerce.number().int().min(1).max(15).optional(),
    faults: z.enum(FAULT_MODES as unknown as [FaultMode, ...FaultMode[]]).optional(),
    plant: z.enum(PLANTED_BUG_NAMES as [PlantedBug, ...PlantedBug[]]).optional(),
    storageFaults: z
      .string()
      .transform((text, ctx): StorageFault[] => {
        const list = parseStorageFaults(text);
        if (typeof list !== 'string') return list;
        ctx.addIssue({ code: 'custom', message: list });
        return z.NEVER;
      })
      .optional(),
  })
  .refine((f) => f.first === undefined || f.from === undefined, {
    message: '--first and --from name the first seed two ways: give one',
  });

type Flags = z.infer<typeof FlagsSchema>;

function fail(message: string): never {
  console.error(`sim:soak: ${message}`);
  process.exit(2);
}

function parse(argv: string[]): Flags {
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        minutes: { type: 'string' },
        first: { type: 'string' },
        from: { type: 'string' },
        replicas: { type: 'string' },
        faults: { type: 'string' },
        plant: { type: 'string' },
        'storage-faults': { type: 'string' },
        help: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    fail(`${(err as Error).message} (try --help)`);
  }
  if (values.help === true) {
    console.log(
      `usage: npm run sim:soak -- --minutes N [--first S | --from HEX] [--replicas R] [--faults ${FAULT_MODES.join('|')}] [--storage-faults ${STORAGE_FAULTS.join(',')}|all] [--plant ${PLANTED_BUG_NAMES.join('|')}]`,
    );
    console.log(
      '  runs new seeds from S (or from one derived from the commit id HEX) until N minutes pass, rotating through configurations; prints the replay command of each failure',
    );
    process.exit(0);
  }
  if (values.minutes === undefined) fail('--minutes N is required (try --help)');
  const { 'storage-faults': storageFaults, ...rest } = values;
  const parsed = FlagsSchema.safeParse({ ...rest, storageFaults });
  if (!parsed.success)
    fail(
      parsed.error.issues
        .map((i) =>
          i.path.length > 0
            ? `--${i.path.join('.').replace('storageFaults', 'storage-faults')}: ${i.message}`
            : i.message,
        )
        .join('; '),
    );
  return parsed.data;
}

/** The first seed: given, derived from a commit id (31 bits of it above the fixed seeds), or 1. */
function firstSeed(flags: { first?: number; from?: string }): number {
  if (flags.first !== undefined) return flags.first;
  if (flags.from !== undefined) return DERIVED_BASE + (parseInt(flags.from.slice(0, 8), 16) >>> 1);
  return 1;
}

/** The configuration seed `seed` runs under. */
function shapeOf(seed: number, pin: { replicas?: number; faults?: FaultMode }): Shape {
  const s = ROTATION[seed % ROTATION.length]!;
  // Pinned, a seed runs the plain configuration; else every setting of its rotation entry.
  if (pin.replicas !== undefined || pin.faults !== undefined)
    return {
      replicas: pin.replicas ?? s.replicas,
      faults: pin.faults ?? s.faults,
      liveQueries: false,
    };
  return s;
}

/** The command that replays one seed of the sweep. */
function replayCommand(
  seed: number,
  shape: Shape,
  storage: readonly StorageFault[] | undefined,
  plant: PlantedBug | undefined,
): string {
  return `npm run sim -- --seed ${seed} --replicas ${shape.replicas} --faults ${shape.faults}${storage === undefined ? '' : ` --storage-faults ${storage.join(',')}`}${shape.liveQueries ? ' --live-queries' : ''}${shape.quorumReads === true ? ' --quorum-reads on' : ''}${shape.smr === true ? ' --smr' : ''}${shape.sdkContexts === true ? ' --clients sdk --contexts' : ''}${shape.sharedContexts === true ? ' --shared-contexts' : ''}${plant === undefined ? '' : ` --plant ${plant}`} --verbose`;
}

function main(): void {
  const flags = parse(process.argv.slice(2));
  const first = firstSeed(flags);
  const budgetMs = flags.minutes * 60_000;
  const started = Date.now();
  let lastProgress = started;
  let seed = first;
  let passed = 0;
  const failures: string[] = [];
  console.log(
    `sim:soak: seeds from ${first}${flags.from === undefined ? '' : ` (derived from ${flags.from.slice(0, 12)})`} for ${flags.minutes} min${flags.storageFaults === undefined ? '' : `, storage faults: ${flags.storageFaults.join(',')}`}${flags.plant === undefined ? '' : `, bug planted: ${flags.plant}`}, ${flags.replicas === undefined && flags.faults === undefined ? `rotating through ${ROTATION.map((s) => `${s.replicas}/${s.faults}${s.liveQueries ? '+live' : ''}${s.quorumReads === true ? '+quorum-reads' : ''}${s.smr === true ? '+smr' : ''}${s.sdkContexts === true ? '+sdk-contexts' : ''}${s.sharedContexts === true ? '+shared' : ''}`).join(', ')}` : 'one configuration'}`,
  );
  while (Date.now() - started < budgetMs) {
    const shape = shapeOf(seed, flags);
    let result: SimResult | null = null;
    let crash: string | null = null;
    try {
      result = runSimulation({
        seed,
        replicas: shape.replicas,
        faults: shape.faults,
        ...(shape.liveQueries ? { liveQueries: true } : {}),
        ...(shape.quorumReads === true ? { quorumReads: true } : {}),
        ...(shape.smr === true ? { smr: true } : {}),
        ...(shape.sdkContexts === true ? { clients: 'sdk' as const, contexts: true } : {}),
        ...(shape.sharedContexts === true ? { sharedContexts: true } : {}),
        ...(flags.storageFaults === undefined ? {} : { storageFaults: flags.storageFaults }),
        ...(flags.plant === undefined ? {} : PLANTED_BUGS[flags.plant].config),
      });
    } catch (err) {
      crash = (err as Error).stack ?? String(err);
    }
    if (result?.ok === true) passed++;
    else {
      const why = crash ?? result!.violations.slice(0, 3).join('; ');
      failures.push(
        `seed ${seed}: ${why.split('\n')[0]}\n  replay: ${replayCommand(seed, shape, flags.storageFaults, flags.plant)}`,
      );
      console.log(`seed ${seed} (${shape.replicas} replicas, faults ${shape.faults}): FAILED`);
      console.log(`  ${crash ?? result!.violations.slice(0, 5).join('\n  ')}`);
      console.log(`  replay: ${replayCommand(seed, shape, flags.storageFaults, flags.plant)}`);
    }
    seed++;
    if (Date.now() - lastProgress >= 15_000) {
      lastProgress = Date.now();
      console.log(
        `... ${seed - first} seeds in ${((lastProgress - started) / 1000).toFixed(0)} s, ${failures.length} failed (next: ${seed})`,
      );
    }
  }
  const ran = seed - first;
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  console.log(
    `sim:soak: ${ran} seeds (${first}–${seed - 1}), ${passed} passed, ${failures.length} failed in ${secs} s`,
  );
  for (const f of failures) console.log(f);
  process.exit(failures.length === 0 ? 0 : 1);
}

main();
