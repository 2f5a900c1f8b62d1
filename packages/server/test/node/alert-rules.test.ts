import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const OPERATIONS = fileURLToPath(new URL('../../../../docs/operations.md', import.meta.url));
const METRICS = fileURLToPath(new URL('../../src/node/metrics.ts', import.meta.url));

/**
 * The Prometheus alert rules docs/operations.md gives operators query metrics /metrics serves: a
 * metric renamed or dropped would leave an alert that never fires.
 */
describe('the alert rules in the operations guide', () => {
  const page = readFileSync(OPERATIONS, 'utf8');
  const rules = [...page.matchAll(/```yaml\n([\s\S]*?)```/g)]
    .map((m) => m[1]!)
    .filter((block) => block.includes('alert:'));
  const served = new Set(
    [...readFileSync(METRICS, 'utf8').matchAll(/'(creek_[a-z_]+)'/g)].map((m) => m[1]!),
  );

  it('name only metrics a replica serves, and alert on a divergence', () => {
    expect(rules.length).toBeGreaterThan(0);
    const exprs = rules.flatMap((r) => [...r.matchAll(/expr: (.*)/g)].map((m) => m[1]!));
    expect(exprs.length).toBeGreaterThan(0);
    for (const expr of exprs) {
      const metrics = expr.match(/creek_[a-z_]+/g) ?? [];
      expect(metrics.length, expr).toBeGreaterThan(0);
      for (const m of metrics) expect(served, `${m} in ${expr}`).toContain(m);
    }
    expect(exprs.some((e) => e.includes('creek_divergence'))).toBe(true);
  });

  it('give every alert a name, a severity and a summary', () => {
    for (const block of rules)
      for (const alert of block.split(/\n\s*- alert: /).slice(1)) {
        expect(alert).toMatch(/^\w+\n/);
        expect(alert).toMatch(/severity: \w+/);
        expect(alert).toMatch(/summary: /);
      }
  });
});
