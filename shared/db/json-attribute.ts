/**
 * Free-form client JSON (notification source and template data, document metadata) is stored as one JSON string
 * attribute, not as DynamoDB maps: a map refuses what JSON allows (more than 32 levels of nesting, a key named
 * `constructor` that the marshaller mistakes for a class, `__proto__` that it drops), while a string round-trips
 * any JSON exactly. Items written before this stored maps; reading accepts both.
 */

/** The attribute value that stores `value` (undefined stays undefined: nothing is written). */
export function toJsonAttribute(value: unknown): string | undefined {
  return value === undefined ? undefined : JSON.stringify(value);
}

/** The JSON value of an attribute written by `toJsonAttribute`, or a map written before it, as it was stored. */
export function fromJsonAttribute<T>(attribute: unknown): T | undefined {
  if (attribute === undefined) return undefined;
  return (typeof attribute === 'string' ? JSON.parse(attribute) : attribute) as T;
}
