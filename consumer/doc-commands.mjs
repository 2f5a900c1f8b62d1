// The install commands of docs/getting-started.md, as the consumer test runs them: the ```sh block
// after `<!-- docs-check: install commands ... -->`, in sections that each start with a comment
// line ("# A replica project: ..."). Reading them from the page means the test installs what a
// reader is told to install, nothing more, and fails when the page asks for what does not work.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const GUIDE = 'docs/getting-started.md';
/** The folder the page packs into: the test puts its own folder in its place. */
export const PACKS = '~/creek-packages';

/** Which section is which, by its comment line; each must be there, in this order. */
const SECTIONS = [
  ['pack', /clone of Creek/],
  ['replica', /replica project/],
  ['client', /client project/],
  ['react', /React/],
  ['memory', /in-memory cluster/],
];

/** Commands the test knows how to run (anything else on the page must be taught to it). */
const KNOWN = /^(mkdir -p |npm pack |npm install |npx creek dev )/;

/**
 * The page's install commands by section: `{ pack, replica, client, react, memory }`, each a list
 * of commands (continuation lines joined). Throws, naming the page, when the block or a section is
 * missing, or a command is one the test does not know.
 */
export function installCommands(root) {
  const lines = readFileSync(join(root, GUIDE), 'utf8').split('\n');
  const marker = lines.findIndex((l) => /<!--\s*docs-check:\s*install commands\b/.test(l));
  if (marker < 0) throw new Error(`${GUIDE} has no <!-- docs-check: install commands --> block`);
  const open = lines.findIndex((l, i) => i > marker && l.trim() !== '');
  if (lines[open] !== '```sh')
    throw new Error(
      `${GUIDE}:${open + 1}: the install commands must follow their marker as \`\`\`sh`,
    );
  const sections = [];
  for (let i = open + 1; lines[i] !== '```'; i++) {
    if (i >= lines.length) throw new Error(`${GUIDE}: the install commands block never ends`);
    const line = lines[i].trim();
    if (line === '') continue;
    if (line.startsWith('#')) {
      sections.push({ title: line.replace(/^#\s*/, ''), line: i + 1, commands: [] });
      continue;
    }
    let command = line;
    while (command.endsWith('\\'))
      command = `${command.slice(0, -1).trimEnd()} ${lines[++i].trim()}`;
    if (sections.length === 0)
      throw new Error(`${GUIDE}:${i + 1}: a command before the first section's comment`);
    if (!KNOWN.test(command))
      throw new Error(
        `${GUIDE}:${i + 1}: the consumer test does not know how to run \`${command}\`: teach consumer/run.mjs`,
      );
    sections.at(-1).commands.push(command);
  }
  const out = {};
  let from = 0;
  for (const [key, title] of SECTIONS) {
    const at = sections.findIndex((s, i) => i >= from && title.test(s.title));
    if (at < 0)
      throw new Error(
        `${GUIDE}: the install commands have no section matching ${title} (in order)`,
      );
    if (sections[at].commands.length === 0)
      throw new Error(
        `${GUIDE}:${sections[at].line}: the section "${sections[at].title}" is empty`,
      );
    out[key] = sections[at].commands;
    from = at + 1;
  }
  if (!out.pack.some((c) => c.includes(PACKS)))
    throw new Error(`${GUIDE}: the pack commands no longer name ${PACKS}: update consumer/`);
  return out;
}

/** A command as the test runs it: in its own folder of tarballs instead of ~/creek-packages. */
export function localized(command, packs) {
  if (/\s/.test(packs)) throw new Error(`the tarball folder ${packs} has a space in its path`);
  return command.replaceAll(PACKS, packs);
}
