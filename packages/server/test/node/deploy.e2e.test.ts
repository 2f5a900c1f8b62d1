import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { connect } from '@creek/client';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { readSettings } from '../../src/node/settings.js';
import { START_OPTIONS, StartSettingsSchema } from '../../src/node/config.js';

/**
 * What an operator deploys beside the replicas (deploy/): the alert rules and their unit tests
 * (promtool), the Prometheus configuration, the Grafana dashboard, the systemd unit and its
 * example config. Each is checked with the tool that will read it, and every metric the rules and
 * the dashboard query is one a real replica's /metrics serves.
 */

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const DEPLOY = join(ROOT, 'deploy');
/** In CI a missing tool fails its test; elsewhere the test is skipped and says what to install. */
const IN_CI = (process.env.CI ?? '') !== '' && process.env.CI !== 'false';

function which(tool: string): string | null {
  const r = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}
const promtool = which('promtool');
const systemdAnalyze = which('systemd-analyze');

function run(cmd: string, args: readonly string[], cwd: string): { status: number; out: string } {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
}

interface AlertRule {
  alert: string;
  expr: string;
  annotations: Record<string, string>;
}
const rules: AlertRule[] = (
  parse(readFileSync(join(DEPLOY, 'prometheus/creek-alerts.yml'), 'utf8')) as {
    groups: { rules: AlertRule[] }[];
  }
).groups.flatMap((g) => g.rules);

interface Panel {
  type: string;
  title: string;
  targets?: { expr: string }[];
}
const dashboard = JSON.parse(
  readFileSync(join(DEPLOY, 'grafana/creek-dashboard.json'), 'utf8'),
) as { panels: Panel[]; uid: string };

/**
 * The metric names a PromQL expression selects: with strings, label matchers, ranges and grouping
 * clauses taken out, every name that is not a function (followed by a parenthesis), an operator
 * keyword, a number or a duration.
 */
function metricsIn(expr: string): string[] {
  const bare = expr
    .replace(/"[^"]*"/g, '')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  return [...bare.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()/g)]
    .map((m) => m[1]!)
    .filter((n) => !['and', 'or', 'unless', 'bool', 'offset', 'by', 'on'].includes(n));
}

describe('deploy/: alert rules, dashboard and systemd unit', () => {
  let cluster: LocalCluster;
  let served: string;
  beforeAll(async () => {
    cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
    // An op through the SDK, so that the latency histogram has observations to serve.
    const client = connect({ urls: [cluster.url(0)], token: cluster.token });
    try {
      await client.invokeStrong('kv.put', { key: 'k', value: 1 });
    } finally {
      client.close();
    }
    await cluster.converged();
    served = await cluster.metrics(0);
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('serves the metrics alerts need: peer links, members, storage, clients', () => {
    expect(served).toMatch(/^creek_peer_up\{peer="1",replica="0"\} 1$/m);
    expect(served).toMatch(/^creek_peer_up\{peer="2",replica="0"\} 1$/m);
    expect(served).toMatch(/^creek_members\{replica="0"\} 3$/m);
    expect(served).toMatch(/^creek_storage_bytes\{replica="0"\} [1-9]\d*$/m);
    expect(served).toMatch(/^creek_client_connections\{replica="0"\} \d+$/m);
    expect(served).toMatch(/^# TYPE creek_client_errors_total counter$/m);
  });

  it('every metric the alert rules and the dashboard query is served by /metrics', () => {
    const names = new Set(served.split('\n').flatMap((l) => /^(\w+)[{ ]/.exec(l)?.[1] ?? []));
    const exprs = [
      ...rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })),
      ...dashboard.panels.flatMap((p) =>
        (p.targets ?? []).map((t) => ({ where: `panel "${p.title}"`, expr: t.expr })),
      ),
    ];
    expect(exprs.length).toBeGreaterThan(30);
    const missing: string[] = [];
    for (const { where, expr } of exprs) {
      const used = metricsIn(expr);
      expect(used.length, `${where} selects no metric: ${expr}`).toBeGreaterThan(0);
      // `up` is Prometheus's own, one per scraped target.
      for (const m of used) if (m !== 'up' && !names.has(m)) missing.push(`${where}: ${m}`);
    }
    expect(missing).toEqual([]);
  });

  it('every alert links a runbook section that exists, and says what it is', () => {
    const runbook = readFileSync(join(ROOT, 'docs/runbook.md'), 'utf8');
    const anchors = new Set(
      [...runbook.matchAll(/^#+ (.+)$/gm)].map((m) =>
        m[1]!
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, '')
          .replace(/ /g, '-'),
      ),
    );
    expect(rules.length).toBeGreaterThanOrEqual(10);
    for (const r of rules) {
      expect(r.annotations.summary, r.alert).toBeTruthy();
      const url = r.annotations.runbook_url ?? '';
      expect(url, r.alert).toMatch(/\/docs\/runbook\.md#[a-z0-9-]+$/);
      expect(anchors.has(url.split('#')[1]!), `${r.alert}: ${url}`).toBe(true);
    }
  });

  it.skipIf(promtool === null && !IN_CI)(
    'promtool checks the rules and the Prometheus config, and every alert fires in its unit test',
    () => {
      expect(promtool, 'promtool is missing: apt-get install prometheus').not.toBeNull();
      const dir = join(DEPLOY, 'prometheus');
      const check = run(promtool!, ['check', 'rules', 'creek-alerts.yml'], dir);
      expect(check.out).toContain(`SUCCESS: ${rules.length} rules found`);
      expect(check.status).toBe(0);
      const config = run(promtool!, ['check', 'config', '--syntax-only', 'prometheus.yml'], dir);
      expect(config.status, config.out).toBe(0);
      const test = run(promtool!, ['test', 'rules', 'creek-alerts.test.yml'], dir);
      expect(test.status, test.out).toBe(0);
      // Every alert has a case where it fires.
      const tests = readFileSync(join(dir, 'creek-alerts.test.yml'), 'utf8');
      const fired = parse(tests) as {
        tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[];
      };
      const firing = new Set(
        fired.tests.flatMap((t) =>
          t.alert_rule_test.filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname),
        ),
      );
      expect([...firing].sort()).toEqual(rules.map((r) => r.alert).sort());
    },
  );

  it.skipIf(promtool === null && !IN_CI)(
    'promtool refuses a broken rule (the check can fail)',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'creek-rules-'));
      try {
        writeFileSync(
          join(dir, 'bad.yml'),
          readFileSync(join(DEPLOY, 'prometheus/creek-alerts.yml'), 'utf8').replace(
            'expr: creek_quorate == 0',
            'expr: creek_quorate == ',
          ),
        );
        expect(run(promtool!, ['check', 'rules', 'bad.yml'], dir).status).not.toBe(0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it.skipIf(systemdAnalyze === null && !IN_CI)(
    'the systemd unit verifies, and never restarts a replica that exited 0, 2 or 3',
    () => {
      expect(systemdAnalyze, 'systemd-analyze is missing: apt-get install systemd').not.toBeNull();
      const unit = readFileSync(join(DEPLOY, 'systemd/creek-replica.service'), 'utf8');
      expect(unit).toMatch(/^Restart=on-failure$/m);
      expect(unit).toMatch(/^RestartPreventExitStatus=2 3$/m);
      const dir = mkdtempSync(join(tmpdir(), 'creek-unit-'));
      try {
        // verify checks that ExecStart's program exists; the test machine has no installed creek.
        const shim = join(dir, 'creek');
        copyFileSync('/bin/true', shim);
        writeFileSync(
          join(dir, 'creek-replica.service'),
          unit.replace('/usr/local/bin/creek', shim),
        );
        const ok = run(systemdAnalyze!, ['verify', 'creek-replica.service'], dir);
        // verify exits 0 on unknown keys too, so any word from it is a failure.
        expect(ok.out.trim()).toBe('');
        expect(ok.status).toBe(0);
        writeFileSync(
          join(dir, 'typo.service'),
          unit
            .replace('/usr/local/bin/creek', shim)
            .replace('RestartPreventExitStatus', 'RestartPreventExitStatu'),
        );
        expect(run(systemdAnalyze!, ['verify', 'typo.service'], dir).out).toMatch(/Unknown key/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it("the unit's example config is valid creek start settings", () => {
    // Its secrets and certificates sit beside it (relative names); the settings check they exist.
    const dir = mkdtempSync(join(tmpdir(), 'creek-config-'));
    try {
      const file = join(dir, 'replica.json');
      copyFileSync(join(DEPLOY, 'systemd/replica.json'), file);
      const config = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      const beside = Object.entries(config).filter(
        ([k, v]) => /-file$|^tls-/.test(k) && typeof v === 'string' && !v.startsWith('/'),
      );
      expect(beside.length).toBeGreaterThanOrEqual(7);
      for (const [, name] of beside) writeFileSync(join(dir, name as string), 'x'.repeat(40));
      const s = readSettings('start', ['--config', file], {}, START_OPTIONS, StartSettingsSchema);
      expect(s.help).toBe(false);
      if (s.help) return;
      expect(s.settings.id).toBe(0);
      expect(s.settings.fsync).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
