import { PROTOCOL_VERSION, type ServerFrame } from '@creek/protocol';
import {
  ClientConnections,
  type ClientConnectionsOptions,
  type ConnectionOutput,
} from '@creek/replica/host/client-connections.js';

/**
 * The replica's side of client connections with a driver played by the test: a replica 0 that
 * serves `kv.put`, lets every hello in, has nothing and answers nothing unless `options` says
 * otherwise; every output is kept, and `frames(conn)` are the frames sent to connection `conn`.
 */
export function connectionsHarness(options: Partial<ClientConnectionsOptions<string>> = {}) {
  const out: { conn: string; o: ConnectionOutput }[] = [];
  const cc = new ClientConnections<string>({
    replicaId: 0,
    opNames: () => ['kv.put'],
    readOnlyOps: () => [],
    authorize: () => true,
    invoke: () => undefined,
    unavailable: () => null,
    seen: () => [],
    received: () => false,
    changedKeys: () => new Set(),
    observe: () => undefined,
    now: () => 0,
    out: (conn, o) => out.push({ conn, o }),
    ...options,
  });
  const frames = (conn: string): ServerFrame[] =>
    out
      .filter((x) => x.conn === conn && x.o.t === 'frame')
      .map((x) => (x.o as { frame: ServerFrame }).frame);
  return { cc, out, frames };
}

/** A session's hello at this build's client protocol, with `extra` fields. */
export const sessionHello = (extra: object = {}) => ({
  t: 'hello' as const,
  version: PROTOCOL_VERSION,
  session: 'session-under-test',
  ...extra,
});

/** The last of `frames`. */
export const lastFrame = (frames: ServerFrame[]): ServerFrame | undefined => frames.at(-1);
