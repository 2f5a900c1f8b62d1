import { Worker } from 'node:worker_threads';
import type {
  CheckReply,
  CheckRequest,
  Invocation,
  RunResult,
  StateEntries,
} from './check-messages.js';

type Pending = (reply: CheckReply) => void;

/**
 * One fresh instance of the app under check: a worker thread (check-worker.ts) with its own
 * module instance and its own globals, as two replicas have. A module-level counter, a cache or a
 * global the app changes lives on in an instance from run to run, and differs between instances.
 */
export class AppInstance {
  private readonly pending = new Map<number, Pending>();
  private seq = 0;
  private failure: Error | null = null;

  private constructor(
    readonly name: string,
    private readonly worker: Worker,
  ) {}

  /** Starts the worker and resolves once it has loaded the app; rejects with why it could not. */
  static async start(name: string, appPath: string): Promise<AppInstance> {
    // Built, this module sits beside check-worker.js. Run from its TypeScript source (tests),
    // the worker is still the built one: workers do not inherit a TypeScript loader.
    const url = import.meta.url.endsWith('.ts')
      ? new URL('../../dist/check/check-worker.js', import.meta.url)
      : new URL('./check-worker.js', import.meta.url);
    const worker = new Worker(url, { workerData: { appPath }, execArgv: [] });
    const instance = new AppInstance(name, worker);
    await new Promise<void>((resolve, reject) => {
      const first = (m: CheckReply): void => {
        if (m.t === 'ready') resolve();
        else if (m.t === 'failed') reject(new Error(m.error));
      };
      worker.once('message', first);
      worker.once('error', reject);
    }).catch(async (err: unknown) => {
      await worker.terminate();
      throw err;
    });
    worker.on('message', (m: CheckReply) => {
      if (m.t === 'ready' || m.t === 'failed') return;
      const done = instance.pending.get(m.seq);
      instance.pending.delete(m.seq);
      done?.(m);
    });
    const lost = (err: Error): void => {
      instance.failure ??= new Error(`instance ${name} of the app failed: ${err.message}`);
      for (const done of instance.pending.values()) done({ t: 'failed', error: err.message });
      instance.pending.clear();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`its worker exited with status ${code}`)));
    return instance;
  }

  /** Builds the current state by running `ops` in order from an empty one; returns it. */
  async build(ops: readonly Invocation[]): Promise<StateEntries> {
    const reply = await this.ask((seq) => ({ t: 'build', seq, ops }));
    if (reply.t !== 'built') throw new Error('unexpected reply from the app instance');
    return reply.state;
  }

  /** Takes `state` as the current state. */
  async adopt(state: StateEntries): Promise<void> {
    const reply = await this.ask((seq) => ({ t: 'adopt', seq, state }));
    if (reply.t !== 'adopted') throw new Error('unexpected reply from the app instance');
  }

  /** One run of an op on the current state. */
  async run(invocation: Invocation): Promise<RunResult> {
    const reply = await this.ask((seq) => ({ t: 'run', seq, invocation }));
    if (reply.t !== 'ran') throw new Error('unexpected reply from the app instance');
    return reply.result;
  }

  async close(): Promise<void> {
    this.failure ??= new Error(`instance ${this.name} of the app is closed`);
    await this.worker.terminate();
  }

  private ask(request: (seq: number) => CheckRequest): Promise<CheckReply> {
    if (this.failure !== null) return Promise.reject(this.failure);
    const seq = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(seq, (reply) =>
        reply.t === 'failed' ? reject(this.failure ?? new Error(reply.error)) : resolve(reply),
      );
      this.worker.postMessage(request(seq));
    });
  }
}
