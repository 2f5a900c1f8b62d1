import type WebSocket from 'ws';

/** The part of a `net.Socket` that batches writes. */
interface Corkable {
  cork(): void;
  uncork(): void;
}

/**
 * Holds a turn's writes to WebSocket connections in their sockets' buffers (`cork`) and lets them
 * go together at the end of the turn (`uncork`): one `writev` system call per connection and turn,
 * instead of one per frame. A client with many ops in flight gets many views per turn; on a small
 * machine the system calls were a fifth of a replica's time (`npm run bench:latency`).
 *
 * The owner releases at the end of its turn; writes made outside one (a handshake answered from a
 * message handler) are released by a `setImmediate` the first hold schedules, so nothing waits
 * for a turn that may not come.
 *
 * `ws` exposes no public handle on its socket, so this reaches for `_socket`; where it is absent
 * (another WebSocket implementation), frames simply go one by one.
 */
export class TurnCork {
  private readonly corked = new Map<WebSocket, Corkable>();
  private releaseScheduled = false;

  /** Call before writing to `ws`. */
  hold(ws: WebSocket): void {
    if (this.corked.has(ws)) return;
    const socket = (ws as unknown as { _socket?: Partial<Corkable> })._socket;
    if (typeof socket?.cork !== 'function' || typeof socket.uncork !== 'function') return;
    socket.cork();
    this.corked.set(ws, socket as Corkable);
    if (!this.releaseScheduled) {
      this.releaseScheduled = true;
      setImmediate(() => {
        this.releaseScheduled = false;
        this.release();
      });
    }
  }

  /** Sends what was written since the last release: call at the end of each turn. */
  release(): void {
    for (const socket of this.corked.values()) socket.uncork();
    this.corked.clear();
  }
}
