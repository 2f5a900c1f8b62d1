import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The docs' marked blocks, for tests that run what a page tells its reader to run: a fenced block
 * whose line before (blank lines aside) is `<!-- docs-check: <marker> ... -->`. The same directive
 * scripts/check-docs.mjs reads; a test that runs a block cannot drift from the page.
 */
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

export interface DocBlock {
  /** The fence's language (`sh`, `nginx`, …). */
  readonly lang: string;
  /** The block's text, without the fences. */
  readonly text: string;
  /** Where it is, for messages: `docs/operations.md:42`. */
  readonly where: string;
}

/** The block `page` (relative to the repository) marks with `marker`; throws when there is none. */
export function markedBlock(page: string, marker: string): DocBlock {
  const lines = readFileSync(`${ROOT}${page}`, 'utf8').split('\n');
  const at = lines.findIndex((l) =>
    new RegExp(`<!--\\s*docs-check:\\s*${escape(marker)}\\b`).test(l),
  );
  if (at < 0) throw new Error(`${page} has no block marked <!-- docs-check: ${marker} -->`);
  let open = at + 1;
  while (open < lines.length && lines[open]!.trim() === '') open++;
  const fence = /^(`{3,})([\w-]*)\s*$/.exec(lines[open] ?? '');
  if (fence === null) throw new Error(`${page}:${at + 1}: no fenced block after the marker`);
  const body: string[] = [];
  for (let i = open + 1; lines[i] !== fence[1]; i++) {
    if (i >= lines.length) throw new Error(`${page}:${open + 1}: the block never ends`);
    body.push(lines[i]!);
  }
  return { lang: fence[2] ?? '', text: body.join('\n'), where: `${page}:${open + 1}` };
}

/**
 * A shell block's commands: comment and blank lines left out, a line ending in `\` joined with the
 * next, as the shell reads them.
 */
export function shellCommands(block: DocBlock): string[] {
  const commands: string[] = [];
  let pending = '';
  for (const raw of block.text.split('\n')) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1).trimEnd()} `;
      continue;
    }
    commands.push(pending + line);
    pending = '';
  }
  if (pending !== '') throw new Error(`${block.where}: the last command ends in a backslash`);
  return commands;
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
