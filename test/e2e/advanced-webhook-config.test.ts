/** The advanced webhook configuration over HTTP against the local stack: refused until enabled, then merged field by field. */
import { newApiKeyHeaders, post } from '../support/http';
import { RSA_2048_PUBLIC_KEY } from '../support/rsa-keys';

describe('advanced webhook configuration over HTTP', () => {
  it('refuses a first update without isEnabled, then enables, encrypts under an RSA key and reads it back', async () => {
    const headers = await newApiKeyHeaders();

    const refused = await post('/v2/workspace/advancedwebhookconfig/update', { encodeData: true }, headers);
    const enabled = await post(
      '/v2/workspace/advancedwebhookconfig/update',
      { isEnabled: true, encryptData: true, publicKey: RSA_2048_PUBLIC_KEY },
      headers,
    );
    const read = await post('/v2/workspace/advancedwebhookconfig/get', {}, headers);

    expect(refused.status).toBe(400);
    expect(refused.body.error.status).toBe('FAILED_PRECONDITION');
    expect(enabled.status).toBe(200);
    expect(read.body.result.data).toEqual({
      isEnabled: true,
      encodeData: false,
      encryptData: true,
      publicKey: RSA_2048_PUBLIC_KEY,
      enableDataProtection: false,
    });
  });
});
