/**
 * Profile copies on memberships (shared/domain/profile-copies.ts): Get Users answers name, email and initial from
 * the memberships, so every way a profile changes must reach every membership of the user — at once for what the
 * request handles, through the profile-copies worker (the table's stream) for the rest.
 *
 * @table-stream
 */
import { BatchGetCommand, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { runAsWorker } from '../../local/grant-check';
import { startStreamPoller, type StreamPoller } from '../../local/stream-poller';
import { handler as addUsers } from '../../functions/users/add';
import { handler as getUsers } from '../../functions/users/get';
import { handler as updateUsers } from '../../functions/users/update';
import { handler as copiesHandler } from '../../shared/domain/stream/profile-copies';
import { TABLE_NAME, db } from '../../shared/db/client';
import { upsertMembershipItem } from '../../shared/db/membership';
import { transactWrite } from '../../shared/db/transact';
import * as profiles from '../../shared/db/profile';
import { profileKey } from '../../shared/db/profile';
import { COPIES_IN_REQUEST } from '../../shared/domain/profile-copies';
import { addUsers as addUsersInDomain } from '../../shared/domain/users';
import { profileCopiesConsumer } from '../../shared/workers';
import { newTenant, siblingKey, type Tenant } from '../support/fixtures';
import { endpoint, type Credentials } from '../support/invoke';
import { uniqueId } from '../support/ids';
import { eventually } from '../support/wait';

const add = endpoint(addUsers, '/v2/users/add');
const update = endpoint(updateUsers, '/v2/users/update');
const get = endpoint(getUsers, '/v2/users/get');

type Listed = { userId: string; name?: string; email?: string; initial?: string; accessRole: string };
const listed = async (tenant: Credentials, data: Record<string, unknown>) =>
  (await get(tenant, data)).body.result?.data as Listed[];
/** The stream record of the user's profile as it is now (a change of name, so the consumer acts on it). */
async function profileRecord(tenant: Credentials & { apiKeyId: string }, userId: string): Promise<DynamoDBStreamEvent> {
  const { Item } = await db.send(
    new GetCommand({ TableName: TABLE_NAME, Key: profileKey(tenant.apiKeyId, userId), ConsistentRead: true }),
  );
  const image = Item as Record<string, unknown>;
  return {
    Records: [
      {
        eventName: 'MODIFY',
        eventSource: 'aws:dynamodb',
        dynamodb: {
          Keys: marshall({ pk: image.pk, sk: image.sk }) as never,
          NewImage: marshall(image, { removeUndefinedValues: true }) as never,
          OldImage: marshall({ ...image, name: 'before' }, { removeUndefinedValues: true }) as never,
          SequenceNumber: '1'.padStart(21, '0'),
        },
      },
    ],
  };
}

const userIn = async (tenant: Credentials, data: Record<string, unknown>, userId: string) =>
  (await listed(tenant, data)).find((u) => u.userId === userId);

describe('profile copies on memberships', () => {
  let tenant: Tenant;

  beforeAll(async () => {
    tenant = await newTenant();
  });

  it('shows a name changed at one level at every other level of the organization at once', async () => {
    const organizationId = uniqueId('org');
    await add(tenant, { organizationId, users: [{ userId: 'u1', name: 'alice', email: 'a@x.io' }] });
    await add(tenant, {
      organizationId,
      documentId: 'd1',
      createDocument: true,
      users: [{ userId: 'u1', accessRole: 'viewer' }],
    });
    await add(tenant, { organizationId, folderId: 'f1', createFolder: true, users: [{ userId: 'u1' }] });

    await update(tenant, { organizationId, documentId: 'd1', users: [{ userId: 'u1', name: 'bob' }] });

    const expected = { userId: 'u1', name: 'bob', email: 'a@x.io', initial: 'B' };
    expect(await userIn(tenant, { organizationId }, 'u1')).toEqual({ ...expected, accessRole: 'editor' });
    expect(await userIn(tenant, { organizationId, documentId: 'd1' }, 'u1')).toEqual({
      ...expected,
      accessRole: 'viewer',
    });
    expect(await userIn(tenant, { organizationId, folderId: 'f1' }, 'u1')).toEqual({
      ...expected,
      accessRole: 'editor',
    });
    expect(await listed(tenant, { organizationId, allDocuments: true })).toEqual([
      { ...expected, accessRole: 'viewer', documentId: 'd1' },
    ]);
  });

  it('copies the stored profile to a membership added without profile fields', async () => {
    const organizationId = uniqueId('org');
    await add(tenant, { organizationId, users: [{ userId: 'u1', name: 'carol', email: 'c@x.io', initial: 'Q' }] });

    await add(tenant, { organizationId, documentId: 'd1', createDocument: true, users: [{ userId: 'u1' }] });

    expect(await userIn(tenant, { organizationId, documentId: 'd1' }, 'u1')).toEqual({
      userId: 'u1',
      name: 'carol',
      email: 'c@x.io',
      initial: 'Q',
      accessRole: 'editor',
    });
  });

  it("shows an email changed by Add Users in another organization on the user's memberships everywhere", async () => {
    const first = uniqueId('org');
    const second = uniqueId('org');
    await add(tenant, { organizationId: first, users: [{ userId: 'u1', name: 'dave', email: 'old@x.io' }] });
    await add(tenant, { organizationId: second, users: [{ userId: 'u1' }] });

    await add(tenant, { organizationId: second, users: [{ userId: 'u1', email: 'new@x.io' }] });

    expect(await userIn(tenant, { organizationId: first }, 'u1')).toMatchObject({ name: 'dave', email: 'new@x.io' });
  });

  it("leaves another tenant's user of the same id as it was", async () => {
    const organizationId = uniqueId('org');
    const other = await newTenant();
    const sibling = await siblingKey(tenant);
    for (const key of [tenant, other, sibling])
      await add(key, { organizationId, users: [{ userId: 'u1', name: 'erin' }] });

    await update(tenant, { organizationId, users: [{ userId: 'u1', name: 'frank' }] });

    expect(await userIn(tenant, { organizationId }, 'u1')).toMatchObject({ name: 'frank' });
    expect(await userIn(other, { organizationId }, 'u1')).toMatchObject({ name: 'erin' });
    expect(await userIn(sibling, { organizationId }, 'u1')).toMatchObject({ name: 'erin' });
  });

  describe('through the stream', () => {
    let poller: StreamPoller;

    beforeAll(async () => {
      poller = await startStreamPoller({
        endpoint: process.env.DYNAMODB_ENDPOINT as string,
        tableName: process.env.TABLE_NAME as string,
        idleMs: 50,
        workers: [
          {
            worker: profileCopiesConsumer,
            handler: (event: DynamoDBStreamEvent) => runAsWorker(profileCopiesConsumer, () => copiesHandler(event)),
          },
        ],
      });
    });

    afterAll(async () => {
      await poller.stop();
    });

    it('brings memberships beyond what a request updates in step', async () => {
      const organizationId = uniqueId('org');
      const documents = Array.from({ length: COPIES_IN_REQUEST + 20 }, (_, i) => `doc-${String(i).padStart(3, '0')}`);
      await add(tenant, { organizationId, users: [{ userId: 'u1', name: 'gina' }] });
      // Seeded through the domain, not the handler: the memberships are what this test needs, not 120 more
      // requests through the middleware (Add Users itself is tested above and in users.test.ts).
      for (const documentId of documents)
        await addUsersInDomain(tenant.apiKeyId, {
          organizationId,
          documentId,
          createDocument: true,
          users: [{ userId: 'u1' }],
        });

      await update(tenant, { organizationId, users: [{ userId: 'u1', name: 'hana' }] });

      const last = { organizationId, documentId: documents[documents.length - 1] };
      expect(
        await eventually(
          () => userIn(tenant, last, 'u1'),
          (user) => user?.name === 'hana',
        ),
      ).toMatchObject({ name: 'hana', initial: 'H' });
      const all = await eventually(
        () => listed(tenant, { organizationId, allDocuments: true, pageSize: 1000 }),
        (users) => users.every((u) => u.name === 'hana'),
      );
      expect(all.filter((u) => u.name !== 'hana')).toEqual([]);
      expect(all).toHaveLength(documents.length);
    });

    it('copies a profile change that no request copied to the memberships', async () => {
      const organizationId = uniqueId('org');
      await add(tenant, { organizationId, users: [{ userId: 'u1', name: 'ivan', email: 'i@x.io' }] });
      // As if the request that changed the profile stopped before it updated the copies.
      await db.send(
        new UpdateCommand({
          TableName: TABLE_NAME,
          Key: profileKey(tenant.apiKeyId, 'u1'),
          UpdateExpression: 'SET #name = :name, initial = :initial',
          ExpressionAttributeNames: { '#name': 'name' },
          ExpressionAttributeValues: { ':name': 'jules', ':initial': 'J' },
        }),
      );

      expect(
        await eventually(
          () => userIn(tenant, { organizationId }, 'u1'),
          (user) => user?.name === 'jules',
        ),
      ).toEqual({
        userId: 'u1',
        name: 'jules',
        email: 'i@x.io',
        initial: 'J',
        accessRole: 'editor',
      });
    });

    it('corrects a membership added with a copy older than the profile', async () => {
      const organizationId = uniqueId('org');
      await add(tenant, { organizationId, users: [{ userId: 'u1', name: 'kim', email: 'k@x.io' }] });
      // As if another request changed the profile between this membership's profile read and its write.
      await transactWrite([
        upsertMembershipItem(
          tenant.apiKeyId,
          organizationId,
          { type: 'folder', id: 'f1' },
          'u1',
          'viewer',
          { name: 'old', profileVersion: 0 },
          Date.now(),
        ),
      ]);

      expect(
        await eventually(
          () => userIn(tenant, { organizationId, folderId: 'f1' }, 'u1'),
          (user) => user?.name === 'kim',
        ),
      ).toEqual({
        userId: 'u1',
        name: 'kim',
        email: 'k@x.io',
        initial: 'K',
        accessRole: 'viewer',
      });
    });
  });

  describe('a write that answers success is read back (issue 29 item 7)', () => {
    // Each test has a user of its own: the tests above share u1, whose memberships outnumber what a request copies.
    const handleCopies = (event: DynamoDBStreamEvent) => runAsWorker(profileCopiesConsumer, () => copiesHandler(event));

    afterEach(() => {
      jest.restoreAllMocks();
    });

    it('shows an update at once at the level written, with no stream consumer run', async () => {
      const organizationId = uniqueId('org');
      const userId = uniqueId('user');
      await add(tenant, { organizationId, users: [{ userId, name: 'lena', email: 'l@x.io' }] });
      await add(tenant, { organizationId, documentId: 'd1', createDocument: true, users: [{ userId }] });
      await add(tenant, { organizationId, folderId: 'f1', createFolder: true, users: [{ userId }] });

      await update(tenant, { organizationId, documentId: 'd1', users: [{ userId, name: 'mona' }] });
      const atDocument = await userIn(tenant, { organizationId, documentId: 'd1' }, userId);
      await add(tenant, { organizationId, folderId: 'f1', users: [{ userId, name: 'nell' }] });
      const atFolder = await userIn(tenant, { organizationId, folderId: 'f1' }, userId);
      await update(tenant, { organizationId, users: [{ userId, email: 'o@x.io' }] });
      const atOrganization = await userIn(tenant, { organizationId }, userId);

      expect(atDocument).toMatchObject({ name: 'mona', initial: 'M', email: 'l@x.io' });
      expect(atFolder).toMatchObject({ name: 'nell', initial: 'N', email: 'l@x.io' });
      expect(atOrganization).toMatchObject({ name: 'nell', initial: 'N', email: 'o@x.io' });
    });

    it('reads the members of a level strongly consistently, so that in AWS too a write just answered is seen', async () => {
      const organizationId = uniqueId('org');
      const userId = uniqueId('user');
      await add(tenant, { organizationId, documentId: 'd1', createDocument: true, users: [{ userId, name: 'pia' }] });
      // Reads of the level's memberships (their partition names the organization); not those of credentials.
      const reads: Array<{ command: string; consistent: unknown }> = [];
      const ofOrganization = (value: unknown) => String(value).includes(organizationId);
      const send = db.send.bind(db);
      // db.send's overloads include the callback form, whose return is void: this one stands in for the promise form.
      // eslint-disable-next-line @typescript-eslint/no-misused-promises
      jest.spyOn(db, 'send').mockImplementation(((command: unknown) => {
        if (command instanceof QueryCommand && ofOrganization(command.input.ExpressionAttributeValues?.[':pk'])) {
          reads.push({ command: 'Query', consistent: command.input.ConsistentRead });
        }
        if (command instanceof BatchGetCommand) {
          for (const request of Object.values(command.input.RequestItems ?? {})) {
            if (request.Keys?.some((key) => ofOrganization(key.pk)))
              reads.push({ command: 'BatchGet', consistent: request.ConsistentRead });
          }
        }
        return send(command as never);
      }) as typeof db.send);

      await listed(tenant, { organizationId, documentId: 'd1' });
      await listed(tenant, { organizationId, documentId: 'd1', userIds: [userId] });

      expect(reads).toEqual([
        { command: 'Query', consistent: true },
        { command: 'BatchGet', consistent: true },
      ]);
    });

    it('keeps a newer name when the consumer, having read the profile before an update, writes its copy after it', async () => {
      const organizationId = uniqueId('org');
      const userId = uniqueId('user');
      await add(tenant, { organizationId, users: [{ userId, name: 'quinn' }] });
      await add(tenant, { organizationId, documentId: 'd1', createDocument: true, users: [{ userId }] });
      const record = await profileRecord(tenant, userId);
      // The consumer reads the profile (quinn); the update commits (rosa) before the consumer writes its copies,
      // as on a busy machine where the consumer is slow.
      const getProfiles = profiles.getProfiles;
      jest.spyOn(profiles, 'getProfiles').mockImplementationOnce(async (...args: Parameters<typeof getProfiles>) => {
        const read = await getProfiles(...args);
        const updated = await update(tenant, { organizationId, users: [{ userId, name: 'rosa' }] });
        expect(updated.body.result?.data[userId].success).toBe(true);
        return read;
      });

      await handleCopies(record);

      expect(await userIn(tenant, { organizationId }, userId)).toMatchObject({ name: 'rosa', initial: 'R' });
      expect(await userIn(tenant, { organizationId, documentId: 'd1' }, userId)).toMatchObject({
        name: 'rosa',
        initial: 'R',
      });
    });

    it('writes again on a fresh read when another write changed the profile after the request read it', async () => {
      const organizationId = uniqueId('org');
      const userId = uniqueId('user');
      await add(tenant, { organizationId, users: [{ userId, name: 'uma', email: 'old@x.io' }] });
      await add(tenant, { organizationId, documentId: 'd1', createDocument: true, users: [{ userId }] });
      // The email changes at the document after the name change at the organization read the profile.
      const getProfiles = profiles.getProfiles;
      jest.spyOn(profiles, 'getProfiles').mockImplementationOnce(async (...args: Parameters<typeof getProfiles>) => {
        const read = await getProfiles(...args);
        const emailed = await update(tenant, {
          organizationId,
          documentId: 'd1',
          users: [{ userId, email: 'new@x.io' }],
        });
        expect(emailed.body.result?.data[userId].success).toBe(true);
        return read;
      });

      const named = await update(tenant, { organizationId, users: [{ userId, name: 'vera' }] });

      expect(named.body.result?.data[userId]).toMatchObject({ success: true });
      const expected = { name: 'vera', initial: 'V', email: 'new@x.io' };
      expect(await userIn(tenant, { organizationId }, userId)).toMatchObject(expected);
      expect(await userIn(tenant, { organizationId, documentId: 'd1' }, userId)).toMatchObject(expected);
    });

    it('answers ABORTED and leaves the user as it was when the profile changes between every read and write', async () => {
      const organizationId = uniqueId('org');
      const userId = uniqueId('user');
      await add(tenant, { organizationId, users: [{ userId, name: 'wanda' }] });
      const getProfiles = profiles.getProfiles;
      jest.spyOn(profiles, 'getProfiles').mockImplementation(async (...args: Parameters<typeof getProfiles>) => {
        const read = await getProfiles(...args);
        // Another writer's change of the profile, each time just after the request read it.
        await db.send(
          new UpdateCommand({
            TableName: TABLE_NAME,
            Key: profileKey(tenant.apiKeyId, userId),
            UpdateExpression: 'SET version = if_not_exists(version, :zero) + :one',
            ExpressionAttributeValues: { ':zero': 0, ':one': 1 },
          }),
        );
        return read;
      });

      const response = await update(tenant, { organizationId, users: [{ userId, name: 'xena' }] });
      jest.restoreAllMocks();

      expect(response.statusCode).toBe(409);
      expect(response.body.error).toMatchObject({ status: 'ABORTED' });
      expect(await userIn(tenant, { organizationId }, userId)).toMatchObject({ name: 'wanda' });
    });

    it('keeps a newer name when an older stream record of the profile is handed again after the update', async () => {
      const organizationId = uniqueId('org');
      const userId = uniqueId('user');
      await add(tenant, { organizationId, users: [{ userId, name: 'sara' }] });
      await add(tenant, { organizationId, documentId: 'd1', createDocument: true, users: [{ userId }] });
      const older = await profileRecord(tenant, userId);
      await update(tenant, { organizationId, documentId: 'd1', users: [{ userId, name: 'tess' }] });
      const newer = await profileRecord(tenant, userId);

      // Redelivered and reordered: the newer record first, then the older one again.
      await handleCopies(newer);
      await handleCopies(older);
      await handleCopies(older);

      expect(await userIn(tenant, { organizationId }, userId)).toMatchObject({ name: 'tess', initial: 'T' });
      expect(await userIn(tenant, { organizationId, documentId: 'd1' }, userId)).toMatchObject({
        name: 'tess',
        initial: 'T',
      });
    });
  });
});
