/** Small helpers on plain objects. */

/** `value` without its undefined fields: what a partial update sets, or what a response shows. */
export function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
