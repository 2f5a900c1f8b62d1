import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteStorage } from '../../src/node/storage.js';
import { writerRecord } from './storage-writer.js';

/**
 * SqliteStorage against a process killed mid-write: the writer (storage-writer.ts) appends
 * batches and reports each, the test SIGKILLs it and reads back. The rest is in storage.test.ts.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../../../..');
const writerScript = path.join(here, 'storage-writer.ts');

let tmp: string;
const opened: SqliteStorage[] = [];

beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'creek-storage-'));
});

afterEach(() => {
  for (const s of opened.splice(0)) s.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

function open(dir = path.join(tmp, 'data'), replicaId = 1): SqliteStorage {
  const s = SqliteStorage.open(dir, { replicaId });
  opened.push(s);
  return s;
}

describe('SqliteStorage', () => {
  it('keeps every batch reported appended when the writer is killed with SIGKILL', async () => {
    const dir = path.join(tmp, 'data');
    const batchSize = 200;
    let reportedBefore = 0;
    for (let round = 0; round < 3; round++) {
      const reported = await runWriterAndKill(dir, batchSize, reportedBefore + 20 * batchSize);
      expect(reported).toBeGreaterThanOrEqual(reportedBefore + 20 * batchSize);

      const s = open(dir);
      const loaded = s.load();
      s.close();
      // Every reported batch is there; at most the batch in flight beyond it, and only whole.
      expect(loaded.length).toBeGreaterThanOrEqual(reported);
      expect(loaded.length % batchSize).toBe(0);
      expect(loaded).toEqual(Array.from({ length: loaded.length }, (_, n) => writerRecord(n)));
      reportedBefore = loaded.length;
    }
  });
});

/**
 * Runs the writer on `dir` until it reports at least `until` records, SIGKILLs it, and returns the
 * highest count it reported.
 */
function runWriterAndKill(dir: string, batchSize: number, until: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--conditions=creek-source', '--import', 'tsx', writerScript, dir, '1', String(batchSize)],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let reported = 0;
    let pending = '';
    let stderr = '';
    let killed = false;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) reported = Math.max(reported, Number(line));
      if (!killed && reported >= until) {
        killed = true;
        child.kill('SIGKILL');
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    // 'close': the process is gone and its output drained. A line written after the one that
    // triggered the kill is also a committed batch, so counting it is sound.
    child.on('close', (code, signal) => {
      if (signal === 'SIGKILL') resolve(reported);
      else
        reject(
          new Error(`writer exited (code ${code}, signal ${signal}) before the kill:\n${stderr}`),
        );
    });
  });
}
