import { defineApp } from '@creek/server';

/**
 * The built-in ops (kv.*, queue.*) open to signed-in users: the app of bench:peers's cluster that
 * verifies users' tokens (with auth on, the built-ins are closed to end users unless the app
 * opens them).
 */
export default defineApp({}, { builtins: 'signed-in' });
