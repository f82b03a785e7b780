/**
 * Which changes of the table take access away (shared/domain/live/revocation.ts `accessScopeOf`), as the stream
 * decoder names them (shared/db/item-change.ts): removals named from the image before them, and the filter of a
 * removal by sort key alone.
 */
import { decodeChange, streamFiltersOf, wants, type ItemImages } from '../../shared/db/item-change';
import { accessScopeOf } from '../../shared/domain/live/revocation';
import { liveRevocationConsumer } from '../../shared/workers';

const KEY = 'key_0123456789abcdef0123456789abcdef';
const ORG = `T#${KEY}#ORG#org`;
const membership = (accessRole: string) => ({
  pk: `${ORG}#MEMBERS#ORG`,
  sk: 'U#bob',
  userId: 'bob',
  organizationId: 'org',
  levelType: 'organization',
  accessRole,
});
const grant = (accessRole: string, expiresAt?: number) => ({
  pk: `T#${KEY}#USER#cy#PERMS`,
  sk: 'O#org#DOC#d1',
  userId: 'cy',
  organizationId: 'org',
  type: 'document',
  id: 'd1',
  accessRole,
  ...(expiresAt === undefined ? {} : { expiresAt }),
});
const groupMember = { pk: `${ORG}#GROUP#design`, sk: 'U#bob', organizationId: 'org', groupId: 'design', userId: 'bob' };
const documentItem = (fields: Record<string, unknown> = {}) => ({
  pk: ORG,
  sk: 'DOC#d1',
  organizationId: 'org',
  documentId: 'd1',
  accessType: 'organizationPrivate',
  disabled: false,
  ...fields,
});
const scopeOf = (images: ItemImages) => accessScopeOf(decodeChange(images));

describe('the stream decoder on changes of access', () => {
  it('names a removal from the image before it, with its tenant', () => {
    expect(decodeChange({ eventName: 'REMOVE', oldImage: membership('editor') })).toMatchObject({
      kind: 'membership',
      apiKeyId: KEY,
    });
    expect(decodeChange({ eventName: 'REMOVE', oldImage: grant('editor') })).toMatchObject({
      kind: 'grant',
      apiKeyId: KEY,
    });
    expect(decodeChange({ eventName: 'REMOVE', oldImage: groupMember })).toMatchObject({
      kind: 'groupMember',
      apiKeyId: KEY,
    });
  });

  it('names a document by its sort key and access type, and a notification setting under the same prefix no kind', () => {
    const setting = { pk: `${ORG}#NCONFIG#bob`, sk: 'DOC#d1', userId: 'bob', documentId: 'd1', emailLevel: 'ALL' };

    expect(decodeChange({ eventName: 'MODIFY', newImage: documentItem() }).kind).toBe('document');
    expect(decodeChange({ eventName: 'MODIFY', newImage: setting }).kind).toBe('other');
  });

  it('filters removals by sort key alone, one pattern for every kind removed, and hands the consumer only its kinds', () => {
    const removals = streamFiltersOf([liveRevocationConsumer]).filter((filter) => filter.eventNames.includes('REMOVE'));
    const activityRemoved = decodeChange({ eventName: 'REMOVE', oldImage: { pk: ORG, sk: 'ACTIVITY' } });

    expect(removals).toEqual([{ eventNames: ['REMOVE'], sortKey: [{ prefix: 'U#' }, { prefix: 'O#' }] }]);
    expect(
      wants(liveRevocationConsumer.changes, decodeChange({ eventName: 'REMOVE', oldImage: grant('viewer') })),
    ).toBe(true);
    expect(wants(liveRevocationConsumer.changes, activityRemoved)).toBe(false);
  });

  it('refuses a removal interest that no sort-key filter can serve', () => {
    expect(() => streamFiltersOf([{ changes: [{ kind: 'migration', eventNames: ['REMOVE'] }] }])).toThrow('sort key');
  });
});

describe('the connections a change of access concerns', () => {
  const bobInOrg = { apiKeyId: KEY, organizationId: 'org', userId: 'bob' };

  it('is the user in the organization for a membership, grant or group membership removed', () => {
    expect(scopeOf({ eventName: 'REMOVE', oldImage: membership('editor') })).toEqual(bobInOrg);
    expect(scopeOf({ eventName: 'REMOVE', oldImage: grant('editor') })).toEqual({ ...bobInOrg, userId: 'cy' });
    expect(scopeOf({ eventName: 'REMOVE', oldImage: groupMember })).toEqual(bobInOrg);
  });

  it('is the user for a role lowered or a grant expiring sooner, and nobody for access added or raised', () => {
    expect(scopeOf({ eventName: 'MODIFY', oldImage: membership('editor'), newImage: membership('viewer') })).toEqual(
      bobInOrg,
    );
    expect(
      scopeOf({ eventName: 'MODIFY', oldImage: grant('editor'), newImage: grant('editor', 1_900_000_000) }),
    ).toMatchObject({ userId: 'cy' });
    expect(
      scopeOf({ eventName: 'MODIFY', oldImage: membership('viewer'), newImage: membership('editor') }),
    ).toBeUndefined();
    expect(scopeOf({ eventName: 'INSERT', newImage: membership('editor') })).toBeUndefined();
    expect(
      scopeOf({ eventName: 'MODIFY', oldImage: grant('editor', 1_900_000_000), newImage: grant('editor') }),
    ).toBeUndefined();
  });

  it("is the document's connections when it is disabled or its access type or folder changes, and nobody for a new name", () => {
    const before = documentItem();

    expect(scopeOf({ eventName: 'MODIFY', oldImage: before, newImage: documentItem({ disabled: true }) })).toEqual({
      apiKeyId: KEY,
      organizationId: 'org',
      documentId: 'd1',
    });
    expect(
      scopeOf({ eventName: 'MODIFY', oldImage: before, newImage: documentItem({ accessType: 'restricted' }) }),
    ).toMatchObject({ documentId: 'd1' });
    expect(
      scopeOf({ eventName: 'MODIFY', oldImage: before, newImage: documentItem({ folderId: 'f1' }) }),
    ).toMatchObject({ documentId: 'd1' });
    expect(
      scopeOf({ eventName: 'MODIFY', oldImage: before, newImage: documentItem({ documentName: 'Renamed' }) }),
    ).toBeUndefined();
  });
});
