import { defaultApiKeyName, isDisposableEmail, normalizeEmail } from '../../shared/domain/owner-email';

describe('owner emails', () => {
  it('normalises by trimming and lower-casing', () => {
    expect(normalizeEmail('  Jane.Doe@X.IO ')).toBe('jane.doe@x.io');
  });

  it('names the first key from the local part, first letter upper-cased', () => {
    expect(defaultApiKeyName('jane.doe@x.io')).toBe('Jane.doe Test API Key');
  });

  it.each(['a@mailinator.com', 'a@MAILINATOR.COM', 'a@sub.mailinator.com', 'a@guerrillamail.com'])(
    'treats %s as disposable',
    (email) => {
      expect(isDisposableEmail(email)).toBe(true);
    },
  );

  it.each(['a@gmail.com', 'a@example.com', 'a@company.io'])('accepts %s', (email) => {
    expect(isDisposableEmail(email)).toBe(false);
  });
});
