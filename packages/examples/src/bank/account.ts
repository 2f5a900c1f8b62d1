import { z } from 'zod';

/**
 * Account names: short, and safe in keys, URLs and logs. A module of its own, with nothing but
 * Zod in it, so that the browser's page checks the account it is handed as the app's ops do.
 */
export const AccountSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1–64 letters, digits, "_" or "-"');
