/**
 * Webhook bodies (shared/domain/webhooks/payload.ts): data protection, encoding and encryption as docs/decisions.md
 * §11 "Payload and signature" describes them, decoded the way a receiver would.
 */
import { constants, createDecipheriv, generateKeyPairSync, privateDecrypt, type KeyObject } from 'node:crypto';
import { isUserObject, protectUserData, webhookBody, type PayloadConfig } from '../../shared/domain/webhooks/payload';

const PLAIN: PayloadConfig = { encodeData: false, encryptData: false, publicKey: '', enableDataProtection: false };
const TIMESTAMP = Date.UTC(2025, 0, 2, 3, 4, 5, 678);

const notification = {
  id: 'n1',
  organizationId: 'org1',
  documentId: 'doc1',
  actionUser: { userId: 'u1', name: 'Ada Lovelace', email: 'ada@example.com' },
  displayHeadlineMessageTemplate: '{{actionUser.name}} mentioned you',
  displayHeadlineMessageTemplateData: {
    actionUser: { userId: 'u1', name: 'Ada Lovelace', email: 'ada@example.com' },
    recipientUser: 'u2',
  },
  notifyUsers: [
    { userId: 'u2', name: 'Grace Hopper', email: 'grace@example.com' },
    {
      userId: 'u3',
      email: 'edsger@example.com',
      initial: 'E',
      accessRole: 'viewer',
      photoUrl: 'https://example.com/e.png',
    },
  ],
  notificationSourceData: { commentId: 'c1', author: { userId: 'u4', name: 'Alan', color: '#f00', textColor: '#fff' } },
  metadata: { organizationId: 'org1', apiKey: 'key1', documentId: 'doc1', userId: 'u1' },
  readByUserIds: ['u2'],
  timestamp: TIMESTAMP,
};

function rsaKeyPair(): { publicKey: string; privateKey: KeyObject } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { publicKey: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'), privateKey };
}

/** What a receiver does with an encrypted message: unwrap the key with RSA-OAEP-SHA256, then AES-256-CBC. */
function decrypt(data: { encryptedData: string; encryptedKey: string; iv: string }, privateKey: KeyObject): unknown {
  const key = privateDecrypt(
    { key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
    Buffer.from(data.encryptedKey, 'base64'),
  );
  const decipher = createDecipheriv('aes-256-cbc', key, Buffer.from(data.iv, 'base64'));
  return JSON.parse(
    Buffer.concat([decipher.update(Buffer.from(data.encryptedData, 'base64')), decipher.final()]).toString('utf8'),
  );
}

describe('webhookBody', () => {
  it('is {type, timestamp (ISO 8601), data} with the data as it is by default', () => {
    const body = webhookBody({ type: 'notification.add', timestamp: TIMESTAMP, data: notification }, PLAIN);

    expect(Object.keys(JSON.parse(body))).toEqual(['type', 'timestamp', 'data']);
    expect(JSON.parse(body)).toEqual({
      type: 'notification.add',
      timestamp: '2025-01-02T03:04:05.678Z',
      data: notification,
    });
  });

  it('keeps a data of null, and makes an absent data null rather than dropping the field', () => {
    expect(JSON.parse(webhookBody({ type: 'x.y', timestamp: TIMESTAMP, data: null }, PLAIN)).data).toBeNull();
    expect(JSON.parse(webhookBody({ type: 'x.y', timestamp: TIMESTAMP, data: undefined }, PLAIN))).toHaveProperty(
      'data',
      null,
    );
  });

  it('with data protection reduces every nested user object to {userId} and leaves other objects alone', () => {
    const { data } = JSON.parse(
      webhookBody(
        { type: 'notification.add', timestamp: TIMESTAMP, data: notification },
        { ...PLAIN, enableDataProtection: true },
      ),
    );

    expect(data).toEqual({
      ...notification,
      actionUser: { userId: 'u1' },
      displayHeadlineMessageTemplateData: { actionUser: { userId: 'u1' }, recipientUser: 'u2' },
      notifyUsers: [{ userId: 'u2' }, { userId: 'u3' }],
      notificationSourceData: { commentId: 'c1', author: { userId: 'u4' } },
      // userId next to non-profile keys: about a user, not a user; kept whole.
      metadata: { organizationId: 'org1', apiKey: 'key1', documentId: 'doc1', userId: 'u1' },
    });
    expect(notification.actionUser.name).toBe('Ada Lovelace'); // the input is not changed
  });

  it('with data protection reduces users in arrays of arrays and inside activity changes', () => {
    const activity = {
      id: 'act_1',
      actionType: 'comment.add',
      actionUser: { userId: 'u1', name: 'Ada' },
      changes: { assignees: { from: [[{ userId: 'u2', email: 'g@example.com' }]], to: [] } },
      entityData: [{ userId: 7, name: 'not a user: userId is not a string' }, { name: 'no userId' }],
    };

    const { data } = JSON.parse(
      webhookBody(
        { type: 'comment.add', timestamp: TIMESTAMP, data: activity },
        { ...PLAIN, enableDataProtection: true },
      ),
    );

    expect(data.actionUser).toEqual({ userId: 'u1' });
    expect(data.changes).toEqual({ assignees: { from: [[{ userId: 'u2' }]], to: [] } });
    expect(data.entityData).toEqual(activity.entityData);
  });

  it('never reduces data itself, even when it is shaped like a user', () => {
    const user = { userId: 'u1', name: 'Ada' };

    expect(
      JSON.parse(
        webhookBody({ type: 'x.y', timestamp: TIMESTAMP, data: user }, { ...PLAIN, enableDataProtection: true }),
      ).data,
    ).toEqual(user);
  });

  it('with data protection keeps a __proto__ key an ordinary key', () => {
    const data = JSON.parse('{"__proto__":{"polluted":true},"who":{"userId":"u1","name":"Ada"}}');

    const body = webhookBody({ type: 'x.y', timestamp: TIMESTAMP, data }, { ...PLAIN, enableDataProtection: true });

    expect(body).toContain('"data":{"__proto__":{"polluted":true},"who":{"userId":"u1"}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('with encodeData replaces data by encodedData, the base64 of its JSON', () => {
    const parsed = JSON.parse(
      webhookBody(
        { type: 'notification.add', timestamp: TIMESTAMP, data: notification },
        { ...PLAIN, encodeData: true },
      ),
    );

    expect(Object.keys(parsed)).toEqual(['type', 'timestamp', 'encodedData']);
    expect(JSON.parse(Buffer.from(parsed.encodedData, 'base64').toString('utf8'))).toEqual(notification);
  });

  it('encodes after data protection', () => {
    const parsed = JSON.parse(
      webhookBody(
        { type: 'notification.add', timestamp: TIMESTAMP, data: notification },
        { ...PLAIN, encodeData: true, enableDataProtection: true },
      ),
    );

    expect(JSON.parse(Buffer.from(parsed.encodedData, 'base64').toString('utf8')).actionUser).toEqual({ userId: 'u1' });
  });

  it('with encryptData replaces data by {encryptedData, encryptedKey, iv} that decrypt with the private key', () => {
    const { publicKey, privateKey } = rsaKeyPair();

    const parsed = JSON.parse(
      webhookBody(
        { type: 'notification.add', timestamp: TIMESTAMP, data: notification },
        { ...PLAIN, encryptData: true, publicKey },
      ),
    );

    expect(Object.keys(parsed)).toEqual(['type', 'timestamp', 'data']);
    expect(Object.keys(parsed.data).sort()).toEqual(['encryptedData', 'encryptedKey', 'iv']);
    expect(Buffer.from(parsed.data.iv, 'base64')).toHaveLength(16);
    expect(Buffer.from(parsed.data.encryptedKey, 'base64')).toHaveLength(256);
    expect(decrypt(parsed.data, privateKey)).toEqual(notification);
  });

  it('wraps the key with RSA-OAEP and SHA-256 (SHA-1 OAEP cannot unwrap it) into a fresh 256-bit key each time', () => {
    const { publicKey, privateKey } = rsaKeyPair();
    const config = { ...PLAIN, encryptData: true, publicKey };
    const first = JSON.parse(webhookBody({ type: 'x.y', timestamp: TIMESTAMP, data: { a: 1 } }, config)).data;
    const second = JSON.parse(webhookBody({ type: 'x.y', timestamp: TIMESTAMP, data: { a: 1 } }, config)).data;
    const wrapped = Buffer.from(first.encryptedKey, 'base64');

    expect(
      privateDecrypt({ key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, wrapped),
    ).toHaveLength(32);
    expect(() =>
      privateDecrypt({ key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' }, wrapped),
    ).toThrow();
    expect(second.encryptedKey).not.toBe(first.encryptedKey);
    expect(second.iv).not.toBe(first.iv);
    expect(second.encryptedData).not.toBe(first.encryptedData);
  });

  it('with encodeData and encryptData both on encrypts the data (as JSON, not encoded first) and sends no encodedData', () => {
    const { publicKey, privateKey } = rsaKeyPair();

    const parsed = JSON.parse(
      webhookBody(
        { type: 'notification.add', timestamp: TIMESTAMP, data: notification },
        { encodeData: true, encryptData: true, publicKey, enableDataProtection: true },
      ),
    );

    expect(Object.keys(parsed)).toEqual(['type', 'timestamp', 'data']);
    const decrypted = decrypt(parsed.data, privateKey) as typeof notification;
    expect(decrypted.notifyUsers).toEqual([{ userId: 'u2' }, { userId: 'u3' }]);
  });

  it('throws when encryption is on but the public key is unusable', () => {
    expect(() =>
      webhookBody({ type: 'x.y', timestamp: TIMESTAMP, data: {} }, { ...PLAIN, encryptData: true, publicKey: '' }),
    ).toThrow();
  });
});

describe('isUserObject', () => {
  it.each([
    [{ userId: 'u1' }, true],
    [
      {
        userId: 'u1',
        name: 'A',
        email: 'a@example.com',
        initial: 'A',
        accessRole: 'editor',
        photoUrl: 'p',
        color: 'c',
        textColor: 't',
      },
      true,
    ],
    [{ userId: '', name: 'A' }, true],
    [{ userId: 'u1', organizationId: 'o' }, false],
    [{ userId: 'u1', name: 'A', documentId: 'd' }, false],
    [{ userId: 1 }, false],
    [{ name: 'A', email: 'a@example.com' }, false],
    [[{ userId: 'u1' }], false],
    [null, false],
    ['u1', false],
  ])('%j → %s', (value, expected) => {
    expect(isUserObject(value)).toBe(expected);
  });

  it('protectUserData leaves scalars and non-plain objects as they are', () => {
    const date = new Date(0);
    expect(protectUserData(date)).toBe(date);
    expect(protectUserData('text')).toBe('text');
    expect(protectUserData(3)).toBe(3);
  });
});
