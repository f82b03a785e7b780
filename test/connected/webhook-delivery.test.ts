/**
 * The event pipeline end to end inside one process: operations write, the stream poller wakes the events worker,
 * the file queue feeds the delivery worker, and a receiver on 127.0.0.1 verifies what arrives. The retry schedule
 * runs compressed 100,000-fold (test/support/table-per-file.ts), so a day of retries takes seconds; attempts time out
 * after 5 s instead of 15 s, and after 500 ms in the test of a receiver that never answers (the 15 s default is
 * checked in the unit tier).
 *
 * @table-stream
 */
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../shared/core/config';
import { TABLE_NAME, db } from '../../shared/db/client';
import { key, segment } from '../../shared/db/keys';
import { queryAll } from '../../shared/db/query';
import { newTenant, siblingKey, type Tenant } from '../support/fixtures';
import { routeCaller, type Credentials } from '../support/invoke';
import { uniqueId } from '../support/ids';
import {
  startPipeline,
  startReceiver,
  typeOf,
  type Pipeline,
  type ReceivedRequest,
  type Receiver,
} from '../support/webhook-pipeline';
import { waitFor } from '../support/wait';

const call = routeCaller(() => tenant);
let tenant: Tenant;
let pipeline: Pipeline;
const receivers: Receiver[] = [];

async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
  const started = await startReceiver(...args);
  receivers.push(started);
  return started;
}

beforeAll(async () => {
  pipeline = await startPipeline();
});
afterAll(async () => {
  await pipeline.stop();
  await Promise.all(receivers.map((r) => r.close()));
});
afterEach(() => jest.restoreAllMocks());
beforeEach(async () => {
  tenant = await newTenant();
  await call('/v2/workspace/activityconfig/update', { activityServiceConfig: { isEnabled: true } });
});

async function enable(who: Credentials = tenant, extra: Record<string, unknown> = {}): Promise<void> {
  const response = await call('/v2/workspace/advancedwebhookconfig/update', { isEnabled: true, ...extra }, who);
  expect(response.statusCode).toBe(200);
}

async function createEndpoint(
  fields: Record<string, unknown>,
  who: Credentials = tenant,
): Promise<{ id: string; secret: string }> {
  const created = await call('/v2/workspace/advancedwebhook/endpoints/create', fields, who);
  expect(created.statusCode).toBe(200);
  const id = created.body.result?.data.id as string;
  const secret = (await call('/v2/workspace/advancedwebhook/endpoints/secret/get', { endpointId: id }, who)).body.result
    ?.data.secret as string;
  return { id, secret };
}

async function addActivity(organizationId: string, actionType = 'comment.add'): Promise<void> {
  const added = await call('/v2/activities/add', {
    organizationId,
    documentId: 'doc-1',
    activities: [
      {
        featureType: 'comment',
        actionType,
        actionUser: { userId: 'ann', name: 'Ann', email: 'ann@example.com' },
        targetEntityId: 'thread-1',
      },
    ],
  });
  expect(added.body).toMatchObject({ result: { status: 'success' } });
}

function verifyBoth(request: ReceivedRequest, secret: string): unknown {
  const headers = {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  };
  new SvixWebhook(secret).verify(request.body, headers);
  return new StandardWebhook(secret).verify(request.body, headers);
}

describe('webhook delivery', () => {
  it('delivers each event type with the documented data, signed so both verifiers accept it', async () => {
    const hook = await receiver();
    await enable();
    const { secret } = await createEndpoint({ url: hook.url });
    const org = uniqueId('org');

    await addActivity(org, 'comment.add');
    const causes = [
      await call('/v2/recordings/add', {
        organizationId: org,
        documentId: 'doc-1',
        recordings: [{ annotationId: 'rec-1', type: 'recorder', recordingType: 'screen' }],
      }),
      await call('/v2/crdt/add', {
        organizationId: org,
        documentId: 'doc-1',
        editorId: 'title',
        type: 'text',
        data: 'Hello',
        userId: 'ann',
      }),
      await call('/v2/organizations/documents/add', {
        organizationId: org,
        documents: [{ documentId: 'old-doc', documentName: 'Old' }],
      }),
      await call('/v2/notifications/add', {
        organizationId: org,
        documentId: 'doc-1',
        actionUser: { userId: 'ann' },
        displayHeadlineMessageTemplate: 'Hi',
        notifyUsers: [{ userId: 'bob' }],
      }),
      await call('/v2/organizations/documents/migrate', {
        organizationId: org,
        documentId: 'old-doc',
        newDocumentId: 'new-doc',
      }),
    ];
    expect(causes.map((response) => response.body.error)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);

    const byType = async (type: string) => (await hook.waitFor(1, { type }))[0];
    const activity = await byType('comment.add');
    const notification = await byType('notification.add');
    const recording = await byType('recorder.done');
    const crdt = await byType('crdt.update_data');
    const migration = await byType('document.migration_completed');

    for (const request of [activity, notification, recording, crdt, migration]) {
      expect(verifyBoth(request, secret)).toMatchObject({ type: typeOf(request) });
      expect(request.headers['content-type']).toBe('application/json');
      expect(String(request.headers['webhook-id'])).toMatch(/^msg_/);
    }
    const body = (request: ReceivedRequest) =>
      JSON.parse(request.body) as { timestamp: string; data: Record<string, unknown> };
    expect(body(activity).timestamp).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(body(activity).data).toMatchObject({
      featureType: 'comment',
      actionType: 'comment.add',
      metadata: { organizationId: org, documentId: 'doc-1' },
    });
    expect(body(notification).data).toMatchObject({
      displayHeadlineMessageTemplate: 'Hi',
      notifyUsers: [{ userId: 'bob' }],
    });
    expect(body(recording).data).toMatchObject({ annotationId: 'rec-1', recordingType: 'screen' });
    expect(body(crdt).data).toMatchObject({ id: 'title', data: 'Hello', organizationId: org, documentId: 'doc-1' });
    expect(body(migration).data).toMatchObject({
      organizationId: org,
      documentId: 'old-doc',
      newDocumentId: 'new-doc',
      status: 'completed',
    });
  });

  it('filters by type and channel, and sends nothing to a disabled endpoint', async () => {
    const comments = await receiver();
    const orgA = await receiver();
    const off = await receiver();
    await enable();
    const a = uniqueId('org');
    const b = uniqueId('org');
    await createEndpoint({ url: comments.url, filterTypes: ['comment.add'] });
    await createEndpoint({ url: orgA.url, channels: [a] });
    await createEndpoint({ url: off.url, disabled: true });

    await addActivity(a, 'comment.add');
    await addActivity(b, 'comment.add');
    await addActivity(a, 'reaction.add');
    await comments.waitFor(2);
    await orgA.waitFor(2);
    await new Promise((resolve) => setTimeout(resolve, 500));

    expect(comments.requests.map(typeOf)).toEqual(['comment.add', 'comment.add']);
    expect(
      orgA.requests.map(
        (r) => (JSON.parse(r.body) as { data: { metadata: { organizationId: string } } }).data.metadata.organizationId,
      ),
    ).toEqual([a, a]);
    expect(off.requests).toHaveLength(0);
  });

  it('retries a receiver that answers 500 twice: three attempts with one webhook-id, recorded in attempts/get', async () => {
    const hook = await receiver((n) => (n < 2 ? 500 : 200));
    await enable();
    const { id: endpointId } = await createEndpoint({ url: hook.url });
    await addActivity(uniqueId('org'));

    const requests = await hook.waitFor(3);
    const messageId = String(requests[0].headers['webhook-id']);
    expect(new Set(requests.map((r) => r.headers['webhook-id']))).toEqual(new Set([messageId]));
    await waitFor(
      async () =>
        (await call('/v2/workspace/advancedwebhook/attempts/get', { messageId })).body.result?.data.length === 3,
    );

    const attempts = (await call('/v2/workspace/advancedwebhook/attempts/get', { messageId })).body.result
      ?.data as Array<Record<string, unknown>>;
    expect(attempts.map((a) => [a.attempt, a.status, a.responseStatusCode])).toEqual([
      [3, 'success', 200],
      [2, 'failed', 500],
      [1, 'failed', 500],
    ]);
    expect(attempts[0]).toMatchObject({ endpointId, url: hook.url, responseBody: 'answered 200' });
    const messages = (await call('/v2/workspace/advancedwebhook/messages/get', { endpointId })).body.result
      ?.data as Array<Record<string, unknown>>;
    expect(messages[0]).toMatchObject({
      id: messageId,
      type: 'comment.add',
      deliveries: [{ endpointId, status: 'success', attempts: 3 }],
    });
  });

  it('ends a delivery that never gets an answer as failed after 8 timed-out attempts, and tells the other endpoints', async () => {
    // Eight attempts that each wait out the timeout: 500 ms here, where nothing answers, so none can be mistaken.
    jest.replaceProperty(config, 'webhookTimeoutMs', 500);
    const silent = await receiver(() => 'hang');
    const watcher = await receiver();
    await enable();
    const { id: endpointId } = await createEndpoint({ url: silent.url, filterTypes: ['comment.add'] });
    await createEndpoint({ url: watcher.url, filterTypes: ['message.attempt.exhausted'] });
    await addActivity(uniqueId('org'));

    const [exhausted] = await watcher.waitFor(1);
    const messageId = String(silent.requests[0].headers['webhook-id']);
    expect(JSON.parse(exhausted.body)).toMatchObject({
      type: 'message.attempt.exhausted',
      data: { messageId, endpointId, type: 'comment.add' },
    });
    expect(silent.requests).toHaveLength(8);
    const attempts = (await call('/v2/workspace/advancedwebhook/attempts/get', { endpointId })).body.result
      ?.data as Array<Record<string, unknown>>;
    expect(attempts).toHaveLength(8);
    expect(
      attempts.every(
        (a) => a.status === 'failed' && a.responseStatusCode === 0 && String(a.error).startsWith('Timed out'),
      ),
    ).toBe(true);
    const messages = (await call('/v2/workspace/advancedwebhook/messages/get', { endpointId })).body.result
      ?.data as Array<Record<string, unknown>>;
    expect(messages[0]).toMatchObject({ deliveries: [{ endpointId, status: 'failed', attempts: 8 }] });
  });

  it('signs with the old and the new secret after a rotation, each verifying on its own', async () => {
    const hook = await receiver();
    await enable();
    const { id, secret: old } = await createEndpoint({ url: hook.url });
    const rotated = (await call('/v2/workspace/advancedwebhook/endpoints/secret/rotate', { endpointId: id })).body
      .result?.data.secret as string;
    await addActivity(uniqueId('org'));

    const [request] = await hook.waitFor(1);
    expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifyBoth(request, old)).toBeDefined();
    expect(verifyBoth(request, rotated)).toBeDefined();
  });

  it('resends a message and recovers failed ones on request', async () => {
    let failing = true;
    const hook = await receiver(() => (failing ? 400 : 200));
    await enable();
    const { id: endpointId } = await createEndpoint({ url: hook.url });
    const since = Date.now() - 1000;
    await addActivity(uniqueId('org'));
    const [first] = await hook.waitFor(8);
    const messageId = String(first.headers['webhook-id']);
    await waitFor(
      async () =>
        (await call('/v2/workspace/advancedwebhook/messages/get', { endpointId })).body.result?.data[0]?.deliveries[0]
          ?.status === 'failed',
    );

    failing = false;
    const recovered = await call('/v2/workspace/advancedwebhook/endpoints/recover', { endpointId, since });
    expect(recovered.body.result?.data).toEqual({ endpointId, recovered: 1 });
    await hook.waitFor(9);
    const resent = await call('/v2/workspace/advancedwebhook/messages/resend', { messageId, endpointId });
    expect(resent.body.result?.data).toEqual({ messageId, endpointId, status: 'pending' });
    await hook.waitFor(10);
    expect(hook.requests.slice(8).every((r) => r.headers['webhook-id'] === messageId)).toBe(true);
  });

  it('shapes payloads: data protection keeps user ids only, encodeData base64-encodes', async () => {
    const hook = await receiver();
    await enable(tenant, { enableDataProtection: true, encodeData: true });
    await createEndpoint({ url: hook.url });
    await addActivity(uniqueId('org'));

    const [request] = await hook.waitFor(1);
    const body = JSON.parse(request.body) as { encodedData: string };
    const data = JSON.parse(Buffer.from(body.encodedData, 'base64').toString('utf8')) as { actionUser: unknown };
    expect(data.actionUser).toEqual({ userId: 'ann' });
  });

  it('keeps API keys apart: messages and attempts of one key are invisible to another', async () => {
    const hook = await receiver();
    await enable();
    await createEndpoint({ url: hook.url });
    await addActivity(uniqueId('org'));
    const [request] = await hook.waitFor(1);
    const messageId = String(request.headers['webhook-id']);

    for (const other of [await siblingKey(tenant), (await newTenant()).apiKeyHeaders]) {
      await enable(other);
      expect((await call('/v2/workspace/advancedwebhook/messages/get', {}, other)).body.result?.data).toEqual([]);
      const attempts = await call('/v2/workspace/advancedwebhook/attempts/get', { messageId }, other);
      expect(attempts.body.error).toMatchObject({ status: 'NOT_FOUND' });
      const resend = await call(
        '/v2/workspace/advancedwebhook/messages/resend',
        { messageId, endpointId: 'ep_x' },
        other,
      );
      expect(resend.body.error).toMatchObject({ status: 'NOT_FOUND' });
    }
  });

  it('debounces crdt.update_data: fewer messages than changes, the last one carrying the final state', async () => {
    const hook = await receiver();
    await enable();
    await createEndpoint({ url: hook.url, filterTypes: ['crdt.update_data'] });
    const org = uniqueId('org');
    await call('/v2/crdt/add', {
      organizationId: org,
      documentId: 'd',
      editorId: 'e',
      type: 'text',
      data: 'v0',
      userId: 'u',
    });
    for (let v = 1; v <= 10; v += 1) {
      await call('/v2/crdt/update', {
        organizationId: org,
        documentId: 'd',
        editorId: 'e',
        type: 'text',
        data: `v${v}`,
        userId: 'u',
      });
    }

    await waitFor(async () =>
      hook.requests.some((r) => (JSON.parse(r.body) as { data: { data: string } }).data.data === 'v10'),
    );
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const states = hook.requests.map((r) => (JSON.parse(r.body) as { data: { data: string } }).data.data);
    expect(states.length).toBeLessThan(11);
    expect(states[states.length - 1]).toBe('v10');
  });

  it('starts at most rateLimit attempts per second to an endpoint, delaying the rest without dropping any', async () => {
    const hook = await receiver();
    await enable();
    const endpoint = await createEndpoint({ url: hook.url, rateLimit: 2 });
    const org = uniqueId('org');
    await call('/v2/activities/add', {
      organizationId: org,
      activities: Array.from({ length: 6 }, (_, i) => ({
        featureType: 'comment',
        actionType: 'comment.add',
        targetEntityId: `t${i}`,
      })),
    });

    const requests = await hook.waitFor(6);
    expect(new Set(requests.map((r) => r.headers['webhook-id'])).size).toBe(6);
    expect(requests[5].at - requests[0].at).toBeGreaterThanOrEqual(1000);
    // The attempts each second started, as the limiter counted them (arrival times at the receiver would also carry
    // the machine's delays: on a busy one, two seconds' attempts can land in the same second).
    const windows = await queryAll({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: {
        ':pk': key('RATE', segment('webhook-endpoint'), segment(`${tenant.apiKeyId}/${endpoint.id}`)),
      },
      ConsistentRead: true,
    });
    const started = windows.map((window) => Number(window.count));
    expect(started.reduce((sum, count) => sum + count, 0)).toBe(6);
    expect(Math.max(...started)).toBeLessThanOrEqual(2);
  });

  it('filters messages/get by organization, event type, endpoint and time', async () => {
    const hook = await receiver();
    await enable();
    const { id: endpointId } = await createEndpoint({ url: hook.url, filterTypes: ['comment.add'] });
    const a = uniqueId('org');
    const b = uniqueId('org');
    await addActivity(a, 'comment.add');
    await addActivity(b, 'reaction.add');
    await hook.waitFor(1);
    await waitFor(
      async () => (await call('/v2/workspace/advancedwebhook/messages/get', {})).body.result?.data.length === 2,
    );
    const list = async (filter: Record<string, unknown>) =>
      (
        (await call('/v2/workspace/advancedwebhook/messages/get', filter)).body.result?.data as Array<{
          type: string;
          organizationId: string;
        }>
      ).map((m) => `${m.organizationId}:${m.type}`);

    expect(await list({ organizationId: a })).toEqual([`${a}:comment.add`]);
    expect(await list({ eventTypes: ['reaction.add'] })).toEqual([`${b}:reaction.add`]);
    expect(await list({ endpointId })).toEqual([`${a}:comment.add`]);
    expect(await list({ since: Date.now() + 60_000 })).toEqual([]);
    expect(await list({})).toEqual([`${b}:reaction.add`, `${a}:comment.add`]);
  });

  it('writes nothing for an API key without webhooks', async () => {
    await addActivity(uniqueId('org'));
    await call('/v2/crdt/add', {
      organizationId: uniqueId('org'),
      documentId: 'd',
      editorId: 'e',
      type: 'text',
      data: 'x',
      userId: 'u',
    });
    await new Promise((resolve) => setTimeout(resolve, 1000));

    const { Items } = await db.send(
      new ScanCommand({
        TableName: TABLE_NAME,
        FilterExpression: 'begins_with(pk, :mine)',
        ExpressionAttributeValues: { ':mine': `T#${tenant.apiKeyId}` },
      }),
    );
    expect((Items ?? []).filter((item) => String(item.sk).startsWith('WH') || String(item.pk).includes('#WH'))).toEqual(
      [],
    );
  });
});

describe('a delivery worker that dies after recording an outcome', () => {
  it('owes the next attempt on the delivery, and the attempt job handed out again queues it', async () => {
    const { runDelivery } = await import('../../shared/domain/webhooks/delivery');
    const { publishEvent } = await import('../../shared/domain/webhooks/publish');
    const { readWebhookConfig } = await import('../../shared/domain/webhook-config');
    const { decryptSecret } = await import('../../shared/crypto/encryption');
    const { getDelivery } = await import('../../shared/db/webhook-message');
    const { parseJob } = await import('../../shared/domain/delivery/jobs');
    const hook = await receiver(() => 500);
    await enable();
    const { id: endpointId } = await createEndpoint({ url: hook.url });
    const sent: string[] = [];
    const capture = {
      send: async (jobs: ReadonlyArray<{ body: string }>) => void sent.push(...jobs.map((job) => job.body)),
    };
    const dying = { send: async () => Promise.reject(new Error('worker killed')) };
    await publishEvent(
      tenant.apiKeyId,
      {
        id: 'msg_TESTDIESAFTEROUTCOME000001',
        type: 'comment.add',
        timestamp: Date.now(),
        organizationId: 'org',
        data: {},
      },
      capture,
      await readWebhookConfig(tenant.apiKeyId),
    );
    const first = parseJob(sent[0]);
    if (first.kind !== 'deliver') throw new Error('expected a delivery job');

    await expect(runDelivery(first, { queue: dying, decrypt: decryptSecret })).rejects.toThrow('worker killed');
    const owed = await getDelivery(tenant.apiKeyId, first.messageId, endpointId);
    await runDelivery(first, { queue: capture, decrypt: decryptSecret });

    expect(owed).toMatchObject({ attempts: 1, status: 'pending', followUp: true });
    expect(hook.requests).toHaveLength(1);
    expect(parseJob(sent[1])).toMatchObject({ kind: 'deliver', messageId: first.messageId, attempt: 2 });
    expect(await getDelivery(tenant.apiKeyId, first.messageId, endpointId)).not.toHaveProperty('followUp');
  });
});

describe('a resend while an attempt is in flight', () => {
  it('makes another attempt after the one in flight, which does not end the new round when it succeeds', async () => {
    const { runDelivery } = await import('../../shared/domain/webhooks/delivery');
    const { resendMessage } = await import('../../shared/domain/webhooks/messages');
    const { publishEvent } = await import('../../shared/domain/webhooks/publish');
    const { readWebhookConfig } = await import('../../shared/domain/webhook-config');
    const { decryptSecret } = await import('../../shared/crypto/encryption');
    const { getDelivery } = await import('../../shared/db/webhook-message');
    const { parseJob } = await import('../../shared/domain/delivery/jobs');
    let answerFirst: (status: number) => void = () => undefined;
    const firstAnswer = new Promise<number>((resolve) => (answerFirst = resolve));
    const hook = await receiver((n) => (n === 0 ? firstAnswer : 200));
    await enable();
    const { id: endpointId } = await createEndpoint({ url: hook.url });
    const sent: string[] = [];
    const capture = {
      send: async (jobs: ReadonlyArray<{ body: string }>) => void sent.push(...jobs.map((job) => job.body)),
    };
    const deps = { queue: capture, decrypt: decryptSecret };
    const messageId = 'msg_TESTRESENDINFLIGHT000001';
    await publishEvent(
      tenant.apiKeyId,
      { id: messageId, type: 'comment.add', timestamp: Date.now(), organizationId: 'org', data: {} },
      capture,
      await readWebhookConfig(tenant.apiKeyId),
    );
    const first = parseJob(sent[0]);

    // The first attempt reaches the receiver, which holds its answer while the resend is asked for.
    const inFlight = runDelivery(first as Extract<typeof first, { kind: 'deliver' }>, deps);
    await hook.waitFor(1);
    expect(await resendMessage(tenant.apiKeyId, { messageId, endpointId }, capture)).toMatchObject({
      status: 'pending',
    });
    answerFirst(200);
    await inFlight;
    // Every job queued since (the resend's, and whatever the first attempt's outcome owes), run until none is left.
    for (let next = 1; next < sent.length; next += 1) {
      const job = parseJob(sent[next]);
      if (job.kind === 'deliver') await runDelivery(job, deps);
    }

    expect(hook.requests.map((request) => request.headers['webhook-id'])).toEqual([messageId, messageId]);
    expect(await getDelivery(tenant.apiKeyId, messageId, endpointId)).toMatchObject({
      status: 'success',
      attempts: 2,
    });
    const attempts = (await call('/v2/workspace/advancedwebhook/attempts/get', { messageId })).body.result
      ?.data as Array<Record<string, unknown>>;
    expect(attempts.map((a) => [a.attempt, a.status])).toEqual([
      [2, 'success'],
      [1, 'success'],
    ]);
  });
});

describe('publishing a batch of events', () => {
  it('writes one message per event across tenants, and a batch seen again writes none, queueing only deliveries not attempted', async () => {
    const { runDelivery } = await import('../../shared/domain/webhooks/delivery');
    const { publishEvents } = await import('../../shared/domain/webhooks/publish');
    const { readWebhookConfig } = await import('../../shared/domain/webhook-config');
    const { decryptSecret } = await import('../../shared/crypto/encryption');
    const { listAllEndpoints } = await import('../../shared/db/webhook-endpoint');
    const { parseJob } = await import('../../shared/domain/delivery/jobs');
    const hook = await receiver(() => 204);
    const other = await newTenant();
    for (const who of [tenant, other]) {
      await enable(who);
      await createEndpoint({ url: hook.url }, who);
    }
    const publication = async (who: Tenant, n: number) => ({
      apiKeyId: who.apiKeyId,
      event: {
        id: `msg_TESTBATCH${who.apiKeyId.slice(-6).toUpperCase()}${n}`,
        type: 'comment.add',
        timestamp: Date.now(),
        organizationId: 'org',
        data: { n },
      },
      webhookConfig: await readWebhookConfig(who.apiKeyId),
      endpoints: await listAllEndpoints(who.apiKeyId),
    });
    const batch = [await publication(tenant, 1), await publication(tenant, 2), await publication(other, 1)];
    const sent: string[] = [];
    const capture = {
      send: async (jobs: ReadonlyArray<{ body: string }>) => void sent.push(...jobs.map((job) => job.body)),
    };

    await publishEvents(batch, capture);
    const jobs = sent.map(parseJob);
    const first = jobs[0];
    if (first.kind !== 'deliver') throw new Error('expected a delivery job');
    await runDelivery(first, { queue: capture, decrypt: decryptSecret });
    sent.length = 0;
    await publishEvents(batch, capture);

    expect(jobs.map((job) => (job.kind === 'deliver' ? job.messageId : '')).sort()).toEqual(
      batch.map((p) => p.event.id).sort(),
    );
    // Seen again: the delivered message is not queued again, the two not attempted yet are.
    expect(
      sent
        .map(parseJob)
        .map((job) => (job.kind === 'deliver' ? job.messageId : ''))
        .sort(),
    ).toEqual(
      batch
        .map((p) => p.event.id)
        .filter((id) => id !== first.messageId)
        .sort(),
    );
    expect(hook.requests).toHaveLength(1);
    const listed = async (who: Tenant) =>
      ((await call('/v2/workspace/advancedwebhook/messages/get', {}, who)).body.result?.data as Array<{ id: string }>)
        .map((m) => m.id)
        .sort();
    expect(await listed(tenant)).toEqual([batch[0].event.id, batch[1].event.id].sort());
    expect(await listed(other)).toEqual([batch[2].event.id]);
  });
});
