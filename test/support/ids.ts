/**
 * Ids made unique per test (DESIGN.md, conventions): a test that makes its own organization, user or email never
 * meets another test's data, in its file's table or in the shared local stack. No I/O, so every tier may use it.
 */
import { randomUUID } from 'node:crypto';

/** `<label>-<uuid>`, e.g. `uniqueId('org')` for an organization id of one test. */
export const uniqueId = (label: string): string => `${label}-${randomUUID()}`;

/** `<label>-<uuid>@example.com`. */
export const uniqueEmail = (label = 'owner'): string => `${uniqueId(label)}@example.com`;
