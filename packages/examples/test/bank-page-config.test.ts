import { describe, expect, it } from 'vitest';
import { AccountSchema } from '../src/bank/app.js';
import { PageConfigSchema } from '../src/bank/page-config.js';

const config = (account: unknown): unknown => ({
  token: 't',
  account,
  rateBps: 100,
  branches: [{ name: 'EU', replica: 0, urls: ['ws://127.0.0.1:7100/client'] }],
});

describe("the bank page's config", () => {
  it('takes the account names the app takes, and refuses the others before the page opens', () => {
    expect(PageConfigSchema.parse(config('page-test')).account).toBe('page-test');
    for (const bad of ['', 'two words', 'a/b', 'x'.repeat(65), 7]) {
      expect(PageConfigSchema.safeParse(config(bad)).success, String(bad)).toBe(false);
      expect(AccountSchema.safeParse(bad).success, String(bad)).toBe(false);
    }
  });
});
