import { key, prefix, segment, tenantKey } from '../../shared/db/keys';

describe('key encoding', () => {
  it('keeps plain ids readable', () => {
    expect(segment('doc-1')).toBe('doc-1');
  });

  it('never lets a separator inside an id collide with a pair of ids', () => {
    expect(key(segment('a#b'), segment('c'))).not.toBe(key(segment('a'), segment('b#c')));
    expect(segment('USER#1')).not.toContain('#');
  });

  it('keeps ids that differ only in escaped characters distinct', () => {
    const ids = ['a#b', 'a%23b', 'a%b', '~a', '%7Ea', 'a|b', 'a~b'];

    expect(new Set(ids.map(segment)).size).toBe(ids.length);
  });

  it('hashes long ids so a key of several 256-character ids stays within DynamoDB limits', () => {
    const long = '𝄞'.repeat(256);

    const encoded = segment(long);

    expect(encoded.startsWith('~')).toBe(true);
    expect(
      Buffer.byteLength(key('T', encoded, 'DOC', segment('é'.repeat(256)), 'USER', segment('#'.repeat(256)))),
    ).toBeLessThan(1024);
    expect(segment(long)).toBe(encoded);
    expect(segment(`${long.slice(0, -2)}x`)).not.toBe(encoded);
  });

  it('never produces a hashed form for an id that starts with ~', () => {
    expect(segment('~abc').startsWith('~')).toBe(false);
  });

  it('builds prefixes that end with the separator so a query never matches a longer id', () => {
    expect(prefix('DOC', segment('a'))).toBe('DOC#a#');
    expect(tenantKey('key_1', 'ORG', segment('o'))).toBe('T#key_1#ORG#o');
  });
});
