import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { z } from 'zod';

/**
 * What the commands that talk to a running replica's HTTP API share (`creek member`,
 * `creek backup`): the settings that name the replica and prove the caller may ask, and one
 * request with the bearer token and the cluster's CA, whose failures say what to check.
 */

/** `--url` as the commands validate it: a replica's http(s)://host:port. */
export const ReplicaUrlSchema = z
  .string({ error: 'must be http://host:port of a replica' })
  .regex(/^https?:\/\/[^\s/]+\/?$/, 'must be http://host:port (or https://) of a replica');

export const TLS_CA_OPTION = {
  type: 'string',
  value: 'FILE',
  path: true,
  help: 'PEM CA certificate(s) to trust for an https:// --url',
} as const;

export const URL_OPTION = {
  type: 'string',
  value: 'http://host:port',
  help: 'a running replica of the cluster (https:// when it serves TLS)',
} as const;

export interface AdminRequest {
  /** The replica's `--url` (a trailing slash allowed). */
  readonly base: string;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly token: string;
  /** PEM CA certificates for an https:// base; null: the system's. */
  readonly ca: string | null;
  /** Given up once the replica has sent nothing for this long. */
  readonly idleMs: number;
}

/** The replica's response, as it streams in (the caller reads or pipes its body). */
export function adminRequest(r: AdminRequest): Promise<IncomingMessage> {
  const url = `${r.base.replace(/\/$/, '')}${r.path}`;
  const https = url.startsWith('https:');
  return new Promise((resolve, reject) => {
    const req = (https ? httpsRequest : httpRequest)(
      url,
      {
        method: r.method,
        headers: { authorization: `Bearer ${r.token}` },
        ...(https && r.ca !== null ? { ca: r.ca } : {}),
      },
      resolve,
    );
    req.setTimeout(r.idleMs, () =>
      req.destroy(new Error(`${url} sent nothing for ${r.idleMs / 1000} s`)),
    );
    req.on('error', (err: NodeJS.ErrnoException) =>
      reject(
        new Error(
          err.code === 'ECONNREFUSED'
            ? `nothing answers at ${new URL(url).origin}: is a replica running there? (--url)`
            : `${url}: ${err.message}`,
        ),
      ),
    );
    req.end();
  });
}

/** A whole response body: JSON when it parses, else its text. */
export async function responseBody(res: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text; // not JSON: said as text
  }
}

/** What an error body says: its `error` field, or (the start of) the body itself. */
export function errorOf(body: unknown): string {
  if (typeof body === 'object' && body !== null && 'error' in body)
    return String((body as { error: unknown }).error);
  return typeof body === 'string' ? body.slice(0, 200) : JSON.stringify(body).slice(0, 200);
}
