/**
 * The page of sdk-in-browser.page.test.ts: @creek/client in Chromium against a real cluster, over the
 * browser's own WebSocket. It runs a fixed script of calls, shows every view in the page as it
 * arrives, and leaves the record in `window.SDK_RESULT` (or the failure in `window.SDK_ERROR`).
 */
import { connect } from '@creek/client';

interface Config {
  readonly urls: string[];
  readonly token: string;
  /** A key no other test uses, so the values are known. */
  readonly key: string;
}

/** One view, in the order the page got it. */
export interface SeenView {
  readonly call: string;
  readonly kind: 'update' | 'final' | 'error';
  readonly value?: unknown;
  readonly level?: string;
  readonly final?: boolean;
  readonly error?: string;
}

export interface SdkPageResult {
  readonly views: SeenView[];
  /** Every frame's type, as the replica sent them (`welcome`, `view:tentative`, `confirm`, …). */
  readonly frames: string[];
  readonly speculation: { runs: unknown[]; aborted: unknown[]; result: unknown };
  readonly replica: number | null;
  readonly globals: { process: string; require: string; Buffer: string };
}

declare global {
  interface Window {
    CREEK_PAGE: Config;
    SDK_RESULT?: SdkPageResult;
    SDK_ERROR?: string;
  }
}

const config = window.CREEK_PAGE;
const list = document.getElementById('views')!;
const views: SeenView[] = [];
const frames: string[] = [];

/** The browser's WebSocket, noting each frame the replica sends (the SDK sees the same frames). */
class ObservedWebSocket extends WebSocket {
  constructor(url: string) {
    super(url);
    this.addEventListener('message', (ev: MessageEvent<string>) => {
      const f = JSON.parse(ev.data) as { t: string; level?: string };
      frames.push(f.level === undefined ? f.t : `${f.t}:${f.level}`);
    });
  }
}

function show(v: SeenView): void {
  views.push(v);
  const li = document.createElement('li');
  li.className =
    v.kind === 'error' ? 'error' : v.kind === 'update' ? 'tentative' : String(v.level ?? '');
  li.textContent = `${v.call}: ${v.kind} ${v.kind === 'error' ? v.error : JSON.stringify(v.value)} (${v.level ?? ''})`;
  list.append(li);
}

/** Records an op's views as they arrive, and resolves with its final value. */
function watch<T>(
  call: string,
  c: PromiseLike<T> & {
    setCallbacks(cb: {
      onUpdate(value: T, view: { level: string; final: boolean }): void;
      onFinal(value: T, view: { level: string; final: boolean }): void;
      onError(e: Error): void;
    }): unknown;
  },
): PromiseLike<T> {
  c.setCallbacks({
    onUpdate: (value, view) => show({ call, kind: 'update', value, ...view }),
    onFinal: (value, view) => show({ call, kind: 'final', value, ...view }),
    onError: (e) => show({ call, kind: 'error', error: `${e.name}: ${e.message}` }),
  });
  return c;
}

async function run(): Promise<SdkPageResult> {
  const creek = connect({
    urls: config.urls,
    token: config.token,
    // Kept at the first URL that answers, which the test checks: on a loaded machine the probes
    // could find another replica of the same machine nearer.
    nearest: false,
    // The cast: the SDK's socket type takes `(ev: unknown) => void` handlers, and the DOM's
    // WebSocket (like ws's) declares `(ev: Event) => any`, which TypeScript will not accept.
    WebSocket: ObservedWebSocket,
  });
  const key = config.key;
  await watch('increment', creek.invoke('kv.increment', { key }));
  await watch('increment-strong', creek.invokeStrong('kv.increment', { key, by: 2 }));
  await watch('get-weak', creek.invokeWeak('kv.get', { key }));
  await watch(
    'put-weak',
    creek.invokeWeak('kv.put', { key: `${key}/note`, value: { hi: 'there' } }),
  );
  await watch('get-note', creek.invoke('kv.get', { key: `${key}/note` }));
  await watch('enqueue', creek.invoke('queue.enqueue', { queue: key, item: 'ticket-1' }));
  await watch('dequeue', creek.invokeStrong('queue.dequeue', { queue: key }));
  const runs: unknown[] = [];
  const aborted: unknown[] = [];
  const result = await creek.invoke('kv.increment', { key, by: 10 }).speculate(
    (n) => {
      runs.push(n);
      return `rendered ${String(n)}`;
    },
    (n) => aborted.push(n),
  );
  show({ call: 'speculate', kind: 'final', value: result });
  const replica = creek.replica();
  creek.close();
  const g = globalThis as Record<string, unknown>;
  return {
    views,
    frames,
    speculation: { runs, aborted, result },
    replica,
    globals: { process: typeof g.process, require: typeof g.require, Buffer: typeof g.Buffer },
  };
}

run().then(
  (r) => {
    window.SDK_RESULT = r;
    document.body.dataset.done = 'ok';
  },
  (e: unknown) => {
    window.SDK_ERROR = e instanceof Error ? `${e.name}: ${e.message}\n${e.stack}` : String(e);
    document.body.dataset.done = 'error';
  },
);
