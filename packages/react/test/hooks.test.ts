// @vitest-environment happy-dom
import { defineApp, op } from '@creek/server';
import { connectInMemory, type MemoryCluster } from '@creek/client/memory';
import { act, createElement, StrictMode, useState, type ReactNode } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Correctable, type Correction } from '@creek/client';
import { createCreekHooks, useCorrectable, useCorrection, type OpState } from '../src/index.js';

/**
 * The hooks in a DOM (happy-dom) against the in-memory cluster (the real replica code): each
 * state a component renders is recorded, so the test sees what a user would, view by view.
 */
(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

const app = defineApp({
  'counter.get': op({
    args: z.object({ name: z.string() }),
    readOnly: true,
    run: (tx, { name }) => (tx.get(`counter/${name}`) as number | undefined) ?? 0,
  }),
  'counter.add': op({
    args: z.object({ name: z.string(), by: z.number().int() }),
    run: (tx, { name, by }) => {
      const n = ((tx.get(`counter/${name}`) as number | undefined) ?? 0) + by;
      if (n < 0) throw new Error(`counter ${name} would go below zero`);
      tx.put(`counter/${name}`, n);
      return n;
    },
  }),
});
const { CreekProvider, useInvoke, useOp, useStatus } = createCreekHooks<typeof app>();

let cluster: MemoryCluster | null = null;
let root: Root | null = null;
afterEach(() => {
  act(() => root?.unmount());
  root = null;
  cluster?.close();
  cluster = null;
});

/** Renders `element` under a provider of a fresh in-memory client. */
function mount(element: ReactNode, strict = false) {
  const m = connectInMemory({ app });
  cluster = m.cluster;
  const container = document.createElement('div');
  root = createRoot(container);
  const tree = createElement(CreekProvider, { client: m.client }, element);
  act(() => root!.render(strict ? createElement(StrictMode, null, tree) : tree));
  return m;
}

const until = async (what: string, ok: () => boolean): Promise<void> => {
  for (let i = 0; i < 400 && !ok(); i++)
    await act(async () => {
      await new Promise((r) => setTimeout(r, 5));
    });
  if (!ok()) throw new Error(`timed out: ${what}`);
};

describe('useInvoke', () => {
  it('renders pending, then the tentative value, then the stable one, and invokes once under StrictMode', async () => {
    const states: OpState<number>[] = [];
    function Counter(): ReactNode {
      const s = useInvoke('counter.get', { name: 'a' });
      states.push(s);
      return null;
    }
    const m = mount(createElement(Counter), true);
    await until('a stable value', () => states.at(-1)?.level === 'strong');
    expect(states[0]).toMatchObject({ pending: true, value: undefined });
    expect(states.at(-1)).toMatchObject({ value: 0, level: 'strong', pending: false });
    expect(states.some((s) => s.level === 'weak')).toBe(true);
    // StrictMode renders twice and mounts twice: the read still went to the cluster once.
    expect(m.cluster.hosts[0]!.inspect().replica.metrics.invoked.readOnly).toBe(0); // weak reads: not this op
    expect(
      m.cluster.hosts[0]!.inspect().replica.metrics.invoked.strong,
      'one strong invoke for the read',
    ).toBe(1);
  });

  it('invokes again when the arguments change, not on a re-render with equal ones', async () => {
    const seen: (number | undefined)[] = [];
    let setName: (n: string) => void = () => undefined;
    function Counter(props: { name: string }): ReactNode {
      const s = useInvoke('counter.get', { name: props.name });
      seen.push(s.value);
      return null;
    }
    function Shell(): ReactNode {
      const [name, set] = useState('a');
      setName = set;
      return createElement(Counter, { name });
    }
    const m = mount(createElement(Shell));
    await m.client.invokeStrong('counter.add', { name: 'b', by: 5 });
    await until('first value', () => seen.at(-1) === 0);
    const before = m.cluster.hosts[0]!.inspect().replica.metrics.invoked.strong;
    act(() => setName('a'));
    expect(m.cluster.hosts[0]!.inspect().replica.metrics.invoked.strong).toBe(before);
    act(() => setName('b'));
    await until('the other counter', () => seen.at(-1) === 5);
  });

  it('skip: invokes nothing and stays idle', () => {
    const states: OpState<number>[] = [];
    function Counter(): ReactNode {
      states.push(useInvoke('counter.get', { name: 'a' }, { skip: true }));
      return null;
    }
    const m = mount(createElement(Counter));
    expect(states.at(-1)).toEqual({
      value: undefined,
      level: undefined,
      error: undefined,
      pending: false,
      queued: false,
      committed: false,
    });
    expect(m.cluster.hosts[0]!.inspect().replica.metrics.invoked.strong).toBe(0);
  });
});

describe('useOp and useStatus', () => {
  it('invokes on demand and follows the latest call, errors included', async () => {
    let handle: ReturnType<typeof useOp<'counter.add'>> | null = null;
    let status = '';
    function Adder(): ReactNode {
      handle = useOp('counter.add');
      status = useStatus();
      return null;
    }
    mount(createElement(Adder));
    expect(status).toBe('connected');
    expect(handle!).toMatchObject({ pending: false, value: undefined });
    await act(async () => {
      await handle!.invoke({ name: 'c', by: 2 });
    });
    await until('stable', () => handle!.level === 'strong');
    expect(handle!).toMatchObject({ value: 2, pending: false, error: undefined });
    await act(async () => {
      await handle!.invoke({ name: 'c', by: -10 }).then(
        () => undefined,
        () => undefined,
      );
    });
    await until('the error', () => handle!.error !== undefined);
    expect(handle!.error!.message).toMatch(/would go below zero/);
    expect(handle!.pending).toBe(false);
  });

  it('outside a provider: a clear error', () => {
    function Lost(): ReactNode {
      useStatus();
      return null;
    }
    const container = document.createElement('div');
    const r = createRoot(container);
    const errors: unknown[] = [];
    const onError = (e: ErrorEvent) => {
      errors.push(e.error);
      e.preventDefault();
    };
    window.addEventListener('error', onError);
    try {
      expect(() => act(() => r.render(createElement(Lost)))).toThrow(
        /Creek hooks need a <CreekProvider client=\{connect\(\.\.\.\)\}>/,
      );
    } finally {
      window.removeEventListener('error', onError);
      act(() => r.unmount());
    }
  });
});

describe('useCorrectable', () => {
  it("follows a Correctable the app holds: a weak op's answer, then committed (the synced mark)", async () => {
    const m = mount(null);
    const states: OpState<number>[] = [];
    function Row({ c }: { c: Correctable<number> }): ReactNode {
      states.push(useCorrectable(c));
      return null;
    }
    const c = m.client.invokeWeak('counter.add', { name: 'w', by: 3 });
    const container = document.createElement('div');
    const r = createRoot(container);
    try {
      act(() => r.render(createElement(Row, { c })));
      await until('committed', () => states.at(-1)?.committed === true);
      expect(states.some((s) => s.level === 'weak' && !s.committed)).toBe(true);
      expect(states.at(-1)).toMatchObject({ value: 3, level: 'weak', pending: false });
    } finally {
      act(() => r.unmount());
    }
  });

  it('an op that never took effect is never marked committed; null renders the idle state', async () => {
    const m = mount(null);
    const states: OpState<number>[] = [];
    function Row({ c }: { c: Correctable<number> | null }): ReactNode {
      states.push(useCorrectable(c));
      return null;
    }
    // Refused before it was sent (not a whole number): it will never have a place in the order.
    const c = m.client.invokeStrong('counter.add', { name: 'f', by: 1.5 });
    c.then(
      () => undefined,
      () => undefined,
    );
    const container = document.createElement('div');
    const r = createRoot(container);
    try {
      act(() => r.render(createElement(Row, { c: null })));
      expect(states.at(-1)).toMatchObject({ pending: false, value: undefined, committed: false });
      act(() => r.render(createElement(Row, { c })));
      await until('the error', () => states.at(-1)?.error !== undefined);
      await act(async () => {
        await new Promise((r) => setTimeout(r, 20));
      });
      expect(states.at(-1)!.error!.message).toMatch(/by/);
      expect(states.some((s) => s.committed)).toBe(false);
    } finally {
      act(() => r.unmount());
    }
  });
});

describe('useCorrection', () => {
  it('renders nothing until a view replaces a value shown, then the correction and its causes', () => {
    const ctl = Correctable.create<number>();
    const seen: (Correction<number> | undefined)[] = [];
    function Line({ c }: { c: Correctable<number> }): ReactNode {
      seen.push(useCorrection(c));
      return null;
    }
    const container = document.createElement('div');
    const r = createRoot(container);
    const cause = { op: 'counter.add', id: 'r1#4', key: 'counter/n' };
    try {
      act(() => r.render(createElement(Line, { c: ctl.correctable })));
      act(() => void ctl.update(100, 'weak'));
      expect(seen.at(-1)).toBeUndefined();
      act(() => void ctl.close(60, 'strong', [cause]));
      expect(seen.at(-1)).toEqual({ tentative: 100, final: 60, level: 'strong', causes: [cause] });
    } finally {
      act(() => r.unmount());
    }
  });
});
