/**
 * Page tokens that are not of the token's shape (body.signature) are refused before the server secret is read, so
 * without I/O. Tokens checked against the secret are in test/connected/page-token.test.ts.
 */
import { readPageToken } from '../../shared/db/page-token';
import { rejection } from '../support/rejection';

const scope = { tenant: 'key_a', query: { operation: 'x', filter: ['b', 'a'], organizationId: 'o' } };

describe('page tokens', () => {
  it.each(['', 'abc', 'a.b.c', '..', 'x'.repeat(100)])('rejects the malformed token %p', async (token) => {
    expect(await rejection(readPageToken(token, scope))).toBe('INVALID_ARGUMENT');
  });
});
