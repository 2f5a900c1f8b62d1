import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JsonValue } from '@creek/app';
import { StateDigest } from '@creek/replica/core/state-digest.js';
import type { BackupSnapshot } from '@creek/replica/host/backup.js';
import { backupChunks, readBackup } from '../../src/node/backup-file.js';

/**
 * The backup file as `creek restore` meets it: a whole file reads back to the state that was
 * written, and every way a file can be cut, damaged or foreign is refused with what is wrong.
 */
let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'creek-backup-file-'));
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

function snapshot(keys: number): BackupSnapshot {
  const state: (readonly [string, JsonValue])[] = Array.from({ length: keys }, (_, i) => [
    `key/${String(i).padStart(6, '0')}`,
    { n: i, text: `value ${i}` },
  ]);
  return {
    finalized: keys + 7,
    state,
    known: { '1': [40], '258': [3, 5] },
    hlc: 1_700_000_000_000_000,
    members: [
      { id: 0, address: 'ws://a:1' },
      { id: 1, address: 'ws://b:1' },
    ],
  };
}

/** Writes the backup of `s` to a file; returns its path and its bytes. */
function write(s: BackupSnapshot, name = 'b.creek-backup'): { file: string; bytes: Buffer } {
  const text = [...backupChunks({ cluster: 'old', replica: 1, createdAt: new Date(0) }, s)].join(
    '',
  );
  const file = path.join(tmp, name);
  fs.writeFileSync(file, text);
  return { file, bytes: Buffer.from(text) };
}

describe('backup file', () => {
  it('reads back the state, position, clock and causal context written', async () => {
    const s = snapshot(2_500); // more than one chunk of lines
    const { file } = write(s);
    const r = await readBackup(file);
    expect(r.header).toMatchObject({ cluster: 'old', replica: 1, finalized: 2_507, keys: 2_500 });
    expect(r.snapshot.state).toEqual(s.state);
    expect(r.snapshot.known).toEqual(s.known);
    expect(r.snapshot.hlc).toBe(s.hlc);
    expect(r.stateDigest).toBe(StateDigest.of(s.state));
    expect(r.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('reads back an empty state', async () => {
    const r = await readBackup(write(snapshot(0)).file);
    expect(r.snapshot.state).toEqual([]);
  });

  it('refuses a file cut anywhere: at a line end or inside a line', async () => {
    const { file, bytes } = write(snapshot(300));
    const lineEnds = [...bytes.entries()].filter(([, b]) => b === 10).map(([i]) => i + 1);
    // Every cut: after the header, after some keys, inside a key line, inside the end line.
    const cuts = [lineEnds[0]!, lineEnds[100]!, lineEnds[100]! + 5, bytes.length - 10, 7];
    for (const cut of cuts) {
      fs.writeFileSync(file, bytes.subarray(0, cut));
      await expect(readBackup(file), `cut at ${cut}`).rejects.toThrow(
        /is truncated|is not a Creek backup/,
      );
    }
    fs.writeFileSync(file, bytes.subarray(0, lineEnds[100]!));
    await expect(readBackup(file)).rejects.toThrow(
      /is truncated: it ends after 100 of 300 keys, without the backup's end line/,
    );
  });

  it('refuses a file whose content does not match its sha256', async () => {
    const { file, bytes } = write(snapshot(300));
    const text = bytes.toString('utf8').replace('"value 150"', '"value 151"');
    fs.writeFileSync(file, text);
    await expect(readBackup(file)).rejects.toThrow(/is damaged: its content's sha256 is [0-9a-f]+/);
  });

  it('refuses a file whose state does not match its digest, even with its sha256 made to fit', async () => {
    // A value changed and the sha256 recomputed over the changed content: a file forged or
    // mended without the replica is still caught by its content.
    const { file, bytes } = write(snapshot(50));
    const lines = bytes.toString('utf8').trimEnd().split('\n');
    const end = JSON.parse(lines.pop()!) as Record<string, unknown>;
    lines[5] = lines[5]!.replace('"value 4"', '"value 44"');
    const body = lines.map((l) => `${l}\n`).join('');
    const sha256 = createHash('sha256').update(body).digest('hex');
    fs.writeFileSync(file, `${body}${JSON.stringify({ ...end, sha256 })}\n`);
    await expect(readBackup(file)).rejects.toThrow(
      /its state's digest is [0-9a-f]{32}, its end line says [0-9a-f]{32}/,
    );
  });

  it('refuses a line that is not a key and value, and more keys than the header says', async () => {
    const { file, bytes } = write(snapshot(10));
    const lines = bytes.toString('utf8').split('\n');
    fs.writeFileSync(file, [lines[0], '{"not":"a pair"}', ...lines.slice(2)].join('\n'));
    await expect(readBackup(file)).rejects.toThrow(/line 2 is not a \[key, value\] pair/);
    fs.writeFileSync(file, [lines[0], lines[1], ...lines.slice(1)].join('\n'));
    await expect(readBackup(file)).rejects.toThrow(/more keys than its header's 10/);
  });

  it('refuses what is not a backup, another format version and a malformed header', async () => {
    const file = path.join(tmp, 'x');
    fs.writeFileSync(file, '');
    await expect(readBackup(file)).rejects.toThrow(/is empty: not a Creek backup/);
    fs.writeFileSync(file, 'SQLite format 3\0garbage\nmore\n');
    await expect(readBackup(file)).rejects.toThrow(/is not a Creek backup/);
    const { bytes } = write(snapshot(3));
    const lines = bytes.toString('utf8').split('\n');
    const header = JSON.parse(lines[0]!) as Record<string, unknown>;
    fs.writeFileSync(
      file,
      [JSON.stringify({ ...header, version: 2 }), ...lines.slice(1)].join('\n'),
    );
    await expect(readBackup(file)).rejects.toThrow(
      /is a backup of format version 2; this creek reads version 1/,
    );
    fs.writeFileSync(
      file,
      [JSON.stringify({ ...header, finalized: -1 }), ...lines.slice(1)].join('\n'),
    );
    await expect(readBackup(file)).rejects.toThrow(/has a malformed header: finalized is wrong/);
  });

  it('says a missing file is missing', async () => {
    await expect(readBackup(path.join(tmp, 'nope'))).rejects.toThrow(/nope: no such file/);
  });
});
