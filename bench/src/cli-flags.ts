/**
 * The `--name value` / `--name=value` flags every benchmark takes, with `--help`: yields each flag's
 * name and raw value; the benchmark converts and checks the values. An unknown flag, or one
 * without a value, ends the run through `fail` with the usage.
 */
export function* flagPairs(
  argv: readonly string[],
  usage: string,
  known: (name: string) => boolean,
  fail: (message: string) => never,
): Generator<[name: string, raw: string]> {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') {
      console.log(usage);
      process.exit(0);
    }
    const [name, inline] = arg.replace(/^--/, '').split('=', 2) as [string, string | undefined];
    if (!arg.startsWith('--') || !known(name)) fail(`unknown argument '${arg}'\n\n${usage}`);
    const raw = inline ?? argv[++i];
    if (raw === undefined || raw === '') fail(`--${name} needs a value`);
    yield [name, raw];
  }
}
