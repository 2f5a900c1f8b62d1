import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The browser build (scripts/build-browser.ts, `npm run build:browser`), made in memory: no Node
 * modules, no `ws`, no server code, and a module that works over the global WebSocket.
 */

/** scripts/build-browser.ts, loaded at run time (scripts/ is outside this package's tsconfig). */
interface BuildScript {
  bundleForBrowser(minify?: boolean): Promise<Bundle>;
  checkBundle(bundle: Bundle): string[];
  sizesOf(raw: Bundle, minified: Bundle): { raw: number; minified: number; gzip: number };
  breakdown(bundle: Bundle): [string, number][];
}
interface Bundle {
  readonly code: string;
  readonly metafile: Metafile;
  readonly minified: boolean;
}

/**
 * A generous ceiling, to catch something large bundled by accident, not to track the size: today
 * the bundle is ~167 KiB, ~60% of it Zod (the protocol's frame schemas, imported as `* as z` so
 * that esbuild can drop what they do not use; ~96 KiB). Pulling all of Zod back in would make it
 * ~500 KiB; pino, prom-client or any server module would add hundreds more. The SDK's own code,
 * with the protocol's, is ~60 KiB, so 200 KiB leaves it room to grow.
 */
const MAX_MINIFIED_BYTES = 200 * 1024;

let script: BuildScript;
let raw: Bundle;
let minified: Bundle;
const tmp = mkdtempSync(join(tmpdir(), 'creek-browser-build-'));

beforeAll(async () => {
  const url = new URL('../scripts/build-browser.ts', import.meta.url).href;
  script = (await import(url)) as BuildScript;
  [raw, minified] = await Promise.all([script.bundleForBrowser(false), script.bundleForBrowser()]);
  const s = script.sizesOf(raw, minified);
  console.log(
    `browser bundle: raw ${s.raw} B, minified ${s.minified} B, minified+gzip ${s.gzip} B; ` +
      script
        .breakdown(minified)
        .map(([p, n]) => `${p} ${n} B`)
        .join(', '),
  );
}, 60_000);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('the browser bundle', () => {
  it('passes the build script own checks', () => {
    expect(script.checkBundle(raw)).toEqual([]);
    expect(script.checkBundle(minified)).toEqual([]);
  });

  it('imports nothing: no node: specifiers, no require of Node built-ins, no ws', () => {
    for (const b of [raw, minified])
      for (const output of Object.values(b.metafile.outputs)) expect(output.imports).toEqual([]);
    // No module loading of any kind, so no Node built-in either. (Checked on the minified code,
    // which has no comments: the raw one quotes `import()` in one of Zod's.)
    const code = minified.code;
    expect(around(code, /["'`]node:/g)).toEqual([]);
    expect(around(code, /\brequire\s*\(/g)).toEqual([]);
    expect(around(code, /\bimport\s*\(/g)).toEqual([]);
    expect(around(code, /\bfrom\s*["'`]/g)).toEqual([]);
    // `ws` is there only as the empty module its "browser": false mapping makes of it.
    for (const b of [raw, minified]) {
      const inputs = Object.keys(b.metafile.inputs);
      expect(inputs.filter((p) => /node_modules[\\/]ws[\\/]/.test(p))).toEqual([
        '(disabled):../../node_modules/ws/browser.js',
      ]);
      expect(b.code).not.toContain('ws does not work in the browser');
    }
  });

  it('holds no server code (client.ts imports only types from @creek/server)', () => {
    const inputs = Object.keys(raw.metafile.inputs);
    expect(inputs.filter((p) => /server[\\/]/.test(p))).toEqual([]);
    const markers = /better-sqlite3|ReplicaServer|ReplicaHost|pino|prom-client|@creek\/server/g;
    expect(around(raw.code, markers)).toEqual([]);
    // What it does hold: the SDK, the protocol, Zod, RxJS's Observable.
    expect(inputs).toContain('src/creek-binding.ts');
    expect(inputs).toContain('../protocol/src/codec.ts');
  });

  it('holds only the English one of Zod locales', () => {
    const locales = Object.keys(minified.metafile.inputs).filter((p) => p.includes('/locales/'));
    expect(locales.filter((p) => !p.startsWith('zod-en:'))).toEqual([
      '../../node_modules/zod/v4/locales/en.js',
    ]);
  });

  it(`is at most ${MAX_MINIFIED_BYTES / 1024} KiB minified`, () => {
    expect(Buffer.byteLength(minified.code)).toBeLessThan(MAX_MINIFIED_BYTES);
    expect(Buffer.byteLength(minified.code)).toBeLessThan(Buffer.byteLength(raw.code));
  });

  it('the checks see what they look for', () => {
    const bad: Bundle = {
      code: 'import{readFileSync as r}from"node:fs";const w=require("ws");const s=await import("pino");',
      minified: true,
      metafile: {
        inputs: {
          '../../node_modules/ws/index.js': { bytes: 1, imports: [] },
          '../server/src/node/replica-server.ts': { bytes: 1, imports: [] },
          '../../node_modules/zod/v4/locales/ru.js': { bytes: 1, imports: [] },
        },
        outputs: {
          'dist/browser/creek-client.js': {
            bytes: 1,
            inputs: {},
            imports: [{ path: 'node:fs', kind: 'import-statement', external: true }],
            exports: [],
          },
        },
      },
    };
    const problems = script.checkBundle(bad).join('\n');
    for (const expected of [
      "still imports 'node:fs'",
      'the ws package',
      'server code',
      'a Zod locale',
      "loads 'ws' at run time",
      "loads 'pino' at run time",
      "imports 'node:fs'",
      'a "node:" specifier',
      "'pino' appears",
    ])
      expect(problems).toContain(expected);
  });

  it('exports a working SDK over the global WebSocket', async () => {
    const file = join(tmp, 'creek-client.js');
    writeFileSync(file, minified.code);
    const g = globalThis as { WebSocket?: unknown };
    const before = g.WebSocket;
    g.WebSocket = FakeSocket;
    try {
      const sdk = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
      for (const name of ['connect', 'Correctable', 'CreekClient', 'CreekBinding', 'Unavailable'])
        expect(typeof sdk[name], name).toBe('function');
      const connect = sdk.connect as (o: { urls: string[]; token: string }) => {
        invoke(
          op: string,
          args: unknown,
        ): PromiseLike<unknown> & {
          setCallbacks(c: { onUpdate(v: unknown, view: unknown): void }): PromiseLike<unknown>;
        };
        replica(): number | null;
        operations(): readonly string[] | null;
        close(): void;
      };
      const creek = connect({ urls: ['ws://replica.test/client'], token: 'secret' });
      expect(creek.operations()).toBeNull();
      const updates: unknown[] = [];
      const value = await creek
        .invoke('kv.get', { key: 'a' })
        .setCallbacks({ onUpdate: (_v, view) => updates.push(view) });
      expect(value).toBe(41);
      expect(updates).toEqual([{ value: 41, level: 'weak', final: false }]);
      expect(creek.replica()).toBe(2);
      expect(creek.operations()).toEqual(['kv.get', 'kv.put', 'shop.buy']);
      creek.close();
      const socket = FakeSocket.instances[0]!;
      expect(socket.url).toBe('ws://replica.test/client');
      expect(socket.sent.map((s) => JSON.parse(s) as Record<string, unknown>)).toMatchObject([
        { t: 'hello', token: 'secret' },
        { t: 'invoke', op: 'kv.get', args: { key: 'a' }, level: 'strong' },
      ]);
    } finally {
      g.WebSocket = before;
    }
  });
});

/** Each match of `re` in `code` with some context (so a failure shows where, not the bundle). */
function around(code: string, re: RegExp): string[] {
  return [...code.matchAll(re)].map((m) => code.slice(Math.max(0, m.index - 60), m.index + 60));
}

/** A browser-like WebSocket that answers like a replica: welcome, a tentative view, a confirm. */
class FakeSocket {
  static readonly instances: FakeSocket[] = [];
  readyState = 0;
  readonly sent: string[] = [];
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: unknown) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;

  constructor(readonly url: string) {
    FakeSocket.instances.push(this);
    setTimeout(() => {
      this.readyState = 1;
      this.onopen?.({});
    }, 0);
  }

  send(data: string): void {
    this.sent.push(data);
    const f = JSON.parse(data) as { t: string; version?: number; opId?: string };
    if (f.t === 'hello')
      this.reply({
        t: 'welcome',
        version: f.version,
        replica: 2,
        levels: ['weak', 'strong'],
        ops: ['kv.get', 'kv.put', 'shop.buy'],
      });
    if (f.t === 'invoke') {
      const outcome = { ok: true, value: 41 };
      this.reply({ t: 'view', opId: f.opId, level: 'tentative', outcome, id: null });
      this.reply({ t: 'confirm', opId: f.opId });
    }
  }

  close(): void {
    this.readyState = 3;
  }

  private reply(frame: unknown): void {
    setTimeout(() => this.onmessage?.({ data: JSON.stringify(frame) }), 0);
  }
}
