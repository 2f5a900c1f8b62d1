import { describe, expect, it } from 'vitest';
import type { Waiting } from '@creek/protocol';
import { WaitingLog, type WaitingLogSink } from '../../src/node/waiting-log.js';

/** Every line the log got, in order. */
function sink(): WaitingLogSink & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    warn: (f, m) => lines.push(`warn ${m} ${JSON.stringify(f['peers'])} ${String(f['forMs'])}`),
    info: (_f, m) => lines.push(`info ${m}`),
  };
}

const wait = (w: Partial<Waiting> = {}): Waiting => ({
  for: 'paxos-rejoin',
  peers: [1, 2],
  since: 0,
  reason: 'why',
  ...w,
});

describe('WaitingLog', () => {
  it('says a wait once it has lasted the grace period, then only when it changes or every period', () => {
    const s = sink();
    const log = new WaitingLog(s, 2_000, 30_000);
    for (let now = 0; now <= 70_000; now += 25) log.observe(wait(), now);
    expect(s.lines).toEqual([
      'warn cannot make progress: waiting for paxos-rejoin [1,2] 2000',
      'warn cannot make progress: waiting for paxos-rejoin [1,2] 32000',
      'warn cannot make progress: waiting for paxos-rejoin [1,2] 62000',
    ]);
    // Other peers: said at once (the wait's own start decides the grace).
    log.observe(wait({ peers: [2], since: 0 }), 70_025);
    log.observe(wait({ peers: [2], since: 0 }), 70_050);
    log.observe(null, 70_075);
    log.observe(null, 70_100);
    expect(s.lines.slice(3)).toEqual([
      'warn cannot make progress: waiting for paxos-rejoin [2] 70025',
      'info no longer waiting: making progress again',
    ]);
  });

  it('says nothing of a wait shorter than the grace period (an election)', () => {
    const s = sink();
    const log = new WaitingLog(s, 2_000, 30_000);
    for (let now = 0; now < 1_000; now += 25) log.observe(wait({ for: 'leader', since: 0 }), now);
    log.observe(null, 1_000);
    expect(s.lines).toEqual([]);
  });
});
