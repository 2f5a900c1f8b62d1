/**
 * bench:latency's command line: its flags, their defaults and limits, and how a bad one ends the
 * run.
 */
import { flagPairs } from '../cli-flags.js';

export interface Flags {
  replicas: number;
  ops: number;
  seconds: number;
  warmup: number;
  keys: number;
}

const USAGE = `npm run bench:latency [-- --replicas 3 --ops 2000 --seconds 5 --warmup 1 --keys 16]
  --replicas  replicas in the local cluster (default 3)
  --ops       ops per sequential measurement (default 2000)
  --seconds   measured seconds per closed-loop cell (default 5)
  --warmup    discarded warm-up seconds before every measurement (default 1)
  --keys      kv.increment key set size (default 16)`;

export function parseArgs(argv: readonly string[]): Flags {
  const flags: Flags = { replicas: 3, ops: 2000, seconds: 5, warmup: 1, keys: 16 };
  for (const [name, raw] of flagPairs(argv, USAGE, (n) => n in flags, fail)) {
    const value = Number(raw);
    const integer = name !== 'seconds' && name !== 'warmup';
    if (!Number.isFinite(value) || (integer && !Number.isInteger(value)))
      fail(`--${name} needs a ${integer ? 'whole ' : ''}number, got '${raw}'`);
    flags[name as keyof Flags] = value;
  }
  if (flags.replicas < 1 || flags.replicas > 15) fail('--replicas must be between 1 and 15');
  if (flags.ops < 10) fail('--ops must be at least 10');
  if (flags.seconds <= 0) fail('--seconds must be positive');
  if (flags.warmup < 0) fail('--warmup must not be negative');
  if (flags.keys < 1) fail('--keys must be at least 1');
  return flags;
}

/** Exit code 2, as for every usage error: nothing has started yet, so there is nothing to stop. */
function fail(message: string): never {
  console.error(`bench:latency: ${message}`);
  process.exit(2);
}
