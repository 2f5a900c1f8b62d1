import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import type { PeerAddress } from './peer-mesh.js';

/** `creek start` flags, validated: each message names the bad setting and says what is expected. */
export const StartFlagsSchema = z.object({
  id: z.coerce
    .number({ error: "--id must be this replica's number (0-255)" })
    .int('--id must be a whole number')
    .min(0, '--id must be 0-255')
    .max(255, '--id must be 0-255'),
  listen: z
    .string({ error: '--listen is required: host:port, e.g. 127.0.0.1:7100' })
    .regex(/^[^:]+:\d+$/, '--listen must be host:port, e.g. 127.0.0.1:7100'),
  peers: z
    .string({
      error:
        '--peers is required: every replica as id=ws://host:port, comma-separated, this one included',
    })
    .min(
      1,
      '--peers is required: every replica as id=ws://host:port, comma-separated, this one included',
    )
    .transform((s, ctx): PeerAddress[] => {
      const out: PeerAddress[] = [];
      for (const part of s.split(',')) {
        const m = /^(\d+)=(wss?:\/\/[^\s,]+)$/.exec(part.trim());
        if (m === null) {
          ctx.addIssue({
            code: 'custom',
            message: `--peers entry '${part}' must look like 2=ws://10.0.0.3:7100`,
          });
          return z.NEVER;
        }
        out.push({ id: Number(m[1]), url: m[2]!.replace(/\/$/, '') });
      }
      return out;
    }),
  data: z
    .string({ error: '--data is required: the directory of this replica' })
    .min(1, '--data is required: the directory of this replica'),
  app: z.string().optional(),
  'secret-file': z
    .string({
      error:
        '--secret-file is required: a file holding the cluster secret (at least 16 characters)',
    })
    .min(1, '--secret-file is required: a file holding the cluster secret'),
  'token-file': z.string().optional(),
  'admin-token-file': z.string().optional(),
  'monitor-token-file': z.string().optional(),
  'cluster-id': z.string().optional(),
  'tls-cert': z.string().optional(),
  'tls-key': z.string().optional(),
  'tls-ca': z.string().optional(),
  fsync: z.boolean().default(false),
  'checkpoint-every': z.coerce
    .number({ error: '--checkpoint-every must be a number of ops' })
    .int('--checkpoint-every must be a whole number')
    .min(0, '--checkpoint-every must be 0 (never) or more')
    .optional(),
});
export type StartFlags = z.infer<typeof StartFlagsSchema>;

/** `--name value` and `--flag` pairs; boolean flags take no value. */
export function parseFlags(
  argv: readonly string[],
  booleans: readonly string[],
): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--'))
      throw new Error(`unexpected argument '${a}' (flags look like --name value)`);
    const [name, inline] = a.slice(2).split('=', 2) as [string, string | undefined];
    if (booleans.includes(name)) out[name] = inline === undefined ? true : inline !== 'false';
    else if (inline !== undefined) out[name] = inline;
    else {
      const v = argv[++i];
      if (v === undefined || v.startsWith('--')) throw new Error(`--${name} needs a value`);
      out[name] = v;
    }
  }
  return out;
}

export function readSecretFile(path: string, what: string): string {
  if (!existsSync(path)) throw new Error(`${what} file '${path}' does not exist`);
  const s = readFileSync(path, 'utf8').trim();
  if (s.length < 16) throw new Error(`${what} in '${path}' is shorter than 16 characters`);
  return s;
}

/** The TLS files of `creek start`, read as PEM: cert and key together, the CA optional. */
export function readTls(
  f: Pick<StartFlags, 'tls-cert' | 'tls-key' | 'tls-ca'>,
): { cert: string; key: string; ca: string | null } | null {
  const cert = f['tls-cert'];
  const key = f['tls-key'];
  if (cert === undefined && key === undefined) {
    if (f['tls-ca'] !== undefined)
      throw new Error('--tls-ca needs --tls-cert and --tls-key: a replica serves TLS to use it');
    return null;
  }
  if (cert === undefined || key === undefined)
    throw new Error('--tls-cert and --tls-key go together: the certificate and its private key');
  const pem = (path: string, flag: string): string => {
    if (!existsSync(path)) throw new Error(`${flag} '${path}' does not exist`);
    const text = readFileSync(path, 'utf8');
    if (!text.includes('-----BEGIN '))
      throw new Error(`${flag} '${path}' is not PEM (a file starting with -----BEGIN …)`);
    return text;
  };
  return {
    cert: pem(cert, '--tls-cert'),
    key: pem(key, '--tls-key'),
    ca: f['tls-ca'] === undefined ? null : pem(f['tls-ca'], '--tls-ca'),
  };
}

export function formatIssues(error: z.ZodError): string {
  return error.issues
    .map((i) =>
      i.path.length > 0 && !i.message.startsWith('--')
        ? `--${i.path.join('.')}: ${i.message}`
        : i.message,
    )
    .join('\n');
}
