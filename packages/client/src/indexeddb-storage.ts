import type { OfflineStorage, StoredSession } from './offline-storage.js';

/** The minimum of IndexedDB this adapter uses (browsers' `indexedDB`, or a test's fake). */
interface IdbFactory {
  open(name: string, version?: number): IdbRequest<IdbDatabase>;
}
interface IdbRequest<T> {
  result: T;
  error: unknown;
  onsuccess: (() => void) | null;
  onerror: (() => void) | null;
  onupgradeneeded?: (() => void) | null;
}
interface IdbDatabase {
  objectStoreNames: { contains(name: string): boolean };
  createObjectStore(name: string): unknown;
  transaction(store: string, mode: 'readonly' | 'readwrite'): IdbTransaction;
}
interface IdbTransaction {
  objectStore(name: string): {
    get(key: string): IdbRequest<unknown>;
    put(value: unknown, key: string): IdbRequest<unknown>;
  };
  oncomplete: (() => void) | null;
  onerror: (() => void) | null;
  error: unknown;
}

const STORE = 'sessions';

function request<T>(r: IdbRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error instanceof Error ? r.error : new Error(String(r.error)));
  });
}

/**
 * The offline queue in the browser's IndexedDB: database `name` (default `creek`), one record per
 * `key` (default `session`: give each client of a page its own). Throws at the first load or save
 * where there is no IndexedDB.
 */
export function indexedDbStorage(
  options: { readonly name?: string; readonly key?: string; readonly indexedDB?: unknown } = {},
): OfflineStorage {
  const name = options.name ?? 'creek';
  const key = options.key ?? 'session';
  let db: Promise<IdbDatabase> | null = null;
  const open = (): Promise<IdbDatabase> => {
    const factory = (options.indexedDB ?? (globalThis as { indexedDB?: unknown }).indexedDB) as
      IdbFactory | undefined;
    if (factory === undefined)
      return Promise.reject(
        new Error('indexedDbStorage: this environment has no indexedDB; pass another storage'),
      );
    const r = factory.open(name, 1);
    r.onupgradeneeded = () => {
      if (!r.result.objectStoreNames.contains(STORE)) r.result.createObjectStore(STORE);
    };
    return request(r);
  };
  return {
    async load() {
      db ??= open();
      const tx = (await db).transaction(STORE, 'readonly');
      const v = await request(tx.objectStore(STORE).get(key));
      return (v ?? null) as StoredSession | null;
    },
    async save(session) {
      db ??= open();
      const tx = (await db).transaction(STORE, 'readwrite');
      const done = new Promise<void>((resolve, reject) => {
        tx.oncomplete = () => resolve();
        tx.onerror = () =>
          reject(tx.error instanceof Error ? tx.error : new Error(String(tx.error)));
      });
      tx.objectStore(STORE).put(JSON.parse(JSON.stringify(session)), key);
      await done;
    },
  };
}
