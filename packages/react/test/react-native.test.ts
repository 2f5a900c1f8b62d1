import { runInNewContext } from 'node:vm';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

/**
 * React Native readiness: the client and the hooks, bundled into one script, run where React
 * Native runs them — no DOM, no Node built-ins, no `require` or `process`, a global WebSocket and
 * `crypto.getRandomValues` without `crypto.randomUUID` (Hermes with react-native-get-random-values)
 * — rendered by React's own reconciler with a host of nothing (fixtures/no-dom-app.js).
 */
const ENTRY = fileURLToPath(new URL('fixtures/no-dom-app.js', import.meta.url));

async function bundle(): Promise<string> {
  const out = await build({
    entryPoints: [ENTRY],
    bundle: true,
    write: false,
    format: 'iife',
    globalName: 'NoDomApp',
    platform: 'neutral',
    mainFields: ['react-native', 'browser', 'module', 'main'],
    conditions: ['creek-source', 'react-native', 'browser', 'module', 'import', 'default'],
    define: { 'process.env.NODE_ENV': '"production"' },
    target: 'es2020',
    logLevel: 'silent',
  });
  return out.outputFiles[0]!.text;
}

/** A WebSocket that answers like a replica: welcome, then a tentative and a stable view. */
function fakeSocketClass(log: string[]) {
  return class FakeSocket {
    readyState = 0;
    onopen: ((ev: unknown) => void) | null = null;
    onmessage: ((ev: { data: string }) => void) | null = null;
    onclose: ((ev: unknown) => void) | null = null;
    onerror: ((ev: unknown) => void) | null = null;
    constructor(readonly url: string) {
      setTimeout(() => {
        this.readyState = 1;
        this.onopen?.({});
      }, 1);
    }
    send(text: string): void {
      const f = JSON.parse(text) as {
        t: string;
        version?: number;
        opId?: string;
        session?: string;
      };
      log.push(f.t === 'hello' ? `hello session=${f.session}` : f.t);
      const reply = (frame: unknown, ms = 1) =>
        setTimeout(() => this.onmessage?.({ data: JSON.stringify(frame) }), ms);
      if (f.t === 'hello')
        reply({
          t: 'welcome',
          version: f.version,
          replica: 0,
          levels: ['weak', 'strong'],
          ops: ['kv.get'],
          readOnly: ['kv.get'],
        });
      if (f.t === 'invoke') {
        reply({
          t: 'view',
          opId: f.opId,
          level: 'tentative',
          outcome: { ok: true, value: 41 },
          id: null,
        });
        // Later: a render may batch updates that arrive together, and show only the last.
        reply({ t: 'view', opId: f.opId, level: 'stable', outcome: { ok: true, value: 42 } }, 50);
      }
    }
    close(): void {
      this.readyState = 3;
    }
  };
}

describe('React Native readiness', () => {
  it('the client and the hooks run with no DOM, no Node built-ins, a global WebSocket and no crypto.randomUUID', async () => {
    const code = await bundle();
    // Nothing to load at run time, and nothing of Node's or the DOM's.
    expect(code).not.toMatch(/\brequire\s*\(\s*["'`](node:|ws\b|fs\b|net\b)/);
    const log: string[] = [];
    const states: { value?: unknown; level?: string; pending: boolean; status: string }[] = [];
    const sandbox: Record<string, unknown> = {
      WebSocket: fakeSocketClass(log),
      crypto: {
        getRandomValues: (a: Uint8Array) => {
          for (let i = 0; i < a.length; i++) a[i] = (i * 37 + 11) & 255;
          return a;
        },
      },
      setTimeout,
      clearTimeout,
      setInterval,
      clearInterval,
      queueMicrotask,
      console,
      AbortController,
      AbortSignal,
    };
    const app = runInNewContext(`${code}; NoDomApp`, sandbox) as {
      run(url: string, key: string, report: (s: (typeof states)[number]) => void): () => void;
    };
    // The sandbox really is bare.
    for (const name of ['document', 'window', 'process', 'require', 'Buffer'])
      expect(runInNewContext(`typeof ${name}`, sandbox), name).toBe('undefined');
    const stop = app.run('ws://replica.test/client', 'k', (s) => states.push(s));
    for (let i = 0; i < 200 && states.at(-1)?.level !== 'strong'; i++)
      await new Promise((r) => setTimeout(r, 5));
    stop();
    expect(states[0]).toMatchObject({ pending: true, status: 'connecting' });
    expect(states.at(-1)).toMatchObject({
      value: 42,
      level: 'strong',
      pending: false,
      status: 'connected',
    });
    expect(states.some((s) => s.level === 'weak' && s.value === 41)).toBe(true);
    // The session id came from getRandomValues: 16 bytes, in hex.
    expect(log[0]).toMatch(/^hello session=[0-9a-f]{32}$/);
    expect(log).toContain('invoke');
  });
});
