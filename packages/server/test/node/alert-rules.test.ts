import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const RULES = fileURLToPath(
  new URL('../../../../deploy/prometheus/creek-alerts.yml', import.meta.url),
);
/** The files that declare the replica's metrics: its own, and the edge's. */
const METRICS = ['metrics.ts', 'edge-metrics.ts'].map((f) =>
  fileURLToPath(new URL(`../../src/node/${f}`, import.meta.url)),
);

/**
 * The Prometheus alert rules operators load (deploy/prometheus/creek-alerts.yml) query metrics
 * /metrics serves: a metric renamed or dropped would leave an alert that never fires. This is the
 * quick check, from the source; deploy.e2e.test.ts checks the same against a real replica's
 * /metrics, and runs promtool.
 */
describe('the alert rules operators load', () => {
  const rules = (
    parse(readFileSync(RULES, 'utf8')) as {
      groups: {
        rules: {
          alert: string;
          expr: string;
          labels?: Record<string, string>;
          annotations?: Record<string, string>;
        }[];
      }[];
    }
  ).groups.flatMap((g) => g.rules);
  const served = new Set(
    METRICS.flatMap((f) =>
      [...readFileSync(f, 'utf8').matchAll(/'(creek_[a-z_]+)'/g)].map((m) => m[1]!),
    ),
  );

  it('name only metrics a replica serves, and alert on a divergence', () => {
    expect(rules.length).toBeGreaterThan(0);
    for (const { alert, expr } of rules) {
      const metrics = expr.match(/creek_[a-z_]+/g) ?? [];
      // `up` is Prometheus's own (one series per scraped target), not the replica's.
      if (!/\bup\{/.test(expr)) expect(metrics.length, `${alert}: ${expr}`).toBeGreaterThan(0);
      for (const m of metrics) expect(served, `${m} in ${alert}`).toContain(m);
    }
    expect(rules.some((r) => r.expr.includes('creek_divergence'))).toBe(true);
  });

  it('give every alert a name, a severity, a summary and a runbook link', () => {
    for (const r of rules) {
      expect(r.alert).toMatch(/^Creek\w+$/);
      expect(r.labels?.severity, r.alert).toMatch(/^(warning|critical)$/);
      expect(r.annotations?.summary, r.alert).toBeTruthy();
      expect(r.annotations?.runbook_url, r.alert).toMatch(/docs\/runbook\.md#/);
    }
  });
});
