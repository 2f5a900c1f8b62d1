import { StrictMode, type ReactNode } from 'react';
import { createRoot } from 'react-dom/client';
import type { z } from 'zod';

/**
 * Reads what the page server put into the page (`window.CREEK_PAGE`), checked: a wrong config
 * fails here, saying which field, before anything is drawn.
 */
export function readPageConfig<S extends z.ZodType>(schema: S): z.infer<S> {
  return schema.parse((globalThis as { CREEK_PAGE?: unknown }).CREEK_PAGE);
}

/** Renders an example's React app into the page's `#root`, in StrictMode as apps are developed. */
export function mountApp(app: ReactNode): void {
  const el = document.getElementById('root');
  if (el === null) throw new Error('the page has no #root to render into');
  createRoot(el).render(<StrictMode>{app}</StrictMode>);
}
