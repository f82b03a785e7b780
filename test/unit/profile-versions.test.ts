/**
 * Versions of profiles and of their copies on memberships (shared/db/profile.ts, shared/db/membership.ts): a
 * profile's version moves only when name, email or initial change, and a copy replaces only an older one.
 */
import { replacesCopy } from '../../shared/db/membership';
import { profileAfter } from '../../shared/db/profile';

describe('profile versions', () => {
  it('gives a new profile version 1', () => {
    expect(profileAfter(undefined, { userId: 'u1', name: 'ann' })).toEqual({
      userId: 'u1',
      name: 'ann',
      initial: 'A',
      version: 1,
    });
  });

  it('counts a change of name, email or initial as one more version', () => {
    const stored = { userId: 'u1', name: 'ann', initial: 'A', version: 4 };

    expect(profileAfter(stored, { userId: 'u1', email: 'a@x.io' }).version).toBe(5);
    expect(profileAfter(stored, { userId: 'u1', initial: 'Z' }).version).toBe(5);
    expect(profileAfter(stored, { userId: 'u1', name: 'bo' })).toEqual({
      userId: 'u1',
      name: 'bo',
      initial: 'B',
      version: 5,
    });
  });

  it('keeps the version when the write changes none of the copied fields (a role change re-adding the user)', () => {
    const stored = { userId: 'u1', name: 'ann', initial: 'A', version: 4 };

    expect(profileAfter(stored, { userId: 'u1' }).version).toBe(4);
    expect(profileAfter(stored, { userId: 'u1', name: 'ann' }).version).toBe(4);
  });

  it('reads a profile written before versions as version 0', () => {
    expect(profileAfter({ userId: 'u1', name: 'ann' }, { userId: 'u1', name: 'bo' }).version).toBe(1);
  });
});

describe('which copy replaces which', () => {
  const copy = (name: string, profileVersion: number) => ({ name, profileVersion });

  it('replaces a copy made from an older profile, even with the same values', () => {
    expect(replacesCopy(copy('ann', 1), copy('bo', 2))).toBe(true);
    expect(replacesCopy(copy('ann', 1), copy('ann', 2))).toBe(true);
  });

  it('never replaces a copy made from a newer profile', () => {
    expect(replacesCopy(copy('bo', 3), copy('ann', 2))).toBe(false);
  });

  it('leaves an equal copy of the same version alone, and corrects a different one (profiles before versions)', () => {
    expect(replacesCopy(copy('ann', 2), copy('ann', 2))).toBe(false);
    expect(replacesCopy(copy('ann', 0), copy('bo', 0))).toBe(true);
  });
});
