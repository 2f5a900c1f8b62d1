import { ERROR_CODES } from '@creek/protocol';
import { describe, expect, it } from 'vitest';
import { compareLevels, isConsistencyLevel, weakestLevel } from '../src/binding.js';
import {
  Cancelled,
  ClientClosed,
  CreekError,
  errorFromWire,
  InvalidArguments,
  OperationFailed,
  ProtocolError,
  Timeout,
  Unauthorized,
  Unavailable,
} from '../src/errors.js';

describe('errors', () => {
  it('each is a CreekError and an Error, with its code and name', () => {
    const cases: [CreekError, string, string][] = [
      [
        new InvalidArguments({ op: 'incr', field: 'by', problem: 'expected a number' }),
        'invalid-arguments',
        'InvalidArguments',
      ],
      [new OperationFailed('insufficient funds'), 'operation-failed', 'OperationFailed'],
      [new Unavailable(), 'unavailable', 'Unavailable'],
      [new Timeout(100), 'timeout', 'Timeout'],
      [new Unauthorized(), 'unauthorized', 'Unauthorized'],
      [new ProtocolError('bad frame'), 'protocol', 'ProtocolError'],
      [new Cancelled(), 'cancelled', 'Cancelled'],
      [new ClientClosed(false), 'closed', 'ClientClosed'],
    ];
    for (const [e, code, name] of cases) {
      expect(e).toBeInstanceOf(CreekError);
      expect(e).toBeInstanceOf(Error);
      expect(e.code).toBe(code);
      expect(e.name).toBe(name);
      expect(e.message.length).toBeGreaterThan(20);
      expect(String(e)).toMatch(new RegExp(`^${name}: `));
    }
  });

  it('InvalidArguments names the field', () => {
    const e = new InvalidArguments({ op: 'incr', field: 'by', problem: 'expected a number' });
    expect(e.field).toBe('by');
    expect(e.op).toBe('incr');
    expect(e.message).toMatch(/'incr'.*field 'by'.*expected a number.*fix the arguments/);
  });

  it('InvalidArguments reads the fields out of a replica’s message', () => {
    const e = new InvalidArguments(
      "invalid arguments for 'transfer': amount: Too small; to.account: Required",
    );
    expect(e.op).toBe('transfer');
    expect(e.field).toBe('amount');
    expect(e.fields).toEqual(['amount', 'to.account']);
    const plain = new InvalidArguments('something else entirely');
    expect(plain.field).toBeUndefined();
    expect(plain.message).toMatch(/something else entirely/);
  });

  it('OperationFailed carries the op’s message unchanged', () => {
    const e = new OperationFailed({ op: 'withdraw', reason: 'insufficient funds' });
    expect(e.reason).toBe('insufficient funds');
    expect(e.op).toBe('withdraw');
    expect(e.message).toMatch(/'withdraw' failed: insufficient funds/);
    expect(new OperationFailed('x').reason).toBe('x');
  });

  it('messages say what to do', () => {
    expect(new Unavailable().message).toMatch(/try again later/);
    expect(new Timeout(250).message).toMatch(/250 ms.*raise timeoutMs/);
    expect(new Unauthorized().message).toMatch(/token/);
    expect(new ProtocolError('x').message).toMatch(/same Creek version/);
    expect(new Cancelled('user left').message).toMatch(/AbortSignal: user left/);
    expect(new ClientClosed(false).message).toMatch(/nothing was sent.*connect\(\)/);
  });

  it('say honestly whether the op may still take effect', () => {
    expect(new ProtocolError('x')).toMatchObject({ mayHaveTakenEffect: true });
    expect(new ProtocolError('x').message).toMatch(/may still take effect/);
    expect(new ProtocolError('x', { mayHaveTakenEffect: false }).message).toMatch(/not applied/);
    expect(new ClientClosed(true).message).toMatch(/was sent and may still take effect/);
    expect(new ClientClosed(true).mayHaveTakenEffect).toBe(true);
  });

  it('keeps a cause', () => {
    const cause = new Error('socket closed');
    expect(new Unavailable('no answer', { cause }).cause).toBe(cause);
    expect(new Cancelled(cause).cause).toBe(cause);
  });

  it('maps every wire error code', () => {
    for (const code of ERROR_CODES) {
      const e = errorFromWire(code, `message for ${code}`);
      expect(e).toBeInstanceOf(CreekError);
      expect(e.message).toMatch(`message for ${code}`);
    }
    expect(errorFromWire('unauthorized', 'x')).toBeInstanceOf(Unauthorized);
    expect(errorFromWire('unavailable', 'x')).toBeInstanceOf(Unavailable);
    expect(errorFromWire('busy', 'x')).toBeInstanceOf(Unavailable);
    expect(errorFromWire('bad-frame', 'x')).toBeInstanceOf(ProtocolError);
    // An error frame that names an op refuses that op's frame: it was not applied.
    expect(errorFromWire('bad-frame', 'x')).toMatchObject({ mayHaveTakenEffect: false });
    expect(errorFromWire('bad-frame', 'x').message).toMatch(/the op was not applied/);
    expect(errorFromWire('unknown-op', 'x')).toMatchObject({
      code: 'invalid-arguments',
      field: 'op',
    });
    // An unknown op is a wrong name, not wrong arguments: the advice says so.
    const unknown = errorFromWire(
      'unknown-op',
      "unknown operation 'kv.gett'; this app has: kv.get",
    );
    expect(unknown.message).toMatch(/check the op name/);
    expect(unknown.message).not.toMatch(/fix the arguments/);
    expect(
      errorFromWire('invalid-arguments', "invalid arguments for 'incr': by: Expected number"),
    ).toMatchObject({ op: 'incr', field: 'by' });
  });
});

describe('consistency levels', () => {
  it('orders weak before strong', () => {
    expect(compareLevels('weak', 'strong')).toBeLessThan(0);
    expect(compareLevels('strong', 'strong')).toBe(0);
    expect(weakestLevel(['strong', 'weak'])).toBe('weak');
    expect(weakestLevel([])).toBe('strong');
    expect(isConsistencyLevel('weak')).toBe(true);
    expect(isConsistencyLevel('linearizable')).toBe(false);
  });
});
