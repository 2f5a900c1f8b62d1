import { describe, expect, it } from 'vitest';
import { probeRoundTrip, PROBE_PINGS } from '../src/probe.js';
import { scriptedSockets } from './scripted-sockets.js';

/**
 * The socket driver's round-trip probe against a scripted replica: pings one after the other, the
 * least round trip reported, and null for anything but pongs to its pings.
 */
function probe(clock: { now: number }) {
  const scripted = scriptedSockets();
  const results: (number | null)[] = [];
  probeRoundTrip(
    (url) => new scripted.WebSocket(url),
    'ws://r:7100/client',
    () => clock.now,
    (rtt) => results.push(rtt),
  );
  return { s: scripted.sockets[0]!, results };
}

describe('a round-trip probe', () => {
  it('pings once open, one ping at a time, and reports the least round trip', () => {
    const clock = { now: 0 };
    const { s, results } = probe(clock);
    expect(s.sent).toEqual([]); // nothing before the connection opens
    s.open();
    const rtts = [30, 12, 20];
    for (let n = 1; n <= PROBE_PINGS; n++) {
      expect(s.sent.at(-1)).toEqual({ t: 'ping', n });
      clock.now += rtts[n - 1]!;
      s.receive({ t: 'pong', n });
    }
    expect(s.sent).toHaveLength(PROBE_PINGS);
    expect(results).toEqual([12]);
    expect(s.readyState).toBe(3); // closed once done
  });

  it('fails (null) on a frame that is not the pong of its ping', () => {
    const { s, results } = probe({ now: 0 });
    s.open();
    s.receive({ t: 'pong', n: 5 });
    expect(results).toEqual([null]);
  });

  it('fails (null) when the connection closes before any pong', async () => {
    const { s, results } = probe({ now: 0 });
    s.close();
    await new Promise((r) => setTimeout(r, 5));
    expect(results).toEqual([null]);
  });
});
