import { parseArgs } from 'node:util';
import { z } from 'zod';
import { NEMESES, type NemesisKind } from './schedule.js';

export const USAGE = `npm run robustness -- [options]

Starts a cluster of real replica processes, drives SDK clients against it while a seeded nemesis
injects faults, then heals it and checks the recorded history (docs/robustness.md).

  --seed S          the first run's seed (run k uses S + k); default: a random one, printed
  --duration-s N    seconds of load and faults per run, 10 to 3600; default 60
  --runs K          how many runs, 1 to 1000; default 1
  --replicas R      replica processes, 3 or 5; default 3
  --nemesis LIST    faults, comma-separated: ${NEMESES.join(', ')}, or all; default all
  --keep            write every run's record (history, faults, replica logs), not only a failed one's
  --json            the verdicts as one JSON object on stdout (progress stays on stderr)
  --help            this text

Exit status: 0 when every run is clean, 1 when a run found a violation, 2 for a bad flag.
`;

export interface Flags {
  readonly seed: number;
  readonly durationS: number;
  readonly runs: number;
  readonly replicas: 3 | 5;
  readonly nemesis: readonly NemesisKind[];
  readonly json: boolean;
  readonly keep: boolean;
}

/** A whole number written as digits only (`1e3`, `0x10`, ` 5` are refused, not guessed at). */
const count = (name: string, lo: number, hi: number) =>
  z
    .string()
    .regex(/^\d+$/, `--${name} must be a whole number from ${lo} to ${hi}`)
    .transform(Number)
    .refine((n) => n >= lo && n <= hi, `--${name} must be a whole number from ${lo} to ${hi}`);

const FlagsSchema = z.object({
  seed: count('seed', 0, 2 ** 31 - 1).optional(),
  'duration-s': count('duration-s', 10, 3600).default(60),
  runs: count('runs', 1, 1000).default(1),
  replicas: z
    .enum(['3', '5'], { error: '--replicas must be 3 or 5' })
    .transform((r) => (r === '3' ? 3 : 5) as 3 | 5)
    .default(3),
  nemesis: z
    .string()
    .transform((s, ctx) => {
      if (s === 'all') return [...NEMESES];
      const names = s.split(',').map((n) => n.trim());
      const out: NemesisKind[] = [];
      for (const n of names) {
        if (!(NEMESES as readonly string[]).includes(n)) {
          const near = closest(n, [...NEMESES, 'all']);
          ctx.addIssue({
            code: 'custom',
            message: `--nemesis: unknown fault '${n}'${near === undefined ? '' : ` (did you mean '${near}'?)`}; faults: ${NEMESES.join(', ')}, or all`,
          });
          return z.NEVER;
        }
        if (!out.includes(n as NemesisKind)) out.push(n as NemesisKind);
      }
      return out;
    })
    .default([...NEMESES]),
  json: z.boolean().default(false),
  keep: z.boolean().default(false),
  help: z.boolean().default(false),
});

const OPTIONS = {
  seed: { type: 'string' },
  'duration-s': { type: 'string' },
  runs: { type: 'string' },
  replicas: { type: 'string' },
  nemesis: { type: 'string' },
  json: { type: 'boolean' },
  keep: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** A mistake in the call: the message says which flag and what it takes. */
export class FlagError extends Error {}

/** The flags of `argv`, or 'help'; throws a FlagError for an unknown flag or a bad value. */
export function parseFlags(argv: readonly string[], randomSeed: () => number): Flags | 'help' {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: OPTIONS,
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    const message = (err as Error).message;
    const unknown = /Unknown option '(-{1,2}[^']*)'/.exec(message);
    if (unknown !== null) {
      const near = closest(unknown[1]!.replace(/^-+/, ''), Object.keys(OPTIONS));
      throw new FlagError(
        `unknown flag ${unknown[1]}${near === undefined ? '' : ` (did you mean --${near}?)`}; see --help`,
      );
    }
    const ambiguous = /Option '(--[^']*)' argument is ambiguous/.exec(message);
    if (ambiguous !== null)
      throw new FlagError(
        `${ambiguous[1]} is followed by what looks like another flag; a value that starts with '-' is written ${ambiguous[1]}=<value>; see --help`,
      );
    throw new FlagError(`${message.split('\n')[0]}; see --help`);
  }
  const parsed = FlagsSchema.safeParse(values);
  if (!parsed.success) throw new FlagError(parsed.error.issues.map((i) => i.message).join('; '));
  const f = parsed.data;
  if (f.help) return 'help';
  return {
    seed: f.seed ?? randomSeed(),
    durationS: f['duration-s'],
    runs: f.runs,
    replicas: f.replicas,
    nemesis: f.nemesis,
    json: f.json,
    keep: f.keep,
  };
}

/** The name within two edits of `name`, if one is (a typo's likely meaning). */
function closest(name: string, names: readonly string[]): string | undefined {
  let best: { n: string; d: number } | undefined;
  for (const n of names) {
    const d = editDistance(name, n);
    if (d <= 2 && (best === undefined || d < best.d)) best = { n, d };
  }
  return best?.n;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row.push(
        Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)),
      );
    prev = row;
  }
  return prev[b.length]!;
}
