import { PROTOCOL_VERSION } from '@creek/protocol';
import { afterEach } from 'vitest';
import { connect, type CreekClient } from '../src/client.js';

/** A frame as the test reads or writes it. */
export type Frame = Record<string, unknown>;

/**
 * WebSockets whose peer is the test, which plays the replicas for the Creek binding's tests.
 * `sockets` lists those the binding made, in order.
 */
export function scriptedSockets(failWith?: string) {
  const sockets: Scripted[] = [];
  class Scripted {
    readyState = 0;
    readonly sent: Frame[] = [];
    onopen: ((ev: unknown) => void) | null = null;
    onmessage: ((ev: { data: string }) => void) | null = null;
    onclose: ((ev: unknown) => void) | null = null;
    onerror: ((ev: { message?: string }) => void) | null = null;

    constructor(readonly url: string) {
      sockets.push(this);
      // As `ws` does when the upgrade fails: an error event saying why, then the close.
      if (failWith !== undefined)
        setTimeout(() => {
          this.onerror?.({ message: failWith });
          this.close();
        }, 0);
    }

    send(text: string): void {
      this.sent.push(JSON.parse(text) as Frame);
    }

    close(): void {
      if (this.readyState === 3) return;
      this.readyState = 3;
      setTimeout(() => this.onclose?.({}), 0);
    }

    open(): void {
      this.readyState = 1;
      this.onopen?.({});
    }

    receive(frame: Frame): void {
      this.onmessage?.({ data: JSON.stringify(frame) });
    }

    /** Opens and welcomes; `readOnly` as a replica lists its app's read-only ops. */
    welcome(readOnly?: string[]): void {
      this.open();
      this.receive({
        t: 'welcome',
        version: PROTOCOL_VERSION,
        replica: 0,
        levels: ['weak', 'strong'],
        ops: [],
        ...(readOnly === undefined ? {} : { readOnly }),
      });
    }

    invokes(): Frame[] {
      return this.sent.filter((f) => f.t === 'invoke');
    }
  }
  /** The n-th socket the binding makes (it makes them asynchronously). */
  const socket = async (n: number): Promise<Scripted> => {
    for (let i = 0; i < 1_000 && sockets[n] === undefined; i++)
      await new Promise((r) => setTimeout(r, 1));
    const s = sockets[n];
    if (s === undefined) throw new Error(`no socket #${n}`);
    return s;
  };
  return { WebSocket: Scripted, socket, sockets };
}

/**
 * A client of one scripted replica, closed after each test of the file that calls it: the
 * `afterEach` it registers closes every client made since.
 */
export function scriptedClients(): () => ReturnType<typeof scriptedSockets> & {
  creek: CreekClient;
} {
  const made: CreekClient[] = [];
  afterEach(() => {
    for (const c of made.splice(0)) c.close();
  });
  return () => {
    const scripted = scriptedSockets();
    const creek = connect({ urls: ['ws://127.0.0.1:7100/client'], WebSocket: scripted.WebSocket });
    made.push(creek);
    return { creek, ...scripted };
  };
}
