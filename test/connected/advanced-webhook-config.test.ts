import { handler as getConfig } from '../../functions/workspace/advancedwebhookconfig-get';
import { handler as updateConfig } from '../../functions/workspace/advancedwebhookconfig-update';
import { getWebhookConfig, writeWebhookConfig } from '../../shared/db/webhook-config';
import { UNUSABLE_KEY_MESSAGE } from '../../shared/domain/webhook-config';
import { newTenant, siblingKey, type Tenant } from '../support/fixtures';
import { endpoint, invoke } from '../support/invoke';
import {
  EC_PUBLIC_KEY,
  RSA_1024_PUBLIC_KEY,
  RSA_2048_PUBLIC_KEY,
  RSA_EVEN_MODULUS_PUBLIC_KEY,
} from '../support/rsa-keys';

const UPDATE = '/v2/workspace/advancedwebhookconfig/update';
const GET = '/v2/workspace/advancedwebhookconfig/get';

const update = endpoint(updateConfig, UPDATE);
const read = async (headers: Record<string, string>) =>
  (await invoke(getConfig, GET, {}, { headers })).body.result?.data;

const NEVER_SET = {
  isEnabled: false,
  encodeData: false,
  encryptData: false,
  publicKey: '',
  enableDataProtection: false,
};

describe('advanced webhook config', () => {
  let tenant: Tenant;
  beforeEach(async () => {
    tenant = await newTenant();
  });

  it('reads every field with its default when never set', async () => {
    expect(await read(tenant.apiKeyHeaders)).toEqual(NEVER_SET);
  });

  it('refuses a first update that does not enable the service, and stores nothing', async () => {
    const response = await update(tenant, { encodeData: true });

    expect(response.statusCode).toBe(400);
    expect(response.body.error).toMatchObject({
      status: 'FAILED_PRECONDITION',
      message: 'Advanced webhooks are not configured yet: the first update must send isEnabled: true.',
    });
    expect(await getWebhookConfig(tenant.apiKeyId)).toBeUndefined();
  });

  it('enables, then updates field by field, answering the whole configuration each time', async () => {
    const enabled = await update(tenant, { isEnabled: true });
    const encoded = await update(tenant, { encodeData: true, enableDataProtection: true });
    const disabled = await update(tenant, { isEnabled: false });

    expect(enabled.body.result).toEqual({
      status: 'success',
      message: 'Advanced webhook configuration updated successfully.',
      data: { ...NEVER_SET, isEnabled: true },
    });
    expect(encoded.body.result?.data).toEqual({
      ...NEVER_SET,
      isEnabled: true,
      encodeData: true,
      enableDataProtection: true,
    });
    expect(disabled.body.result?.data).toEqual({ ...NEVER_SET, encodeData: true, enableDataProtection: true });
    expect(await read(tenant.apiKeyHeaders)).toEqual(disabled.body.result?.data);
  });

  it('encrypts with a sent RSA key, or with the stored one, and refuses encryptData without any key', async () => {
    await update(tenant, { isEnabled: true });

    const withoutKey = await update(tenant, { encryptData: true });
    const withKey = await update(tenant, { encryptData: true, publicKey: RSA_2048_PUBLIC_KEY });
    await update(tenant, { encryptData: false });
    const withStoredKey = await update(tenant, { encryptData: true });

    expect(withoutKey.statusCode).toBe(400);
    expect(withoutKey.body.error?.details).toEqual({
      issues: [{ path: 'data.encryptData', message: 'Needs a publicKey: send one, or store one first.' }],
    });
    expect(withKey.body.result?.data).toMatchObject({ encryptData: true, publicKey: RSA_2048_PUBLIC_KEY });
    expect(withStoredKey.body.result?.data).toMatchObject({ encryptData: true, publicKey: RSA_2048_PUBLIC_KEY });
  });

  it.each([
    ['not base64', 'not a key!', 'Must be base64 (DER, SubjectPublicKeyInfo).'],
    [
      'base64 that is no key',
      Buffer.from('hello').toString('base64'),
      'Must be a DER-encoded SubjectPublicKeyInfo public key.',
    ],
    ['an EC key', EC_PUBLIC_KEY, 'Must be an RSA public key.'],
    ['an RSA key of 1024 bits', RSA_1024_PUBLIC_KEY, 'Must be an RSA key of at least 2048 bits.'],
    ['an empty key', '', 'Must be base64 (DER, SubjectPublicKeyInfo).'],
  ])('refuses a publicKey that is %s, writing nothing', async (_label, publicKey, message) => {
    const response = await update(tenant, { isEnabled: true, publicKey });

    expect(response.statusCode).toBe(400);
    expect(response.body.error?.details).toEqual({ issues: [{ path: 'data.publicKey', message }] });
    expect(await getWebhookConfig(tenant.apiKeyId)).toBeUndefined();
  });

  it('refuses a well-formed RSA key that cannot encrypt (an even modulus), with INVALID_ARGUMENT, writing nothing', async () => {
    const first = await update(tenant, { isEnabled: true, encryptData: true, publicKey: RSA_EVEN_MODULUS_PUBLIC_KEY });
    const stored = await getWebhookConfig(tenant.apiKeyId);
    await update(tenant, { isEnabled: true });
    const later = await update(tenant, { publicKey: RSA_EVEN_MODULUS_PUBLIC_KEY });

    expect(first.statusCode).toBe(400);
    expect(first.body.error).toMatchObject({
      status: 'INVALID_ARGUMENT',
      details: { issues: [{ path: 'data.publicKey', message: UNUSABLE_KEY_MESSAGE }] },
    });
    expect(stored).toBeUndefined();
    expect(later.body.error).toMatchObject({
      status: 'INVALID_ARGUMENT',
      details: { issues: [{ path: 'data.publicKey', message: UNUSABLE_KEY_MESSAGE }] },
    });
    expect(await read(tenant.apiKeyHeaders)).toEqual({ ...NEVER_SET, isEnabled: true });
  });

  it('refuses turning encryption on over an unusable key stored before keys were probed, changing nothing', async () => {
    // Seeded in the table as an older version of the service stored it, past today's check.
    await writeWebhookConfig(tenant.apiKeyId, () => ({
      create: { isEnabled: true, publicKey: RSA_EVEN_MODULUS_PUBLIC_KEY },
    }));

    const response = await update(tenant, { encryptData: true });

    expect(response.body.error).toMatchObject({
      status: 'INVALID_ARGUMENT',
      details: {
        issues: [{ path: 'data.encryptData', message: `The stored publicKey is unusable. ${UNUSABLE_KEY_MESSAGE}` }],
      },
    });
    expect(await read(tenant.apiKeyHeaders)).toEqual({
      ...NEVER_SET,
      isEnabled: true,
      publicKey: RSA_EVEN_MODULUS_PUBLIC_KEY,
    });
  });

  it.each([
    [
      'no field at all',
      {},
      'data',
      'Provide at least one of isEnabled, encodeData, encryptData, publicKey, enableDataProtection.',
    ],
    ['a string isEnabled', { isEnabled: 'yes' }, 'data.isEnabled', undefined],
    ['a numeric encodeData', { encodeData: 1 }, 'data.encodeData', undefined],
    [
      'a publicKey over 4096 characters',
      { publicKey: 'A'.repeat(4097) },
      'data.publicKey',
      'Must be at most 4096 characters.',
    ],
  ])('refuses %s with INVALID_ARGUMENT naming the field', async (_label, data, path, message) => {
    const response = await update(tenant, data);

    expect(response.statusCode).toBe(400);
    expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
    expect(response.body.error?.details.issues[0]).toMatchObject({
      path,
      ...(message === undefined ? {} : { message }),
    });
    expect(await getWebhookConfig(tenant.apiKeyId)).toBeUndefined();
  });

  it('belongs to one API key: another key of the workspace and another workspace neither see nor change it', async () => {
    const sibling = await siblingKey(tenant);
    const other = await newTenant();
    await update(tenant, { isEnabled: true, encodeData: true });

    const siblingView = await read(sibling);
    const otherView = await read(other.apiKeyHeaders);
    await update(sibling, { isEnabled: true, enableDataProtection: true });
    await update(other, { isEnabled: true, encryptData: true, publicKey: RSA_2048_PUBLIC_KEY });

    expect(siblingView).toEqual(NEVER_SET);
    expect(otherView).toEqual(NEVER_SET);
    expect(await read(tenant.apiKeyHeaders)).toEqual({ ...NEVER_SET, isEnabled: true, encodeData: true });
  });

  it('applies 200 concurrent updates of different fields: every one succeeds and the result holds all of them', async () => {
    await update(tenant, { isEnabled: true });
    const fields = ['encodeData', 'enableDataProtection', 'publicKey'] as const;

    const replies = await Promise.all(
      Array.from({ length: 200 }, (_, i) => {
        const field = fields[i % fields.length];
        return update(tenant, field === 'publicKey' ? { publicKey: RSA_2048_PUBLIC_KEY } : { [field]: true });
      }),
    );

    expect(replies.map((reply) => reply.statusCode)).toEqual(replies.map(() => 200));
    expect(await read(tenant.apiKeyHeaders)).toEqual({
      ...NEVER_SET,
      isEnabled: true,
      encodeData: true,
      enableDataProtection: true,
      publicKey: RSA_2048_PUBLIC_KEY,
    });
  });
});
