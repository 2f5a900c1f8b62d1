import { PROTOCOL_VERSION } from '@creek/protocol';
import { describe, expect, it } from 'vitest';
import type { ViewSink } from '../src/binding.js';
import { ClientSession } from '../src/session/client-session.js';
import type { OptimisticChange } from '../src/session/optimistic.js';
import type { WatchSink } from '../src/session/watches.js';
import { scriptedClients } from './scripted-sockets.js';

/**
 * Optimistic changes (InvokeOptions.optimistic), the replica played by the test: an op's change
 * shows in the live queries it names at once, offline or in flight, and stops in each as soon as
 * a result of it holds the op, so the user's row never vanishes in between.
 */
function session() {
  let connection = 0;
  const sent: { t: string; opId?: string; seq?: number }[] = [];
  const s = new ClientSession({
    urls: ['ws://a:7100/client'],
    session: 'session-under-test',
    maxInFlight: 64,
    offline: false,
    maxQueued: 100,
    persistent: false,
    now: () => 0,
    out: (o) => {
      if (o.t === 'connect') connection = o.connection;
      if (o.t === 'send') sent.push(o.frame as never);
    },
  });
  const heard: string[] = [];
  const sink: WatchSink = {
    view: (v, shown) =>
      heard.push(`${shown.latest ? '' : 'stable only '}${v.level} ${JSON.stringify(v.value)}`),
    failed: (e) => heard.push(`failed ${e.message}`),
    error: (e) => heard.push(`ended ${e.message}`),
  };
  const receive = (frame: object): void => s.frameReceived(connection, JSON.stringify(frame));
  const open = (): void => {
    s.connectionOpened(connection);
    receive({ t: 'welcome', version: PROTOCOL_VERSION, replica: 0, levels: ['weak'], ops: [] });
  };
  const watched = (level: string, value: unknown, own: object, position?: number): void =>
    receive({
      t: 'watched',
      watchId: 'w1',
      level,
      outcome: { ok: true, value },
      own,
      ...(position === undefined ? {} : { position }),
    });
  const add = (item: string): { heard: string[] } => {
    const opHeard: string[] = [];
    const opSink: ViewSink<unknown> = {
      view: (v) => opHeard.push(`view ${v.level}`),
      error: (e) => opHeard.push(`error ${e.message}`),
    };
    const change: OptimisticChange = {
      op: 'todo.list',
      args: { list: 'mine' },
      update: (v) => [...((v as string[] | undefined) ?? []), item],
    };
    s.submit('todo.add', { list: 'mine', id: item }, ['weak'], opSink, [change]);
    return { heard: opHeard };
  };
  s.start();
  return { s, sink, heard, open, receive, watched, add, sent, connection: () => connection };
}

describe('optimistic changes of pending ops in live queries', () => {
  it('an op invoked with no replica shows in the list at once, and its real result takes over without a gap', () => {
    const t = session();
    t.s.watch('todo.list', { list: 'mine' }, t.sink);
    t.open();
    t.watched('tentative', ['a'], { upTo: 0 });
    t.s.connectionClosed(t.connection()); // no replica for now
    t.add('b'); // op 1
    expect(t.heard).toEqual(['weak ["a"]', 'cached ["a","b"]']);
    t.s.reconnect();
    t.open(); // the op is resubmitted
    expect(t.sent.filter((f) => f.t === 'invoke').map((f) => f.seq)).toEqual([1]);
    // A result from before the op arrived: the change still shows on it.
    t.watched('tentative', ['a', 'x'], { upTo: 0 });
    t.watched('tentative', ['a', 'x', 'b'], { upTo: 1 }); // holds op 1: the real row
    t.watched('stable', ['a', 'x'], { upTo: 0 }, 4); // committed without op 1 yet: synced mark only
    t.receive({ t: 'committed', below: 2 }); // op 1 ends: nothing changes on screen
    t.watched('stable', ['a', 'x', 'b'], { upTo: 1 }, 5);
    expect(t.heard.slice(2)).toEqual([
      'cached ["a","x","b"]',
      'weak ["a","x","b"]',
      'stable only strong ["a","x"]',
      'strong ["a","x","b"]',
    ]);
  });

  it('a change shows before the query has any result, and the changes of pending ops apply in their order', () => {
    const t = session();
    t.open();
    t.add('b');
    t.s.watch('todo.list', { list: 'mine' }, t.sink);
    t.add('c');
    expect(t.heard).toEqual(['cached ["b"]', 'cached ["b","c"]']);
    t.watched('tentative', ['b'], { upTo: 1 }); // holds op 1, not op 2
    t.watched('tentative', ['b', 'c'], { upTo: 2 });
    expect(t.heard.slice(2)).toEqual(['cached ["b","c"]', 'weak ["b","c"]']);
  });

  it('an op refused for good takes its change back', () => {
    const t = session();
    t.s.watch('todo.list', { list: 'mine' }, t.sink);
    t.open();
    t.watched('tentative', ['a'], { upTo: 0 });
    const op = t.add('b');
    const opId = t.sent.find((f) => f.t === 'invoke')!.opId;
    t.receive({ t: 'error', opId, code: 'invalid-arguments', message: 'no such list' });
    expect(op.heard).toEqual([expect.stringMatching(/^error invalid arguments: no such list/)]);
    expect(t.heard).toEqual(['weak ["a"]', 'cached ["a","b"]', 'weak ["a"]']);
  });
});

describe('InvokeOptions.optimistic through the client (scripted socket)', () => {
  const client = scriptedClients();

  it("latest() shows the pending op's change at the cached level, and a bad optimistic refuses the call before anything is sent", async () => {
    const { creek, socket } = client();
    const q = creek.watch('todo.list' as never, { list: 'mine' } as never);
    const s = await socket(0);
    s.welcome();
    const watchId = s.sent.find((f) => f.t === 'watch')!.watchId;
    s.receive({
      t: 'watched',
      watchId,
      level: 'tentative',
      outcome: { ok: true, value: ['a'] },
      own: { upTo: 0 },
    });
    void creek.invoke('todo.add' as never, { list: 'mine', id: 'b' } as never, {
      optimistic: (views) =>
        views.update(
          'todo.list' as never,
          { list: 'mine' } as never,
          ((v: string[] = []) => [...v, 'b']) as never,
        ),
    });
    expect(q.latest()).toEqual({ value: ['a', 'b'], level: 'cached', final: false });
    const invokes = s.sent.filter((f) => f.t === 'invoke').length;
    const refused = creek.invoke('todo.add' as never, { list: 'mine', id: 'c' } as never, {
      optimistic: () => {
        throw new Error('no list here');
      },
    });
    await expect(refused).rejects.toThrow(/optimistic threw: no list here/);
    expect(s.sent.filter((f) => f.t === 'invoke')).toHaveLength(invokes);
    expect(q.latest()?.value).toEqual(['a', 'b']);
    q.close();
  });
});
