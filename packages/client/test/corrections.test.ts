import { describe, expect, it } from 'vitest';
import { CreekClient } from '../src/client.js';
import { Correctable, type Correction } from '../src/correctable.js';
import { ScriptedBinding } from './support.js';

/**
 * Explained corrections in the SDK: a view whose value replaces a different one the caller was
 * shown is a correction, with the causes the replica gave (or none). `onCorrection` hears each,
 * just before the view's own callback; `correction()` keeps the latest; a cached view replaced by
 * a replica's answer is no correction.
 */
describe('onCorrection', () => {
  const cause = { op: 'bank.withdraw', id: 'r2#17', key: 'bank/alice/balance' };

  it('tells a correction, its causes, and nothing when the final view confirms', async () => {
    const binding = new ScriptedBinding();
    const creek = new CreekClient(binding);
    const seen: (string | Correction<unknown>)[] = [];
    const call = creek.invoke('bank.balance', {});
    call.setCallbacks({
      onUpdate: (v) => seen.push(`update ${String(v)}`),
      onFinal: (v) => seen.push(`final ${String(v)}`),
      onCorrection: (c) => seen.push(c),
    });
    binding.sink().view({ value: 100, level: 'weak', final: false });
    binding.sink().view({ value: 100, level: 'weak', final: false });
    binding.sink().view({ value: 60, level: 'strong', final: true, causes: [cause] });
    expect(await call).toBe(60);
    expect(seen).toEqual([
      'update 100',
      'update 100',
      { tentative: 100, final: 60, level: 'strong', causes: [cause] },
      'final 60',
    ]);
    expect(call.correction()).toEqual({
      tentative: 100,
      final: 60,
      level: 'strong',
      causes: [cause],
    });
    // Attached late: the latest correction at once, with the final view.
    const late: Correction<unknown>[] = [];
    call.setCallbacks({ onCorrection: (c) => late.push(c) });
    expect(late).toEqual([call.correction()]);

    const confirmed = creek.invoke('bank.balance', {});
    const none: Correction<unknown>[] = [];
    confirmed.setCallbacks({ onCorrection: (c) => none.push(c) });
    binding.sink().view({ value: { a: 1, b: 2 }, level: 'weak', final: false });
    binding.sink().view({ value: { b: 2, a: 1 }, level: 'strong', final: true });
    await confirmed;
    expect(none).toEqual([]);
    expect(confirmed.correction()).toBeUndefined();
  });

  it('counts a newer tentative answer as a correction too, without causes when none came', () => {
    const ctl = Correctable.create<number>();
    const seen: Correction<number>[] = [];
    ctl.correctable.setCallbacks({ onCorrection: (c) => seen.push(c) });
    ctl.update(5, 'cached');
    ctl.update(7, 'weak'); // replaces a cached value: no correction
    ctl.update(8, 'weak');
    ctl.close(8, 'strong');
    expect(seen).toEqual([{ tentative: 7, final: 8, level: 'weak', causes: [] }]);
  });
});
