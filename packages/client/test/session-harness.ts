import { PROTOCOL_VERSION, type ClientFrame } from '@creek/protocol';
import type { View, ViewSink } from '../src/binding.js';
import type { CreekError } from '../src/errors.js';
import { ClientSession } from '../src/session/client-session.js';
import type { ClientSessionConfig, SessionOutput } from '../src/session/session-io.js';

/**
 * A client session on its own, driven by a test: no sockets, no timers, no real time. The test
 * plays the driver (it reads the outputs, reports connection events and moves the clock) and the
 * replicas (it hands the session their frames), so every step is explicit and every run the same.
 */
export const A = 'ws://a:7100/client';
export const B = 'ws://b:7100/client';

export function driven(config: Partial<ClientSessionConfig> = {}) {
  const clock = { now: 1_000 };
  const outputs: SessionOutput[] = [];
  const session = new ClientSession({
    urls: [A, B],
    session: 'session-under-test',
    maxInFlight: 1_024,
    offline: false,
    maxQueued: 1_000,
    persistent: false,
    now: () => clock.now,
    out: (o) => outputs.push(o),
    ...config,
  });
  /** The outputs since the last call. */
  const take = (): SessionOutput[] => outputs.splice(0);
  /** The frames among `outs`, with the connection each goes on. */
  const frames = (outs: SessionOutput[]): { connection: number; frame: ClientFrame }[] =>
    outs.flatMap((o) => (o.t === 'send' ? [{ connection: o.connection, frame: o.frame }] : []));
  /** The connection the session asked for last among `outs`. */
  const connectIn = (outs: SessionOutput[]) => {
    const c = outs.filter((o) => o.t === 'connect').at(-1);
    if (c === undefined) throw new Error(`no connect among ${JSON.stringify(outs)}`);
    return c;
  };
  const receive = (connection: number, frame: Record<string, unknown>) =>
    session.frameReceived(connection, JSON.stringify(frame));
  const welcome = (connection: number) =>
    receive(connection, {
      t: 'welcome',
      version: PROTOCOL_VERSION,
      replica: connection,
      levels: ['weak', 'strong'],
      ops: ['kv.put'],
    });
  /**
   * Opens the connection the session asked for last (its hello is dropped) and welcomes it;
   * returns its number.
   */
  const serve = (outs: SessionOutput[]): number => {
    const { connection } = connectIn(outs);
    session.connectionOpened(connection);
    take();
    welcome(connection);
    return connection;
  };
  return { session, clock, take, frames, connectIn, receive, welcome, serve };
}

/** A sink that records what its op's caller hears. */
export function recorder() {
  const heard: string[] = [];
  const errors: CreekError[] = [];
  const sink: ViewSink<unknown> = {
    view: (v: View<unknown>) => heard.push(`view ${v.level}${v.final ? ' final' : ''}`),
    error: (e) => {
      errors.push(e);
      heard.push(`error ${e.name}`);
    },
    committed: () => heard.push('committed'),
    neverCommits: () => heard.push('never commits'),
    queued: (q) => heard.push(q ? 'queued' : 'unqueued'),
  };
  return { sink, heard, errors };
}
