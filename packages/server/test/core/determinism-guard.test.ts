import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineApp, op, type AnyOpDefinition } from '@creek/app';
import {
  guarded,
  guardRefusals,
  NondeterminismError,
} from '@creek/replica/core/determinism-guard.js';
import { runOperation } from '@creek/replica/core/run-operation.js';
import type { ExecutionJob } from '@creek/replica/core/types.js';

/** The globals the guard swaps, as they are outside any op: the functions themselves. */
function globalsNow(): unknown[] {
  return [
    Math.random,
    globalThis.Date,
    globalThis.setTimeout,
    globalThis.setInterval,
    globalThis.setImmediate,
    globalThis.queueMicrotask,
    performance.now,
    crypto.randomUUID,
    crypto.getRandomValues,
  ];
}

const TS = 1_700_000_000_000_000;
let jobs = 0;
function job(args: unknown = null): ExecutionJob {
  return {
    jobId: ++jobs,
    op: 'test',
    args: args as never,
    ts: TS,
    id: { replica: 1, eventNo: jobs },
    snapshot: { get: () => undefined, scan: () => [] },
  };
}
const def = (run: AnyOpDefinition['run']): AnyOpDefinition => ({ args: z.unknown(), run });

describe('the execution guard', () => {
  it('is in place only while the op runs, and restored after it returns or throws', () => {
    const before = globalsNow();
    let inside: unknown[] = [];
    guarded(() => {
      inside = globalsNow();
    });
    expect(inside[0]).not.toBe(before[0]);
    expect(inside[1]).not.toBe(before[1]);
    expect(globalsNow()).toEqual(before);
    expect(() =>
      guarded(() => {
        throw new Error('the op failed');
      }),
    ).toThrow('the op failed');
    expect(globalsNow()).toEqual(before);
    // Through runOperation, as every executor runs ops: a refused call, and an op's own error.
    expect(
      runOperation(
        def(() => Math.random()),
        job(),
      ).outcome.ok,
    ).toBe(false);
    expect(
      runOperation(
        def(() => {
          throw new TypeError('bad');
        }),
        job(),
      ).outcome,
    ).toEqual({ ok: false, error: 'bad' });
    expect(globalsNow()).toEqual(before);
    expect(typeof Math.random()).toBe('number');
  });

  it('puts back a global the op replaced', () => {
    const before = globalsNow();
    const r = runOperation(
      def(() => {
        Math.random = () => 0.5;
        globalThis.Date = class {} as never;
        globalThis.setTimeout = (() => 0) as never;
        return 1;
      }),
      job(),
    );
    expect(r.outcome).toEqual({ ok: true, value: 1 });
    expect(globalsNow()).toEqual(before);
  });

  it('keeps the outer installation across a nested guarded run', () => {
    const before = globalsNow();
    guarded(() => {
      const outer = globalsNow();
      guarded(() => expect(() => Math.random()).toThrow(NondeterminismError));
      // Still guarded after the inner run returned.
      expect(globalsNow()).toEqual(outer);
      expect(() => Date.now()).toThrow(NondeterminismError);
      expect(() =>
        guarded(() => {
          throw new Error('inner');
        }),
      ).toThrow('inner');
      expect(() => Date.now()).toThrow(NondeterminismError);
    });
    expect(globalsNow()).toEqual(before);
  });

  it('fails the op with a NondeterminismError, counted even when the op catches it', () => {
    const before = guardRefusals().count;
    const r = runOperation(
      def(() => {
        try {
          return Math.random();
        } catch (err) {
          return { name: (err as Error).name, isError: err instanceof NondeterminismError };
        }
      }),
      job(),
    );
    expect(r.outcome).toEqual({ ok: true, value: { name: 'NondeterminismError', isError: true } });
    expect(guardRefusals()).toEqual({
      count: before + 1,
      last: expect.stringMatching(/^Math\.random\(\) is not allowed inside an op/),
    });
  });

  it('leaves dates that do not read the clock alone', () => {
    const outside = new Date(0);
    const r = runOperation(
      def((tx) => {
        class Day extends Date {
          iso(): string {
            return this.toISOString().slice(0, 10);
          }
        }
        const at = new Date(tx.now());
        return {
          at: at.toISOString(),
          parsed: new Date('2024-02-29T12:00:00Z').getTime(),
          parts: new Date(2024, 1, 29).getDate(),
          utc: Date.UTC(2024, 1, 29),
          parse: Date.parse('2024-02-29T00:00:00Z'),
          insideIsDate: at instanceof Date,
          outsideIsDate: outside instanceof Date,
          day: new Day(tx.now()).iso(),
        };
      }),
      job(),
    );
    expect(r.outcome).toEqual({
      ok: true,
      value: {
        at: new Date(TS / 1000).toISOString(),
        parsed: Date.parse('2024-02-29T12:00:00Z'),
        parts: 29,
        utc: Date.UTC(2024, 1, 29),
        parse: Date.parse('2024-02-29T00:00:00Z'),
        insideIsDate: true,
        outsideIsDate: true,
        day: new Date(TS / 1000).toISOString().slice(0, 10),
      },
    });
  });
});

describe('an op that is not synchronous', () => {
  it('is refused at definition when run is an async function', () => {
    expect(() =>
      op({
        args: z.object({}),
        // @ts-expect-error -- an async run returns a Promise, which is not a JSON result
        async run() {
          return 1;
        },
      }),
    ).toThrow(/^op\(\.\.\.\): run is an async function, and an op must be synchronous/);
    // Without op(), defineApp refuses it and names it.
    expect(() =>
      defineApp({
        'slow.op': {
          args: z.object({}),
          run: async () => 1,
        },
      }),
    ).toThrow(/^operation 'slow\.op': run is an async function/);
  });

  it('fails at its first run when run returns a Promise or a thenable', () => {
    for (const value of [Promise.resolve(1), { then: () => undefined }]) {
      const r = runOperation(
        def(() => value),
        job(),
      );
      expect(r.outcome).toEqual({
        ok: false,
        error: expect.stringMatching(/^operation 'test' returned a Promise .* must be synchronous/),
      });
    }
  });
});
