/** Imports exactly the module at `url` (a file: URL), never a file its name maps to. */
export function importExact(url: string): Promise<Record<string, unknown>>;
