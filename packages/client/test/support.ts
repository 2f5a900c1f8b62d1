import { afterAll, afterEach, beforeAll, expect, vi } from 'vitest';
import type { Binding, ConsistencyLevel, ViewSink } from '../src/binding.js';
import { Correctable, type CorrectableOptions } from '../src/correctable.js';
import { CreekError } from '../src/errors.js';

/** Lets pending promise callbacks and the host's unhandled-rejection check run. */
export async function settle(): Promise<void> {
  await new Promise<void>((resolve) => setTimeout(resolve, 0));
  await new Promise<void>((resolve) => setTimeout(resolve, 0));
}

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(v: T): void;
  reject(e: unknown): void;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * Records every `unhandledRejection` the process sees during the file's tests and fails the test
 * in which one happened. Returns the live list.
 */
export function failOnUnhandledRejections(): unknown[] {
  const seen: unknown[] = [];
  const record = (reason: unknown): void => {
    seen.push(reason);
  };
  beforeAll(() => {
    process.on('unhandledRejection', record);
  });
  afterAll(() => {
    process.off('unhandledRejection', record);
  });
  afterEach(async () => {
    vi.useRealTimers();
    await settle();
    expect(seen).toEqual([]);
  });
  return seen;
}

/**
 * Runs `body` with only our own listener for `event` on the process (the test runner's are put
 * back afterwards), so an expected unhandled rejection or uncaught error can be observed without
 * failing the run.
 */
export async function capturingProcessEvent(
  event: 'unhandledRejection' | 'uncaughtException',
  body: () => Promise<void> | void,
): Promise<unknown[]> {
  // process as a plain emitter: its typed overloads take one event name at a time.
  const emitter: NodeJS.EventEmitter = process;
  const saved = emitter.listeners(event) as ((...args: unknown[]) => void)[];
  emitter.removeAllListeners(event);
  const seen: unknown[] = [];
  const record = (reason: unknown): void => {
    seen.push(reason);
  };
  emitter.on(event, record);
  try {
    await body();
    await settle();
  } finally {
    emitter.off(event, record);
    for (const l of saved) emitter.on(event, l);
  }
  return seen;
}

interface Submission {
  op: string;
  args: unknown;
  levels: ConsistencyLevel[];
  sink: ViewSink<unknown>;
  signal: AbortSignal | undefined;
}

/** A binding whose views the test delivers by hand, through the recorded sinks. */
export class ScriptedBinding implements Binding {
  readonly submissions: Submission[] = [];

  consistencyLevels(): ConsistencyLevel[] {
    return ['weak', 'strong'];
  }

  submitOperation<T>(
    op: string,
    args: unknown,
    levels: ConsistencyLevel[],
    sink: ViewSink<T>,
    signal?: AbortSignal,
  ): void {
    this.submissions.push({ op, args, levels, sink: sink as ViewSink<unknown>, signal });
  }

  /** The sink of the n-th submission (the latest by default). */
  sink(n = this.submissions.length - 1): ViewSink<unknown> {
    const s = this.submissions[n];
    if (s === undefined) throw new Error(`no submission #${n}`);
    return s.sink;
  }
}

/** What a client's `invoke` does with a binding: a Correctable fed by the binding's views. */
export function invokeVia<T>(
  binding: Binding,
  op: string,
  args: unknown,
  levels: ConsistencyLevel[] = binding.consistencyLevels(),
  options?: CorrectableOptions,
): Correctable<T> {
  const ctl = Correctable.create<T>(options);
  binding.submitOperation(op, args, levels, ctl.sink, ctl.signal);
  return ctl.correctable;
}

/**
 * The error `c` ends with; a guard of `guardMs` fails the test if it never settles (the bug the
 * edge tests look for: calls that stay `updating` forever).
 */
export async function failure(c: Correctable<unknown>, guardMs: number): Promise<CreekError> {
  let guard: ReturnType<typeof setTimeout> | undefined;
  const unsettled = new Promise<never>((_, reject) => {
    guard = setTimeout(() => reject(new Error('the call did not settle')), guardMs);
  });
  try {
    await Promise.race([c, unsettled]);
  } catch (e) {
    if (!(e instanceof CreekError)) throw e;
    return e;
  } finally {
    clearTimeout(guard);
  }
  throw new Error('expected the call to fail');
}

/** The levels of the views `c` delivered, in order, once it is final. */
export async function levelsOf(c: Correctable<unknown>): Promise<string[]> {
  const levels: string[] = [];
  c.setCallbacks({
    onUpdate: (_, v) => levels.push(v.level),
    onFinal: (_, v) => levels.push(v.level),
  });
  await c;
  return levels;
}
