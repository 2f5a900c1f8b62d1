// @vitest-environment happy-dom
import { defineApp, op } from '@creek/app';
import { connect } from '@creek/client';
import { act, createElement, type ReactNode } from 'react';
import { createRoot } from 'react-dom/client';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCreekHooks, type OpState } from '../src/index.js';

/**
 * useWatch: the component re-renders with each result a replica pushes for the live query, and
 * unmounting ends it. The replica is played by a WebSocket the test drives (the live queries
 * themselves are tested against real replicas in the client's live-queries.e2e.test.ts).
 */
(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

const sockets: Replica[] = [];
class Replica {
  readyState = 0;
  readonly sent: { t: string; watchId?: string }[] = [];
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: string }) => void) | null = null;
  onclose: ((ev: unknown) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  constructor(readonly url: string) {
    sockets.push(this);
    setTimeout(() => {
      this.readyState = 1;
      this.onopen?.({});
    }, 0);
  }
  send(text: string): void {
    const f = JSON.parse(text) as { t: string; version?: number; watchId?: string };
    this.sent.push(f);
    if (f.t === 'hello')
      this.push({
        t: 'welcome',
        version: f.version,
        replica: 0,
        levels: ['weak', 'strong'],
        ops: [],
      });
  }
  push(frame: unknown): void {
    this.onmessage?.({ data: JSON.stringify(frame) });
  }
  close(): void {
    this.readyState = 3;
  }
}

const { CreekProvider, useWatch } = createCreekHooks();

describe('useWatch', () => {
  it('renders each pushed result, tentative and stable, and unwatches when unmounted', async () => {
    const client = connect({ urls: ['ws://replica.test/client'], WebSocket: Replica as never });
    const states: OpState<unknown>[] = [];
    function Live(): ReactNode {
      states.push(useWatch('kv.get' as never, { key: 'shown' } as never));
      return null;
    }
    const root = createRoot(document.createElement('div'));
    act(() => root.render(createElement(CreekProvider, { client }, createElement(Live))));
    const until = async (what: string, ok: () => boolean) => {
      for (let i = 0; i < 400 && !ok(); i++)
        await act(async () => {
          await new Promise((r) => setTimeout(r, 2));
        });
      if (!ok()) throw new Error(`timed out: ${what}`);
    };
    try {
      expect(states[0]).toMatchObject({ pending: true });
      await until('the watch frame', () => sockets[0]?.sent.some((f) => f.t === 'watch') === true);
      const watchId = sockets[0]!.sent.find((f) => f.t === 'watch')!.watchId!;
      const push = (level: string, value: unknown) =>
        act(() => sockets[0]!.push({ t: 'watched', watchId, level, outcome: { ok: true, value } }));
      push('tentative', 4);
      expect(states.at(-1)).toMatchObject({ value: 4, level: 'weak', pending: false });
      push('stable', 5);
      expect(states.at(-1)).toMatchObject({ value: 5, level: 'strong', pending: false });
    } finally {
      act(() => root.unmount());
    }
    expect(sockets[0]!.sent.at(-1)).toMatchObject({ t: 'unwatch' });
    client.close();
  });

  it("keeps the session's own write that a stable result read before its commit lacks, and hears a correction", async () => {
    const before = sockets.length;
    const client = connect({ urls: ['ws://replica.test/client'], WebSocket: Replica as never });
    const states: OpState<unknown>[] = [];
    const corrections: string[] = [];
    function Live(): ReactNode {
      states.push(
        useWatch('todo.list' as never, { list: 'mine' } as never, {
          onCorrection: (c) => corrections.push(c.failed.map((f) => `${f.op}: ${f.error}`).join()),
        }),
      );
      return null;
    }
    const root = createRoot(document.createElement('div'));
    act(() => root.render(createElement(CreekProvider, { client }, createElement(Live))));
    const replica = (): Replica => sockets[before]!;
    for (let i = 0; i < 400 && sockets[before]?.sent.some((f) => f.t === 'watch') !== true; i++)
      await act(async () => {
        await new Promise((r) => setTimeout(r, 2));
      });
    try {
      const watchId = replica().sent.find((f) => f.t === 'watch')!.watchId!;
      const push = (level: string, value: unknown, own: object) =>
        act(() =>
          replica().push({ t: 'watched', watchId, level, outcome: { ok: true, value }, own }),
        );
      push('tentative', ['a'], { upTo: 1 });
      push('stable', [], { upTo: 0 });
      expect(states.at(-1)).toMatchObject({ value: ['a'], level: 'weak', committed: false });
      push('stable', [], {
        upTo: 1,
        failed: [{ seq: 1, op: 'todo.add', error: 'the list is full' }],
      });
      expect(states.at(-1)).toMatchObject({ value: [], level: 'strong', committed: true });
      expect(corrections).toEqual(['todo.add: the list is full']);
    } finally {
      act(() => root.unmount());
    }
    client.close();
  });
});

describe('useWatch types', () => {
  it('takes the read-only ops of the app alone (the expected errors are checked by tsc -b)', () => {
    const app = defineApp({
      'todo.add': op({ args: z.object({ text: z.string() }), run: () => null }),
      'todo.list': op({ args: z.null(), readOnly: true, run: () => [] as string[] }),
    });
    const hooks = createCreekHooks<typeof app>();
    expect(app.lookup('todo.list')?.readOnly).toBe(true);
    // Never called: only the types are under test.
    const uses = (): void => {
      hooks.useWatch('todo.list', null);
      hooks.useWatch('kv.get', { key: 'k' });
      // @ts-expect-error todo.add writes: only read-only ops can be watched
      hooks.useWatch('todo.add', { text: 'milk' });
      // @ts-expect-error kv.put writes
      hooks.useWatch('kv.put', { key: 'k', value: 1 });
    };
    expect(typeof uses).toBe('function');
  });
});
