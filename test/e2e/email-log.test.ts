/**
 * The email log over HTTP against the local stack: the route is served with its grants, answers a new API key an
 * empty page, and refuses bad input and missing credentials. What it lists is in test/connected/email-log.test.ts,
 * which seeds the log (this tier reaches the stack only over HTTP, and nothing fills the log yet).
 */
import { newApiKeyHeaders, post } from '../support/http';

const EMAILS = '/v2/workspace/emails/get';

describe('email log over HTTP', () => {
  it('answers a new API key an empty page without a token, with or without filters', async () => {
    const headers = await newApiKeyHeaders();

    const all = await post(EMAILS, {}, headers);
    const filtered = await post(EMAILS, { notificationId: 'ntf-1', userId: 'ann', pageSize: 250 }, headers);

    expect(all.status).toBe(200);
    expect(all.body.result).toEqual({ status: 'success', message: 'Emails retrieved successfully.', data: [] });
    expect(filtered.status).toBe(200);
    expect(filtered.body.result).toEqual({ status: 'success', message: 'Emails retrieved successfully.', data: [] });
  });

  it('refuses a page size over 250 and a malformed page token with INVALID_ARGUMENT, and a call without credentials with UNAUTHENTICATED', async () => {
    const headers = await newApiKeyHeaders();

    const tooLarge = await post(EMAILS, { pageSize: 251 }, headers);
    const badToken = await post(EMAILS, { pageToken: 'not-a-page-token' }, headers);
    const anonymous = await post(EMAILS, {});

    expect(tooLarge.status).toBe(400);
    expect(tooLarge.body.error.status).toBe('INVALID_ARGUMENT');
    expect(JSON.stringify(tooLarge.body.error.details)).toContain('data.pageSize');
    expect(badToken.status).toBe(400);
    expect(badToken.body.error).toEqual({ status: 'INVALID_ARGUMENT', message: 'Invalid page token.' });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.status).toBe('UNAUTHENTICATED');
  });
});
