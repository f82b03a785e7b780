import { effectiveAccess, type AccessFacts } from '../../shared/domain/access';

const NOW = 1_800_000_000_000;
const past = NOW / 1000 - 60;
const future = NOW / 1000 + 3600;
const open = { disabled: false, accessType: 'organizationPrivate' as const };
const inFolder = { ...open, folderId: 'f' };
const restricted = { ...open, accessType: 'restricted' as const };

const cases: Array<[string, AccessFacts, 'viewer' | 'editor' | null]> = [
  ['no membership or grant at any level', { document: open }, null],
  ['a document member as viewer', { document: open, documentMembership: 'viewer' }, 'viewer'],
  ['a document member as editor', { document: open, documentMembership: 'editor' }, 'editor'],
  ['an active document permission', { document: open, documentPermission: { accessRole: 'editor' } }, 'editor'],
  [
    'a document permission expiring in the future',
    { document: open, documentPermission: { accessRole: 'viewer', expiresAt: future } },
    'viewer',
  ],
  [
    'an expired document permission',
    { document: open, documentPermission: { accessRole: 'editor', expiresAt: past } },
    null,
  ],
  [
    'a permission expiring exactly now',
    { document: open, documentPermission: { accessRole: 'editor', expiresAt: NOW / 1000 } },
    null,
  ],
  ['a folder member, document in the folder', { document: inFolder, folderMembership: 'viewer' }, 'viewer'],
  ['a folder member, document in no folder', { document: open, folderMembership: 'editor' }, null],
  [
    'a folder permission, document in the folder',
    { document: inFolder, folderPermission: { accessRole: 'editor' } },
    'editor',
  ],
  [
    'an expired folder permission',
    { document: inFolder, folderPermission: { accessRole: 'editor', expiresAt: past } },
    null,
  ],
  ['an organization member', { document: open, organizationMembership: 'viewer' }, 'viewer'],
  [
    'an organization permission',
    { document: open, organizationPermission: { accessRole: 'editor', expiresAt: future } },
    'editor',
  ],
  [
    'an expired organization permission',
    { document: open, organizationPermission: { accessRole: 'editor', expiresAt: past } },
    null,
  ],
  ['an organization member on a restricted document', { document: restricted, organizationMembership: 'editor' }, null],
  [
    'an organization permission on a restricted document',
    { document: restricted, organizationPermission: { accessRole: 'editor' } },
    null,
  ],
  ['a document member on a restricted document', { document: restricted, documentMembership: 'viewer' }, 'viewer'],
  [
    'a folder member on a restricted document in the folder',
    { document: { ...restricted, folderId: 'f' }, folderMembership: 'editor' },
    'editor',
  ],
  [
    'an organization member on a public document',
    { document: { ...open, accessType: 'public' }, organizationMembership: 'viewer' },
    'viewer',
  ],
  [
    'any member of a disabled document',
    { document: { ...open, disabled: true }, documentMembership: 'editor', organizationMembership: 'editor' },
    null,
  ],
  [
    'viewer on the document and editor in the organization',
    { document: open, documentMembership: 'viewer', organizationMembership: 'editor' },
    'editor',
  ],
  [
    'editor on the document and viewer through the folder',
    { document: inFolder, documentMembership: 'editor', folderMembership: 'viewer' },
    'editor',
  ],
  [
    'viewer everywhere and an expired editor grant',
    {
      document: inFolder,
      documentMembership: 'viewer',
      folderMembership: 'viewer',
      organizationMembership: 'viewer',
      documentPermission: { accessRole: 'editor', expiresAt: past },
    },
    'viewer',
  ],
];

describe('effective access of a user to a document', () => {
  it.each(cases)('%s', (_, facts, expected) => {
    expect(effectiveAccess(facts, NOW)).toBe(expected);
  });
});
