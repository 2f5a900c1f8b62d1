import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  commandLine,
  recordName,
  recordResults,
  renderRecord,
  type Machine,
} from '../src/results.js';

const machine: Machine = {
  cores: 2,
  cpu: 'Some CPU @ 2.0GHz',
  memoryGiB: 7.75,
  os: 'linux 6.1.0',
  node: 'v20.19.0',
  load: [0.5, 0.25, 0.125],
};

describe('benchmark result records', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
  });

  it('are named by the date and the benchmark, numbered when the day has one', () => {
    const taken = new Set(['2026-11-27-peers.md', '2026-11-27-peers-2.md']);
    expect(recordName('2026-11-27', 'peers', (f) => taken.has(f))).toBe('2026-11-27-peers-3.md');
    expect(recordName('2026-11-28', 'peers', (f) => taken.has(f))).toBe('2026-11-28-peers.md');
  });

  it('give the command that reproduces the run', () => {
    expect(commandLine('core', [])).toBe('npm run bench:core');
    expect(commandLine('peers', ['--ops', '500', '--fsync', 'off'])).toBe(
      'npm run bench:peers -- --ops 500 --fsync off',
    );
    expect(commandLine('tpcc', ['--modes', 'smr, bayou'])).toBe(
      "npm run bench:tpcc -- --modes 'smr, bayou'",
    );
  });

  it('state the machine and the command, and keep text output verbatim in a fence', () => {
    const text = renderRecord({
      name: 'core',
      date: '2026-11-29',
      machine,
      command: 'npm run bench:core',
      format: 'text',
      lines: ['', 'a   b', '1   2', ''],
    });
    expect(text).toContain('# bench:core, 2026-11-29');
    expect(text).toContain('- machine: 2 cores, Some CPU @ 2.0GHz, 7.8 GiB memory, linux 6.1.0');
    expect(text).toContain('- Node v20.19.0; load average at the end 0.50 0.25 0.13');
    expect(text).toContain('- command: `npm run bench:core`');
    expect(text).toContain('```text\na   b\n1   2\n```');
  });

  it('print every line as before and write them where CREEK_BENCH_RESULTS says', () => {
    const dir = mkdtempSync(join(tmpdir(), 'creek-results-'));
    try {
      vi.stubEnv('CREEK_BENCH_RESULTS', dir);
      const printed: unknown[] = [];
      vi.spyOn(console, 'log').mockImplementation((line: unknown) => void printed.push(line));
      vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
      const r = recordResults('peers', 'markdown', ['--rounds', '1']);
      r.print('| a | b |');
      r.print('| --- | --- |');
      r.print();
      const first = r.save();
      const second = r.save();
      expect(printed).toEqual(['| a | b |', '| --- | --- |', '']);
      expect(readdirSync(dir).sort()).toHaveLength(2);
      expect(first).toMatch(/\d{4}-\d{2}-\d{2}-peers\.md$/);
      expect(second).toMatch(/\d{4}-\d{2}-\d{2}-peers-2\.md$/);
      const text = readFileSync(first!, 'utf8');
      expect(text).toContain('- command: `npm run bench:peers -- --rounds 1`');
      expect(text).toContain('| a | b |\n| --- | --- |\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('are not written with CREEK_BENCH_RESULTS=off', () => {
    vi.stubEnv('CREEK_BENCH_RESULTS', 'off');
    vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const r = recordResults('core', 'text', []);
    r.print('x');
    expect(r.save()).toBeNull();
  });
});
