import { decodeServerFrame, encodeFrame } from '@creek/protocol';
import type { SocketFactory, SocketLike } from './socket.js';

/** Pings per probe: the least of their round trips is the replica's distance. */
export const PROBE_PINGS = 3;
/** A probe that has not finished by then failed (the replica is down, or far beyond use). */
export const PROBE_TIMEOUT_MS = 5_000;

/**
 * Measures the round trip to the replica at `url` on a connection of its own: once it opens,
 * PROBE_PINGS `ping` frames one after the other, each answered with a `pong` (no hello, so no
 * session, token or op is involved). Reports the least round trip in ms, or null when the
 * connection failed, closed early or took longer than PROBE_TIMEOUT_MS; then closes it. The least
 * of a few, after the connection is open: the handshakes (TCP, TLS, the WebSocket upgrade) and a
 * busy moment would otherwise count.
 */
export function probeRoundTrip(
  make: SocketFactory,
  url: string,
  now: () => number,
  done: (rttMs: number | null) => void,
): void {
  let ws: SocketLike;
  let finished = false;
  let best = Number.POSITIVE_INFINITY;
  let sentAt = 0;
  let n = 0;
  const finish = (rttMs: number | null): void => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    try {
      ws.close();
    } catch {
      // Closing a socket that never opened: nothing to close.
    }
    done(rttMs);
  };
  const ping = (): void => {
    n++;
    sentAt = now();
    ws.send(encodeFrame({ t: 'ping', n }));
  };
  const timer = setTimeout(() => finish(null), PROBE_TIMEOUT_MS);
  // A probe pending must not keep a Node process alive.
  (timer as { unref?: () => void }).unref?.();
  try {
    ws = make(url);
  } catch {
    clearTimeout(timer);
    return done(null);
  }
  ws.onopen = () => ping();
  ws.onmessage = (ev: { data: unknown }) => {
    const decoded = decodeServerFrame(typeof ev.data === 'string' ? ev.data : String(ev.data));
    if (!decoded.ok || decoded.frame.t !== 'pong' || decoded.frame.n !== n) return finish(null);
    best = Math.min(best, now() - sentAt);
    if (n < PROBE_PINGS) ping();
    else finish(best);
  };
  ws.onerror = () => undefined; // a close follows
  ws.onclose = () => finish(best === Number.POSITIVE_INFINITY ? null : best);
}
