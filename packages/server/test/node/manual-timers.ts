import type { LingerTimers } from '../../src/node/peer-outbox.js';

/** Timers the test fires by hand (one pending at a time, as PeerOutbox and GroupCommit use them). */
export class ManualTimers implements LingerTimers {
  pending: { fn: () => void; ms: number } | null = null;
  set(fn: () => void, ms: number): unknown {
    this.pending = { fn, ms };
    return this.pending;
  }
  clear(h: unknown): void {
    if (this.pending === h) this.pending = null;
  }
  fire(): void {
    const p = this.pending;
    this.pending = null;
    p?.fn();
  }
}
