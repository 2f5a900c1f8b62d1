// Plain JavaScript on purpose: tsx, which runs the CLI, resolves an import of `x.js` made from a
// TypeScript module to a sibling `x.ts` when one exists. From a JavaScript module it does not
// (unless a tsconfig sets allowJs), and the check below catches that case too.

/**
 * Imports exactly the module at `url`, never a file its name maps to.
 * @param {string} url a file: URL
 * @returns {Promise<Record<string, unknown>>}
 */
export async function importExact(url) {
  const resolved = import.meta.resolve(url);
  if (resolved !== url)
    throw new Error(
      `it resolves to ${resolved} instead (a tsconfig with allowJs maps .js to .ts); name that file, or rename one of the two`,
    );
  return import(url);
}
