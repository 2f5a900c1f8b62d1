import { describe, expect, it } from 'vitest';
import { scriptedClients } from './scripted-sockets.js';

/** Live queries over the Creek binding, the replica played by the test. */
const client = scriptedClients();

describe('client.watch, scripted replica', () => {
  it('keeps a query a replica could not take for now, and sends it again at the next connection', async () => {
    const { creek, socket } = client();
    const q = creek.watch('kv.get' as never, { key: 'a' } as never);
    const s = await socket(0);
    s.welcome();
    const [w] = s.sent.filter((f) => f.t === 'watch');
    expect(w).toMatchObject({ t: 'watch', op: 'kv.get', args: { key: 'a' } });
    s.receive({ t: 'unwatched', watchId: w!.watchId, code: 'unavailable', message: 'paused' });
    expect(q.error).toBeUndefined();
    s.close();
    const s2 = await socket(1);
    s2.welcome();
    expect(s2.sent.filter((f) => f.t === 'watch')).toEqual([w]);
    s2.receive({
      t: 'watched',
      watchId: w!.watchId,
      level: 'stable',
      outcome: { ok: true, value: 3 },
    });
    expect(q.latestStable()).toEqual({ value: 3, level: 'strong', final: false });
    // Refused for good (not read-only, too many): the query ends with the replica's reason.
    s2.receive({ t: 'unwatched', watchId: w!.watchId, code: 'busy', message: 'at most 64' });
    expect(q.error?.message).toMatch(/at most 64/);
    q.close();
  });

  it('arguments are checked before anything is sent', () => {
    const { creek } = client();
    const q = creek.watch('' as never, {} as never);
    expect(q.error?.code).toBe('invalid-arguments');
  });
});
