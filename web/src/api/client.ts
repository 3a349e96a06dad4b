import { apiErrorSchema } from '@outbox/dashboard-api/contract';
import type { z } from 'zod';

const TOKEN_KEY = 'outbox-lab.control-token';

/** The control token (only asked for when dashboard-api runs with CONTROL_TOKEN). */
export const controlToken = {
  get: (): string => localStorage.getItem(TOKEN_KEY) ?? '',
  set: (token: string) => localStorage.setItem(TOKEN_KEY, token),
};

/** A non-2xx answer of dashboard-api, with its `error` text. */
export class ApiRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiRequestError';
  }
}

/**
 * One REST call, its answer checked against the contract's schema: a drift between
 * web and dashboard-api shows as a readable error on the page, not as a blank panel.
 */
export async function api<S extends z.ZodType>(
  schema: S,
  method: 'GET' | 'POST' | 'PUT',
  path: string,
  body?: unknown,
): Promise<z.infer<S>> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const token = controlToken.get();
  if (method !== 'GET' && token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json: unknown = await res.json().catch(() => undefined);
  if (!res.ok) {
    const parsed = apiErrorSchema.safeParse(json);
    throw new ApiRequestError(
      res.status,
      parsed.success ? parsed.data.error : `${method} ${path}: HTTP ${res.status}`,
    );
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success)
    throw new Error(`${method} ${path}: the answer does not match the contract`, {
      cause: parsed.error,
    });
  return parsed.data;
}

/** `/api/orders/:id/journey` with the id encoded. */
export const pathWith = (template: string, params: Record<string, string>): string =>
  template.replace(/:(\w+)/g, (_, key: string) => encodeURIComponent(params[key] ?? ''));
