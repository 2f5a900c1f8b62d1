import { parseArgs } from 'node:util';
import { z } from 'zod';

/**
 * Flags every example takes. With none, an example starts its own local cluster (real replica
 * processes); with `--urls` and `--token` it uses a running one instead.
 */
export const ClusterFlagsSchema = z.object({
  urls: z
    .string()
    .transform((s) => s.split(',').filter((u) => u !== ''))
    .pipe(z.array(z.url({ protocol: /^wss?$/, message: 'must be ws:// or wss:// URLs' })).min(1))
    .optional(),
  token: z.string().optional(),
  /**
   * With `--urls`: the data directory of the cluster's dev identity provider (`creek dev`'s), whose
   * tokens sign the example's users in. Without it, the example's clients are anonymous.
   */
  identity: z.string().min(1).optional(),
  replicas: z.coerce.number().int().min(1).max(15).default(3),
  /** One-way delay added between every two replicas (ms): wide-area latency on one machine. */
  delay: z.coerce.number().min(0).max(10_000).default(0),
  /** Serve the example's web page on this port (0: any free port) instead of running the load. */
  serve: z.coerce.number().int().min(0).max(65_535).optional(),
});
export type ClusterFlags = z.infer<typeof ClusterFlagsSchema>;

const CLUSTER_OPTIONS = {
  urls: { type: 'string' },
  token: { type: 'string' },
  identity: { type: 'string' },
  replicas: { type: 'string' },
  delay: { type: 'string' },
  serve: { type: 'string' },
} as const;

/**
 * Parses `argv` into `schema` (which extends ClusterFlagsSchema): `--name value` or `--name=value`;
 * names in `booleans` take no value. Throws an Error naming each bad flag, with the usage.
 */
export function parseFlags<S extends z.ZodObject>(
  argv: readonly string[],
  schema: S,
  usage: string,
  booleans: readonly string[] = [],
): z.infer<S> {
  const options: Record<string, { type: 'string' | 'boolean' }> = { ...CLUSTER_OPTIONS };
  for (const name of Object.keys(schema.shape))
    options[name] ??= { type: booleans.includes(name) ? 'boolean' : 'string' };
  let values: Record<string, unknown>;
  try {
    // `--serve` alone means "any free port".
    const args = argv.map((a, i) =>
      a === '--serve' && !/^\d+$/.test(argv[i + 1] ?? '') ? '--serve=0' : a,
    );
    values = parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n\n${usage}`);
  }
  const parsed = schema.safeParse(values);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (i) => `--${i.path.map(String).join('.')}: ${i.message}`,
    );
    throw new Error(`${problems.join('\n')}\n\n${usage}`);
  }
  if (parsed.data.urls !== undefined && parsed.data.token === undefined)
    throw new Error(`--urls needs --token (the cluster's client token)\n\n${usage}`);
  if (parsed.data.identity !== undefined && parsed.data.urls === undefined)
    throw new Error(
      `--identity names the dev identity of a cluster given by --urls: give --urls too, or neither (the cluster the example starts has its own)\n\n${usage}`,
    );
  return parsed.data;
}
