import { STORAGE_FAULTS, type StorageFault } from './config.js';
import type { SimStats } from './result.js';

/**
 * `--storage-faults` of `npm run sim` and `sim:soak`: a comma-separated list of STORAGE_FAULTS, or
 * `all`. Returns the list, or what is wrong with the text (to follow the flag in an error).
 */
export function parseStorageFaults(text: string | undefined): StorageFault[] | string {
  const expected = `takes all or a comma-separated list of ${STORAGE_FAULTS.join(', ')}`;
  if (text === undefined || text === '') return `${expected}, got nothing`;
  if (text === 'all') return [...STORAGE_FAULTS];
  const list = text.split(',');
  const unknown = list.filter((f) => !STORAGE_FAULTS.includes(f as StorageFault));
  if (unknown.length > 0) return `${expected}, got ${JSON.stringify(unknown[0])}`;
  // In the order STORAGE_FAULTS lists them, once each: the list names a set.
  return STORAGE_FAULTS.filter((f) => list.includes(f));
}

/** What storage faults did in a run, for its summary line (empty when none struck). */
export function storageLine(s: SimStats): string {
  const struck = s.powerLosses + s.tornWrites + s.corruptRecords + s.staleRecords;
  if (struck === 0 && s.damagedDisks === 0) return '';
  return `storage faults: ${s.powerLosses} power losses, ${s.tornWrites} torn writes, ${s.corruptRecords} records corrupted, ${s.staleRecords} read back stale (${s.damagedDisks} damaged disks rebuilt from peers), `;
}
