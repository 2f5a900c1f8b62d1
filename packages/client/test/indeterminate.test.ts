import { describe, expect, it } from 'vitest';
import type { Correctable } from '../src/correctable.js';
import {
  ClientClosed,
  InvalidArguments,
  OperationFailed,
  Timeout,
  Unavailable,
  type CreekError,
} from '../src/errors.js';
import { scriptedClients, type Frame } from './scripted-sockets.js';
import { failure as failOrGuard } from './support.js';

/**
 * Honest outcomes: every error says whether its op may have taken effect, and when it may, the
 * caller can await the op's fate or abandon it for good (`creek.abandon`, decided by the cluster's
 * committed order: the server's session-dedupe.ts). The replica is played through a scripted socket.
 */
const failure = (c: Correctable<unknown>): Promise<CreekError> => failOrGuard(c, 5_000);

const client = scriptedClients();

const stable = (opId: unknown, outcome: Frame) => ({ t: 'view', opId, level: 'stable', outcome });
const busy = (opId: unknown) => ({ t: 'error', opId, code: 'busy', message: 'too many ops' });

/** An op sent, its connection dropped, its resubmission refused: it may have taken effect. */
async function indeterminateOp() {
  const c = client();
  const s = await c.socket(0);
  s.welcome();
  const op = c.creek.invokeStrong('kv.increment' as never, { key: 'n' } as never);
  const [sent] = s.invokes();
  s.close();
  const s2 = await c.socket(1);
  s2.welcome();
  s2.receive(busy(sent!.opId));
  const e = await failure(op);
  return { ...c, s2, sent: sent!, e };
}

describe('an op that may have taken effect (indeterminate)', () => {
  it('says so, and settled() resolves committed with its stable outcome once a replica has it', async () => {
    const { e, socket, s2, sent } = await indeterminateOp();
    expect(e).toBeInstanceOf(Unavailable);
    expect(e.mayHaveTakenEffect).toBe(true);
    expect(e.indeterminate).not.toBeNull();
    const fate = e.indeterminate!.settled();
    s2.close();
    const s3 = await socket(2);
    s3.welcome();
    // Still resubmitted, same number: its fate is learnt, and it is applied once.
    expect(s3.invokes().map((f) => [f.opId, f.seq])).toEqual([[sent.opId, sent.seq]]);
    s3.receive(stable(sent.opId, { ok: true, value: 3 }));
    await expect(fate).resolves.toEqual({ fate: 'committed', outcome: { ok: true, value: 3 } });
  });

  it('abandon(): the op is not resubmitted, the cluster is asked, and an abandoned answer settles it', async () => {
    const { e, socket, s2, sent, creek } = await indeterminateOp();
    const settled = e.indeterminate!.settled();
    const abandoned = e.indeterminate!.abandon();
    const [ask] = s2.invokes().filter((f) => f.op === 'creek.abandon');
    expect(ask).toMatchObject({ op: 'creek.abandon', args: { seq: sent.seq }, level: 'strong' });
    expect(ask!.seq as number).toBeGreaterThan(sent.seq as number);
    // The session does not acknowledge past the op while its fate is being decided.
    expect(ask!.acked as number).toBeLessThanOrEqual(sent.seq as number);
    // A copy of the op committed after the abandon is a no-op there: a commit notice for it, on
    // the connection it was last sent on, settles nothing; only the abandon's answer does.
    s2.receive({ t: 'committed', below: ask!.seq as number });
    // Another connection: the abandon is resubmitted, the op itself is not.
    s2.close();
    const s3 = await socket(2);
    s3.welcome();
    expect(s3.invokes().map((f) => f.op)).toEqual(['creek.abandon']);
    s3.receive(stable(ask!.opId, { ok: true, value: { abandoned: true } }));
    await expect(abandoned).resolves.toEqual({ fate: 'abandoned' });
    await expect(settled).resolves.toEqual({ fate: 'abandoned' });
    // Settled: the next op acknowledges past it.
    void creek.invokeWeak('kv.put' as never, { key: 'x', value: 1 } as never);
    const next = s3.invokes().at(-1)!;
    expect(next.acked as number).toBeGreaterThan(sent.seq as number);
  });

  it('abandon() of an op that took effect first resolves committed, with the outcome the cluster kept', async () => {
    const { e, s2 } = await indeterminateOp();
    const abandoned = e.indeterminate!.abandon();
    const [ask] = s2.invokes().filter((f) => f.op === 'creek.abandon');
    s2.receive(
      stable(ask!.opId, { ok: true, value: { abandoned: false, outcome: { ok: true, value: 7 } } }),
    );
    await expect(abandoned).resolves.toEqual({
      fate: 'committed',
      outcome: { ok: true, value: 7 },
    });
    // Asking again changes nothing.
    await expect(e.indeterminate!.abandon()).resolves.toEqual({
      fate: 'committed',
      outcome: { ok: true, value: 7 },
    });
  });

  it('close() ends a wait for the fate with ClientClosed', async () => {
    const { e, creek } = await indeterminateOp();
    const fate = e.indeterminate!.settled();
    creek.close();
    await expect(fate).rejects.toBeInstanceOf(ClientClosed);
  });
});

describe('whether an error’s op may have taken effect', () => {
  it('a timeout before the op was sent: it did not, and it never will be sent', async () => {
    const { creek, socket } = client();
    const op = creek.invoke('kv.put' as never, { key: 'k', value: 1 } as never, { timeoutMs: 20 });
    const e = await failure(op);
    expect(e).toBeInstanceOf(Timeout);
    expect(e.mayHaveTakenEffect).toBe(false);
    expect(e.indeterminate).toBeNull();
    const s = await socket(0);
    s.welcome();
    expect(s.invokes()).toEqual([]);
  });

  it('a timeout after the op was sent: it may have, and its fate can be awaited', async () => {
    const { creek, socket } = client();
    const s = await socket(0);
    s.welcome();
    const op = creek.invokeStrong('kv.put' as never, { key: 'k', value: 1 } as never, {
      timeoutMs: 20,
    });
    const e = await failure(op);
    expect(e).toBeInstanceOf(Timeout);
    expect(e.mayHaveTakenEffect).toBe(true);
    const fate = e.indeterminate!.settled();
    const [sent] = s.invokes();
    s.receive(stable(sent!.opId, { ok: true, value: null }));
    await expect(fate).resolves.toEqual({ fate: 'committed', outcome: { ok: true, value: null } });
  });

  it('a weak op’s failure is tentative: it may still take effect where it is committed', async () => {
    const { creek, socket } = client();
    const s = await socket(0);
    s.welcome();
    const op = creek.invokeWeak('kv.increment' as never, { key: 'n' } as never);
    const [sent] = s.invokes();
    s.receive({
      t: 'view',
      opId: sent!.opId,
      level: 'tentative',
      outcome: { ok: false, error: 'not a number' },
      id: { replica: 0, eventNo: 4 },
    });
    const e = await failure(op);
    expect(e).toBeInstanceOf(OperationFailed);
    expect(e.mayHaveTakenEffect).toBe(true);
    const fate = e.indeterminate!.settled();
    s.receive({ t: 'committed', below: (sent!.seq as number) + 1 });
    await expect(fate).resolves.toEqual({ fate: 'committed', outcome: null });
  });

  it('a strong op’s stable failure, a weak read’s failure and refused arguments: it did not', async () => {
    const { creek, socket } = client();
    const s = await socket(0);
    s.welcome();
    const strong = creek.invokeStrong('kv.increment' as never, { key: 'n' } as never);
    const read = creek.invokeWeak('kv.get' as never, { key: 'n' } as never);
    const [a, b] = s.invokes();
    s.receive(stable(a!.opId, { ok: false, error: 'not a number' }));
    s.receive({
      t: 'view',
      opId: b!.opId,
      level: 'tentative',
      outcome: { ok: false, error: 'nope' },
      id: null,
    });
    for (const c of [strong, read]) {
      const e = await failure(c);
      expect(e).toBeInstanceOf(OperationFailed);
      expect(e.mayHaveTakenEffect).toBe(false);
      expect(e.indeterminate).toBeNull();
    }
    const bad = await failure(creek.invoke('' as never, {} as never));
    expect(bad).toBeInstanceOf(InvalidArguments);
    expect(bad.mayHaveTakenEffect).toBe(false);
  });
});
