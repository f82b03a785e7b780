/**
 * The 60-s backstop of live access (decisions §13): a grant that expires by time writes nothing to the table's
 * stream, so only the scheduled pass can close a SILENT connection that relied on it. The pass runs as the backstop
 * worker runs it (under its grants), at a chosen moment instead of waiting a minute: `recheckDueConnections(now)`.
 * Connections are opened through the socket handlers with a recording Management API (test/support/live-harness.ts)
 * and never send anything.
 */
import { recheckDueConnections } from '../../shared/domain/live/revocation';
import { handler as backstopHandler } from '../../functions/workers/live-access-backstop';
import { runAsWorker } from '../../local/grant-check';
import { liveAccessBackstopWorker } from '../../shared/workers';
import { newTenant, type Tenant } from '../support/fixtures';
import { closedByService, deleted, openLiveRoom } from '../support/live-harness';

let tenant: Tenant;

beforeAll(async () => {
  tenant = await newTenant();
});

/** One backstop pass as if run at `now`, under the worker's grants. */
const passAt = (now: number) => runAsWorker(liveAccessBackstopWorker, () => recheckDueConnections(now));
const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('the live access backstop', () => {
  it('closes a silent connection whose only access, a document permission, expired by time', async () => {
    const { ids, rest, open, roomEntry } = await openLiveRoom(tenant);
    await rest('/v2/auth/permissions/add', {
      user: { userId: 'cy' },
      permissions: {
        resources: [
          {
            type: 'document',
            id: ids.documentId,
            organizationId: ids.organizationId,
            accessRole: 'editor',
            expiresAt: nowSeconds() + 20,
          },
        ],
      },
    });
    const cy = await open('cy');

    const outcome = await passAt(Date.now() + 61_000);

    expect(outcome.closed).toBeGreaterThanOrEqual(1);
    expect(closedByService(cy)).toBe(true);
    expect(await roomEntry(cy)).toMatchObject({ closedAt: expect.any(Number), revoked: true });
  });

  it('reads only connections due: one checked less than 50 s ago is left alone, then closed once it is due', async () => {
    const { ids, rest, open, roomEntry } = await openLiveRoom(tenant);
    await rest('/v2/auth/permissions/add', {
      user: { userId: 'cy' },
      permissions: {
        resources: [
          {
            type: 'document',
            id: ids.documentId,
            organizationId: ids.organizationId,
            accessRole: 'editor',
            expiresAt: nowSeconds() + 5,
          },
        ],
      },
    });
    const cy = await open('cy');
    const opened = Date.now();

    await passAt(opened + 30_000);
    const afterEarlyPass = await roomEntry(cy);
    await passAt(opened + 61_000);

    expect(afterEarlyPass).toBeDefined();
    expect(closedByService(cy)).toBe(true);
    expect(await roomEntry(cy)).toMatchObject({ closedAt: expect.any(Number), revoked: true });
  });

  it('makes a silent editor read-only when the permission that made it an editor expires, leaving its viewer membership', async () => {
    const { ids, rest, open, roomEntry } = await openLiveRoom(tenant);
    await rest('/v2/users/add', {
      organizationId: ids.organizationId,
      users: [{ userId: 'eve', accessRole: 'viewer' }],
    });
    await rest('/v2/auth/permissions/add', {
      user: { userId: 'eve' },
      permissions: {
        resources: [
          {
            type: 'document',
            id: ids.documentId,
            organizationId: ids.organizationId,
            accessRole: 'editor',
            expiresAt: nowSeconds() + 20,
          },
        ],
      },
    });
    const eve = await open('eve');
    expect((await roomEntry(eve))?.role).toBe('editor');

    const outcome = await passAt(Date.now() + 61_000);

    expect(outcome.changed).toBeGreaterThanOrEqual(1);
    expect((await roomEntry(eve))?.role).toBe('viewer');
    expect(deleted).not.toContain(eve);
  });

  it('keeps a connection whose access holds, checked anew and not due again for another 50 s', async () => {
    const { open, roomEntry } = await openLiveRoom(tenant);
    const ann = await open('ann');
    const later = Date.now() + 61_000;

    await passAt(later);
    const checked = await roomEntry(ann);
    const again = await passAt(later + 10_000);

    expect(checked?.checkedAt).toBe(later);
    expect(deleted).not.toContain(ann);
    expect(again.checked).toBe(0);
  });

  it('runs a pass from its scheduled handler under its own grants', async () => {
    await expect(runAsWorker(liveAccessBackstopWorker, () => backstopHandler())).resolves.toMatchObject({
      closed: expect.any(Number),
    });
  });
});
