import { describe, expect, it } from 'vitest';
import { appOps, argsFor, parseTemplate } from '../src/page/workload-ops.js';

describe('the workload panel’s app ops', () => {
  it('lists the app’s own ops, not the built-in or reserved ones', () => {
    expect(appOps(['kv.put', 'tickets.buy', 'queue.size', 'creek.noop', 'bank.open'])).toEqual([
      'bank.open',
      'tickets.buy',
    ]);
  });

  it('fills "$key" inside strings and "$n" as a number, at any depth', () => {
    const t = parseTemplate(
      '{"event": "e-$key", "n": "$n", "list": ["$key", 3, null], "x": {"y": "$n!"}}',
    );
    expect(t.ok).toBe(true);
    if (!t.ok) return;
    expect(argsFor(t.template, 'k2', 7)).toEqual({
      event: 'e-k2',
      n: 7,
      list: ['k2', 3, null],
      x: { y: '$n!' },
    });
  });

  it('takes an empty template as no arguments, and says why text is not JSON', () => {
    expect(parseTemplate('')).toEqual({ ok: true, template: {} });
    const bad = parseTemplate('{"event": ');
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.problem).toMatch(/^the arguments are not JSON: /);
  });
});
