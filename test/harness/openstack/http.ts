/**
 * The lab's own small JSON client over fetch, for readiness probes and tests. It never throws on an
 * HTTP status: callers assert the status they expect (a 409 is often the point of a test).
 */

export interface LabResponse {
  status: number;
  /** The parsed JSON body, or undefined for an empty or non-JSON body. */
  body: unknown;
  text: string;
}

/**
 * One request with a JSON body; times out after `timeoutMs`, by default a safety net far above the
 * few seconds a request takes while other tests write to the lab on a loaded machine.
 */
export async function labRequest(
  method: string,
  url: string,
  body?: unknown,
  timeoutMs = 120_000,
): Promise<LabResponse> {
  const res = await fetch(url, {
    method,
    headers: {
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text };
}

/** Like {@link labRequest}, but throws unless the status is one of `expected`. */
export async function expectStatus(
  expected: number | number[],
  method: string,
  url: string,
  body?: unknown,
): Promise<LabResponse> {
  const res = await labRequest(method, url, body);
  const ok = Array.isArray(expected) ? expected.includes(res.status) : res.status === expected;
  if (!ok) throw new Error(`${method} ${url}: expected ${String(expected)}, got ${res.status} ${res.text}`);
  return res;
}

/** `obj[key]` as a record, or throws with what was there. */
export function field(obj: unknown, key: string): Record<string, unknown> {
  const value = (obj as Record<string, unknown> | undefined)?.[key];
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`expected an object at "${key}" in ${JSON.stringify(obj)}`);
  return value as Record<string, unknown>;
}

/** `obj[key]` as an array of records, or throws with what was there. */
export function listField(obj: unknown, key: string): Record<string, unknown>[] {
  const value = (obj as Record<string, unknown> | undefined)?.[key];
  if (!Array.isArray(value)) throw new Error(`expected an array at "${key}" in ${JSON.stringify(obj)}`);
  return value as Record<string, unknown>[];
}

/** `obj[key]` as a string, or throws. */
export function stringField(obj: Record<string, unknown>, key: string): string {
  const value = obj[key];
  if (typeof value !== 'string') throw new Error(`expected a string at "${key}" in ${JSON.stringify(obj)}`);
  return value;
}
