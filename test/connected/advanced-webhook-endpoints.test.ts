/**
 * Advanced webhook endpoints (docs/decisions.md §11 "Endpoints") through the real middleware against DynamoDB
 * Local: every operation's answer, the precondition, input rules, the per-key limit and uid, concurrent updates,
 * secrets and their rotation, iterator paging, tenancy, and the delivery outcome bookkeeping the workers use.
 */
import { recordCommands } from '../../local/grant-check';
import { handler as updateConfig } from '../../functions/workspace/advancedwebhookconfig-update';
import { handler as createHandler } from '../../functions/workspace/advancedwebhook-endpoints-create';
import { handler as deleteHandler } from '../../functions/workspace/advancedwebhook-endpoints-delete';
import { handler as getHandler } from '../../functions/workspace/advancedwebhook-endpoints-get';
import { handler as secretGetHandler } from '../../functions/workspace/advancedwebhook-endpoints-secret-get';
import { handler as rotateHandler } from '../../functions/workspace/advancedwebhook-endpoints-secret-rotate';
import { handler as updateHandler } from '../../functions/workspace/advancedwebhook-endpoints-update';
import { timeOrderedId } from '../../shared/core/ids';
import { decryptSecret } from '../../shared/crypto/encryption';
import {
  DISABLE_AFTER_FAILING_MS,
  getEndpoint,
  listAllEndpoints,
  recordEndpointOutcome,
} from '../../shared/db/webhook-endpoint';
import { WEBHOOKS_NOT_ENABLED } from '../../shared/domain/webhook-config';
import { PREVIOUS_SECRET_LIFETIME_MS, signingSecrets } from '../../shared/domain/webhooks/endpoints';
import { newTenant, siblingKey, type Tenant } from '../support/fixtures';
import { endpoint, type Credentials } from '../support/invoke';

const BASE = '/v2/workspace/advancedwebhook/endpoints';
const enableConfig = endpoint(updateConfig, '/v2/workspace/advancedwebhookconfig/update');
const create = endpoint(createHandler, `${BASE}/create`);
const list = endpoint(getHandler, `${BASE}/get`);
const update = endpoint(updateHandler, `${BASE}/update`);
const remove = endpoint(deleteHandler, `${BASE}/delete`);
const getSecret = endpoint(secretGetHandler, `${BASE}/secret/get`);
const rotate = endpoint(rotateHandler, `${BASE}/secret/rotate`);

const WRITES = new Set([
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:TransactWriteItems',
]);
const SECRET_FORM = /^whsec_[A-Za-z0-9+/]{32}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const enable = (who: Credentials) => enableConfig(who, { isEnabled: true });

/** Calls `fn` and lists the writes that succeeded while it ran. */
async function writesDuring<T>(fn: () => Promise<T>): Promise<{ result: T; writes: string[] }> {
  const log: string[] = [];
  const result = await recordCommands(log, fn);
  return { result, writes: log.filter((command) => WRITES.has(command)) };
}

async function createOk(who: Credentials, data: Record<string, unknown>): Promise<Record<string, any>> {
  const response = await create(who, data);
  if (response.statusCode !== 200)
    throw new Error(`create answered ${response.statusCode}: ${JSON.stringify(response.body)}`);
  return response.body.result?.data;
}

const url = (n: number | string) => `https://hooks.example.com/receiver/${n}`;

let tenant: Tenant;
beforeEach(async () => {
  tenant = await newTenant();
  await enable(tenant);
});

describe('create', () => {
  it('answers the endpoint with every field: omitted optional ones null, disabled false, metadata null, ISO timestamps', async () => {
    const response = await create(tenant, { url: url(1) });

    expect(response.statusCode).toBe(200);
    expect(response.body.result?.message).toBe('Advanced webhook endpoint created successfully.');
    const data = response.body.result?.data;
    expect(data).toEqual({
      id: expect.stringMatching(/^ep_[0-9A-Z]{26}$/),
      url: url(1),
      description: null,
      filterTypes: null,
      channels: null,
      disabled: false,
      rateLimit: null,
      uid: null,
      metadata: null,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    expect(data.updatedAt).toBe(data.createdAt);
  });

  it('stores every field sent and answers them as sent', async () => {
    const fields = {
      url: 'http://localhost:8080/hook?x=1',
      description: 'Production receiver',
      filterTypes: ['comment.add', 'message.attempt.exhausted'],
      channels: ['org-1', 'org#2'],
      disabled: true,
      rateLimit: 10,
      uid: 'receiver-1.prod_A',
      // JSON.parse makes `__proto__` an own key, as a request body does.
      metadata: JSON.parse('{"team":"payments","__proto__":"kept","constructor":"c"}') as Record<string, string>,
    };

    const data = await createOk(tenant, fields);
    const stored = await getEndpoint(tenant.apiKeyId, data.id);

    expect(data).toMatchObject({ ...fields, metadata: expect.anything() });
    expect(Object.entries(data.metadata)).toEqual([
      ['team', 'payments'],
      ['__proto__', 'kept'],
      ['constructor', 'c'],
    ]);
    expect(stored).toMatchObject({
      id: data.id,
      url: fields.url,
      uid: fields.uid,
      disabled: true,
      rateLimit: 10,
      version: 1,
    });
  });

  it('ignores a secret in the request: neither stored nor echoed, the server makes its own', async () => {
    const response = await create(tenant, {
      url: url(1),
      secret: 'whsec_c2VjcmV0LWZyb20tdGhlLWNsaWVudC0xMjM0',
      unknownField: 'x',
    });

    const data = response.body.result?.data;
    const secret = (await getSecret(tenant, { endpointId: data.id })).body.result?.data.secret;
    expect(response.statusCode).toBe(200);
    expect(Object.keys(data)).not.toContain('secret');
    expect(Object.keys(data)).not.toContain('unknownField');
    expect(JSON.stringify(response.body)).not.toContain('whsec_');
    expect(secret).toMatch(SECRET_FORM);
    expect(secret).not.toBe('whsec_c2VjcmV0LWZyb20tdGhlLWNsaWVudC0xMjM0');
  });

  it('refuses a uid another endpoint of the key holds with ALREADY_EXISTS, writing nothing; after a delete the uid is free', async () => {
    const first = await createOk(tenant, { url: url(1), uid: 'main' });

    const { result: again, writes } = await writesDuring(() => create(tenant, { url: url(2), uid: 'main' }));
    await remove(tenant, { endpointId: first.id });
    const reused = await create(tenant, { url: url(3), uid: 'main' });

    expect(again.statusCode).toBe(409);
    expect(again.body.error).toMatchObject({
      status: 'ALREADY_EXISTS',
      message: 'An endpoint with this uid already exists.',
    });
    expect(writes).toEqual([]);
    expect(reused.statusCode).toBe(200);
    expect((await listAllEndpoints(tenant.apiKeyId)).map((stored) => stored.url)).toEqual([url(3)]);
  });

  it('allows 50 endpoints per API key: the 51st is RESOURCE_EXHAUSTED without Retry-After (waiting does not lift it), and after a delete one more fits', async () => {
    const created: string[] = [];
    for (let i = 0; i < 50; i += 1) created.push((await createOk(tenant, { url: url(i) })).id);

    const refused = await create(tenant, { url: url(50) });
    await remove(tenant, { endpointId: created[7] });
    const afterDelete = await create(tenant, { url: url(51) });
    const refusedAgain = await create(tenant, { url: url(52) });

    expect(refused.statusCode).toBe(429);
    expect(refused.body.error?.status).toBe('RESOURCE_EXHAUSTED');
    expect(refused.headers).not.toHaveProperty('Retry-After');
    expect(afterDelete.statusCode).toBe(200);
    expect(refusedAgain.statusCode).toBe(429);
    expect(await listAllEndpoints(tenant.apiKeyId)).toHaveLength(50);
  });

  it('keeps the limit under 60 concurrent creates: never more than 50 endpoints, and the count matches what exists', async () => {
    const replies = await Promise.all(Array.from({ length: 60 }, (_, i) => create(tenant, { url: url(i) })));

    const created = replies.filter((reply) => reply.statusCode === 200).length;
    const stored = await listAllEndpoints(tenant.apiKeyId);
    expect(replies.every((reply) => [200, 409, 429].includes(reply.statusCode))).toBe(true);
    expect(stored).toHaveLength(created);
    expect(created).toBeLessThanOrEqual(50);
    // The count item agrees with the endpoints: exactly 50 - created more fit.
    const more = await Promise.all(
      Array.from({ length: 50 - created }, (_, i) => create(tenant, { url: url(100 + i) })),
    );
    expect(more.map((reply) => reply.statusCode)).toEqual(more.map(() => 200));
    expect((await create(tenant, { url: url(200) })).statusCode).toBe(429);
  });
});

describe('bad input', () => {
  const long = (n: number) => 'a'.repeat(n);
  const createCases: Array<[string, Record<string, unknown>, string]> = [
    ['no url', {}, 'data.url'],
    ['a url that is not a URL', { url: 'not a url' }, 'data.url'],
    ['an ftp url', { url: 'ftp://example.com/x' }, 'data.url'],
    ['a url without its //', { url: 'https:example.com/x' }, 'data.url'],
    ['a url with a newline inside', { url: 'https://exa\nmple.com/x' }, 'data.url'],
    ['a url with surrounding spaces', { url: ' https://example.com/x ' }, 'data.url'],
    ['a url over 2000 characters', { url: `https://example.com/${long(1990)}` }, 'data.url'],
    ['a numeric url', { url: 5 }, 'data.url'],
    ['an empty filterTypes', { url: url(1), filterTypes: [] }, 'data.filterTypes'],
    [
      '101 filterTypes',
      { url: url(1), filterTypes: Array.from({ length: 101 }, (_, i) => `group.action${i}`) },
      'data.filterTypes',
    ],
    ['a filterType without an action', { url: url(1), filterTypes: ['comment'] }, 'data.filterTypes.0'],
    ['a filterType over 100 characters', { url: url(1), filterTypes: [`comment.${long(100)}`] }, 'data.filterTypes.0'],
    ['a repeated filterType', { url: url(1), filterTypes: ['comment.add', 'comment.add'] }, 'data.filterTypes'],
    ['filterTypes as a string', { url: url(1), filterTypes: 'comment.add' }, 'data.filterTypes'],
    ['an empty channels', { url: url(1), channels: [] }, 'data.channels'],
    ['an empty channel', { url: url(1), channels: [''] }, 'data.channels.0'],
    ['101 channels', { url: url(1), channels: Array.from({ length: 101 }, (_, i) => `org-${i}`) }, 'data.channels'],
    ['a string disabled', { url: url(1), disabled: 'yes' }, 'data.disabled'],
    ['rateLimit 0', { url: url(1), rateLimit: 0 }, 'data.rateLimit'],
    ['a fractional rateLimit', { url: url(1), rateLimit: 1.5 }, 'data.rateLimit'],
    ['a string rateLimit', { url: url(1), rateLimit: '5' }, 'data.rateLimit'],
    ['an empty uid', { url: url(1), uid: '' }, 'data.uid'],
    ['a uid with a space', { url: url(1), uid: 'has space' }, 'data.uid'],
    ['a uid over 256 characters', { url: url(1), uid: long(257) }, 'data.uid'],
    ['a metadata value that is not a string', { url: url(1), metadata: { a: 1 } }, 'data.metadata.a'],
    [
      'metadata with 51 keys',
      { url: url(1), metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) },
      'data.metadata',
    ],
    ['metadata that is a string', { url: url(1), metadata: 'x' }, 'data.metadata'],
    ['a description over 1000 characters', { url: url(1), description: long(1001) }, 'data.description'],
  ];

  it.each(createCases)(
    'create refuses %s with INVALID_ARGUMENT naming the field, writing nothing',
    async (_label, data, path) => {
      const { result: response, writes } = await writesDuring(() => create(tenant, data));

      expect(response.statusCode).toBe(400);
      expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
      expect(response.body.error?.details.issues.map((issue: { path: string }) => issue.path)).toContain(path);
      expect(writes).toEqual([]);
    },
  );

  it.each([
    ['limit 0', { limit: 0 }, 'data.limit'],
    ['limit 251', { limit: 251 }, 'data.limit'],
    ['a fractional limit', { limit: 2.5 }, 'data.limit'],
    ['an iterator that is no endpoint id', { iterator: 'abc' }, 'data.iterator'],
    ['a bare "-" iterator', { iterator: '-' }, 'data.iterator'],
    ['a lower-case id as iterator', { iterator: `ep_${'a'.repeat(26)}` }, 'data.iterator'],
    ['a numeric iterator', { iterator: 5 }, 'data.iterator'],
  ])('get refuses %s with INVALID_ARGUMENT', async (_label, data, path) => {
    const response = await list(tenant, data);

    expect(response.statusCode).toBe(400);
    expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
    expect(response.body.error?.details.issues[0].path).toBe(path);
  });

  it("update refuses a request with nothing to change, with the contract's message", async () => {
    const { id } = await createOk(tenant, { url: url(1) });

    const { result: response, writes } = await writesDuring(() =>
      update(tenant, { endpointId: id, secret: 'whsec_x' }),
    );

    expect(response.statusCode).toBe(400);
    expect(response.body.error).toMatchObject({
      status: 'INVALID_ARGUMENT',
      message: 'At least one endpoint field besides endpointId must be provided.',
    });
    expect(writes).toEqual([]);
  });

  it.each([
    ['a null url', { url: null }, 'data.url'],
    ['a null disabled', { disabled: null }, 'data.disabled'],
    ['an empty filterTypes', { filterTypes: [] }, 'data.filterTypes'],
    ['rateLimit 0', { rateLimit: 0 }, 'data.rateLimit'],
    ['an invalid url', { url: 'javascript:alert(1)' }, 'data.url'],
  ])('update refuses %s with INVALID_ARGUMENT, writing nothing', async (_label, fields, path) => {
    const { id } = await createOk(tenant, { url: url(1) });

    const { result: response, writes } = await writesDuring(() => update(tenant, { endpointId: id, ...fields }));

    expect(response.statusCode).toBe(400);
    expect(response.body.error?.details.issues[0].path).toBe(path);
    expect(writes).toEqual([]);
    expect((await getEndpoint(tenant.apiKeyId, id))?.version).toBe(1);
  });

  const byId = [
    ['update', (data: Record<string, unknown>) => update(tenant, { ...data, description: 'x' })],
    ['delete', (data: Record<string, unknown>) => remove(tenant, data)],
    ['secret/get', (data: Record<string, unknown>) => getSecret(tenant, data)],
    ['secret/rotate', (data: Record<string, unknown>) => rotate(tenant, data)],
  ] as const;

  it.each(byId)('%s refuses a missing, empty or non-string endpointId with INVALID_ARGUMENT', async (_op, call) => {
    const answers = await Promise.all([call({}), call({ endpointId: '' }), call({ endpointId: 42 })]);

    expect(answers.map((answer) => [answer.statusCode, answer.body.error?.details.issues[0].path])).toEqual([
      [400, 'data.endpointId'],
      [400, 'data.endpointId'],
      [400, 'data.endpointId'],
    ]);
  });

  it.each(byId)(
    '%s answers NOT_FOUND "Endpoint not found." for a malformed or unknown endpoint id, writing nothing',
    async (_op, call) => {
      await createOk(tenant, { url: url(1) });

      const { result: answers, writes } = await writesDuring(() =>
        Promise.all([
          call({ endpointId: 'nope' }),
          call({ endpointId: timeOrderedId('ep_') }),
          call({ endpointId: `ep_${'0'.repeat(25)}` }),
        ]),
      );

      for (const answer of answers) {
        expect(answer.statusCode).toBe(404);
        expect(answer.body.error).toMatchObject({ status: 'NOT_FOUND', message: 'Endpoint not found.' });
      }
      expect(writes).toEqual([]);
    },
  );
});

describe('not enabled', () => {
  const everyOperation = (endpointId: string) =>
    [
      ['create', (who: Credentials) => create(who, { url: url(1) })],
      ['get', (who: Credentials) => list(who, {})],
      ['update', (who: Credentials) => update(who, { endpointId, description: 'x' })],
      ['delete', (who: Credentials) => remove(who, { endpointId })],
      ['secret/get', (who: Credentials) => getSecret(who, { endpointId })],
      ['secret/rotate', (who: Credentials) => rotate(who, { endpointId })],
    ] as const;

  it('refuses every operation with FAILED_PRECONDITION while advanced webhooks were never configured, writing nothing', async () => {
    const fresh = await newTenant();

    for (const [op, call] of everyOperation(timeOrderedId('ep_'))) {
      const { result: response, writes } = await writesDuring(() => call(fresh));
      expect([op, response.statusCode, response.body.error]).toEqual([
        op,
        400,
        { status: 'FAILED_PRECONDITION', message: WEBHOOKS_NOT_ENABLED },
      ]);
      expect(writes).toEqual([]);
    }
  });

  it('refuses every operation once disabled again, and keeps the endpoints for when it is enabled', async () => {
    const { id } = await createOk(tenant, { url: url(1) });
    await enableConfig(tenant, { isEnabled: false });

    for (const [op, call] of everyOperation(id)) {
      const response = await call(tenant);
      expect([op, response.statusCode, response.body.error?.status]).toEqual([op, 400, 'FAILED_PRECONDITION']);
    }
    await enable(tenant);
    expect((await list(tenant, {})).body.result?.data.endpoints.map((item: { id: string }) => item.id)).toEqual([id]);
  });
});

describe('get', () => {
  it('answers an empty list with null iterators, done', async () => {
    const response = await list(tenant, {});

    expect(response.body.result).toEqual({
      status: 'success',
      message: 'Advanced webhook endpoints retrieved successfully.',
      data: { endpoints: [], iterator: null, prevIterator: null, done: true },
    });
  });

  it('pages 7 endpoints 3 at a time forwards with iterator, then backwards with prevIterator, always in creation order', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 7; i += 1) ids.push((await createOk(tenant, { url: url(i) })).id);
    const page = async (data: Record<string, unknown>) => (await list(tenant, { limit: 3, ...data })).body.result?.data;
    const idsOf = (data: { endpoints: Array<{ id: string }> }) => data.endpoints.map((item) => item.id);

    const first = await page({});
    const second = await page({ iterator: first.iterator });
    const third = await page({ iterator: second.iterator });
    const past = await page({ iterator: third.iterator });
    const backTwo = await page({ iterator: third.prevIterator });
    const backOne = await page({ iterator: backTwo.prevIterator });
    const beforeFirst = await page({ iterator: backOne.prevIterator });

    expect([idsOf(first), first.iterator, first.prevIterator, first.done]).toEqual([
      ids.slice(0, 3),
      ids[2],
      `-${ids[0]}`,
      false,
    ]);
    expect([idsOf(second), second.iterator, second.prevIterator, second.done]).toEqual([
      ids.slice(3, 6),
      ids[5],
      `-${ids[3]}`,
      false,
    ]);
    expect([idsOf(third), third.iterator, third.prevIterator, third.done]).toEqual([
      ids.slice(6),
      ids[6],
      `-${ids[6]}`,
      true,
    ]);
    expect(past).toEqual({ endpoints: [], iterator: null, prevIterator: null, done: true });
    expect([idsOf(backTwo), backTwo.done]).toEqual([ids.slice(3, 6), false]);
    expect([idsOf(backOne), backOne.iterator, backOne.prevIterator, backOne.done]).toEqual([
      ids.slice(0, 3),
      ids[2],
      `-${ids[0]}`,
      true,
    ]);
    expect(beforeFirst).toEqual({ endpoints: [], iterator: null, prevIterator: null, done: true });
  });

  it('defaults to 50 per page, and keeps paging from an iterator whose endpoint was deleted', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i += 1) ids.push((await createOk(tenant, { url: url(i) })).id);

    const all = (await list(tenant, {})).body.result?.data;
    await remove(tenant, { endpointId: ids[1] });
    const after = (await list(tenant, { iterator: ids[1], limit: 1 })).body.result?.data;

    expect(all.endpoints).toHaveLength(4);
    expect(all.done).toBe(true);
    expect(after.endpoints.map((item: { id: string }) => item.id)).toEqual([ids[2]]);
    expect(after.done).toBe(false);
  });

  it('never shows a secret', async () => {
    await createOk(tenant, { url: url(1) });

    const response = await list(tenant, {});

    expect(JSON.stringify(response.body)).not.toMatch(/whsec_|secret/i);
  });
});

describe('update', () => {
  it('changes the fields sent, keeps the others, bumps updatedAt, and never shows the secret', async () => {
    const created = await createOk(tenant, {
      url: url(1),
      description: 'old',
      filterTypes: ['comment.add'],
      uid: 'u1',
    });
    await new Promise((resolve) => setTimeout(resolve, 5));

    const response = await update(tenant, {
      endpointId: created.id,
      url: url(2),
      rateLimit: 5,
      metadata: { env: 'prod' },
    });

    expect(response.statusCode).toBe(200);
    expect(response.body.result?.message).toBe('Advanced webhook endpoint updated successfully.');
    expect(response.body.result?.data).toEqual({
      ...created,
      url: url(2),
      rateLimit: 5,
      metadata: { env: 'prod' },
      updatedAt: expect.stringMatching(ISO),
    });
    expect(response.body.result?.data.updatedAt > created.updatedAt).toBe(true);
    expect(JSON.stringify(response.body)).not.toMatch(/whsec_|secret/i);
  });

  it('clears description, filterTypes, channels, rateLimit and metadata with null', async () => {
    const created = await createOk(tenant, {
      url: url(1),
      description: 'd',
      filterTypes: ['comment.add'],
      channels: ['org-1'],
      rateLimit: 3,
      metadata: { a: 'b' },
    });

    const response = await update(tenant, {
      endpointId: created.id,
      description: null,
      filterTypes: null,
      channels: null,
      rateLimit: null,
      metadata: null,
    });

    expect(response.body.result?.data).toMatchObject({
      description: null,
      filterTypes: null,
      channels: null,
      rateLimit: null,
      metadata: null,
      url: url(1),
    });
    expect(await getEndpoint(tenant.apiKeyId, created.id)).toMatchObject({
      description: null,
      filterTypes: null,
      channels: null,
      rateLimit: null,
      metadata: null,
    });
  });

  it('applies concurrent updates of different fields: none is lost', async () => {
    const { id } = await createOk(tenant, { url: url(1) });
    const changes = [
      { url: url(2) },
      { description: 'concurrent' },
      { filterTypes: ['crdt.update_data'] },
      { channels: ['org-9'] },
      { rateLimit: 7 },
      { metadata: { k: 'v' } },
      { disabled: true },
    ];

    const replies = await Promise.all(changes.map((change) => update(tenant, { endpointId: id, ...change })));

    expect(replies.map((reply) => reply.statusCode)).toEqual(changes.map(() => 200));
    expect(await getEndpoint(tenant.apiKeyId, id)).toMatchObject({
      ...Object.assign({}, ...changes),
      version: 1 + changes.length,
    });
  });

  it('disabled: false ends the run of failures, so the endpoint is not disabled again at once', async () => {
    const { id } = await createOk(tenant, { url: url(1) });
    const start = Date.now();
    await recordEndpointOutcome(tenant.apiKeyId, id, 'failure', start);
    await recordEndpointOutcome(tenant.apiKeyId, id, 'failure', start + DISABLE_AFTER_FAILING_MS);

    const reenabled = await update(tenant, { endpointId: id, disabled: false });
    await recordEndpointOutcome(tenant.apiKeyId, id, 'failure', start + DISABLE_AFTER_FAILING_MS + 1);

    expect(reenabled.body.result?.data.disabled).toBe(false);
    expect(await getEndpoint(tenant.apiKeyId, id)).toMatchObject({
      disabled: false,
      failingSince: start + DISABLE_AFTER_FAILING_MS + 1,
    });
  });
});

describe('delete', () => {
  it('answers {endpointId, deleted: true} and the endpoint is gone from every operation', async () => {
    const { id } = await createOk(tenant, { url: url(1) });

    const response = await remove(tenant, { endpointId: id });
    const again = await remove(tenant, { endpointId: id });

    expect(response.body.result).toEqual({
      status: 'success',
      message: 'Advanced webhook endpoint deleted successfully.',
      data: { endpointId: id, deleted: true },
    });
    expect(again.statusCode).toBe(404);
    expect((await getSecret(tenant, { endpointId: id })).statusCode).toBe(404);
    expect((await list(tenant, {})).body.result?.data.endpoints).toEqual([]);
    expect(await getEndpoint(tenant.apiKeyId, id)).toBeUndefined();
  });

  it('lets exactly one of two concurrent deletes succeed, counting the endpoint out once', async () => {
    for (let i = 0; i < 49; i += 1) await createOk(tenant, { url: url(i) });
    const { id } = await createOk(tenant, { url: url(49) });

    const replies = await Promise.all([remove(tenant, { endpointId: id }), remove(tenant, { endpointId: id })]);

    expect(replies.map((reply) => reply.statusCode).sort()).toEqual([200, 404]);
    expect((await create(tenant, { url: url(50) })).statusCode).toBe(200);
    expect((await create(tenant, { url: url(51) })).statusCode).toBe(429);
  });
});

describe('secrets', () => {
  it('secret/get answers whsec_ and the base64 of 24 bytes, the same on every read', async () => {
    const { id } = await createOk(tenant, { url: url(1) });

    const first = await getSecret(tenant, { endpointId: id });
    const second = await getSecret(tenant, { endpointId: id });

    expect(first.body.result?.message).toBe('Advanced webhook endpoint secret retrieved successfully.');
    const { endpointId, secret } = first.body.result?.data;
    expect(endpointId).toBe(id);
    expect(secret).toMatch(SECRET_FORM);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(24);
    expect(second.body.result?.data.secret).toBe(secret);
  });

  it('stores the secret only encrypted, bound to its tenant and endpoint', async () => {
    const { id } = await createOk(tenant, { url: url(1) });
    const other = await createOk(tenant, { url: url(2) });
    const secret = (await getSecret(tenant, { endpointId: id })).body.result?.data.secret;

    const stored = await getEndpoint(tenant.apiKeyId, id);

    expect(JSON.stringify(stored)).not.toContain(secret);
    await expect(
      signingSecrets({ ...stored!, id: other.id }, tenant.apiKeyId, decryptSecret, Date.now()),
    ).rejects.toThrow();
  });

  it('rotate answers a new secret; the replaced one keeps signing for 24 hours, then only the new one does', async () => {
    const { id } = await createOk(tenant, { url: url(1) });
    const old = (await getSecret(tenant, { endpointId: id })).body.result?.data.secret;
    const before = Date.now();

    const rotated = await rotate(tenant, { endpointId: id });
    const read = (await getSecret(tenant, { endpointId: id })).body.result?.data.secret;
    const stored = (await getEndpoint(tenant.apiKeyId, id))!;

    const fresh = rotated.body.result?.data.secret;
    expect(rotated.body.result?.message).toBe('Advanced webhook endpoint secret rotated successfully.');
    expect(rotated.body.result?.data.endpointId).toBe(id);
    expect(fresh).toMatch(SECRET_FORM);
    expect(fresh).not.toBe(old);
    expect(read).toBe(fresh);
    expect(stored.previousSecret?.expiresAt).toBeGreaterThanOrEqual(before + PREVIOUS_SECRET_LIFETIME_MS);
    expect(await signingSecrets(stored, tenant.apiKeyId, decryptSecret, Date.now())).toEqual([fresh, old]);
    expect(await signingSecrets(stored, tenant.apiKeyId, decryptSecret, stored.previousSecret!.expiresAt - 1)).toEqual([
      fresh,
      old,
    ]);
    expect(await signingSecrets(stored, tenant.apiKeyId, decryptSecret, stored.previousSecret!.expiresAt)).toEqual([
      fresh,
    ]);
  });

  it('a second rotation within 24 hours keeps only the secret it replaced as the previous one', async () => {
    const { id } = await createOk(tenant, { url: url(1) });

    const first = (await rotate(tenant, { endpointId: id })).body.result?.data.secret;
    const second = (await rotate(tenant, { endpointId: id })).body.result?.data.secret;

    const stored = (await getEndpoint(tenant.apiKeyId, id))!;
    expect(await signingSecrets(stored, tenant.apiKeyId, decryptSecret, Date.now())).toEqual([second, first]);
  });

  it('concurrent rotations each answer a secret, and the last applied keeps the one before it', async () => {
    const { id } = await createOk(tenant, { url: url(1) });

    const replies = await Promise.all(Array.from({ length: 5 }, () => rotate(tenant, { endpointId: id })));

    const answered = replies.map((reply) => reply.body.result?.data.secret as string);
    const [current, previous] = await signingSecrets(
      (await getEndpoint(tenant.apiKeyId, id))!,
      tenant.apiKeyId,
      decryptSecret,
      Date.now(),
    );
    expect(replies.map((reply) => reply.statusCode)).toEqual(replies.map(() => 200));
    expect(new Set(answered).size).toBe(5);
    expect(answered).toContain(current);
    expect(answered).toContain(previous);
  });

  it('signingSecrets is only the current secret when never rotated', async () => {
    const { id } = await createOk(tenant, { url: url(1) });
    const secret = (await getSecret(tenant, { endpointId: id })).body.result?.data.secret;

    expect(
      await signingSecrets((await getEndpoint(tenant.apiKeyId, id))!, tenant.apiKeyId, decryptSecret, Date.now()),
    ).toEqual([secret]);
  });
});

describe('tenancy', () => {
  it('another key of the workspace, and another workspace, neither see nor reach the endpoints: NOT_FOUND everywhere', async () => {
    const { id } = await createOk(tenant, { url: url(1), uid: 'shared-uid' });
    const sibling = await siblingKey(tenant);
    const other = await newTenant();
    await enable(sibling);
    await enable(other);

    for (const who of [sibling, other.apiKeyHeaders]) {
      const answers = await Promise.all([
        update(who, { endpointId: id, description: 'taken over' }),
        remove(who, { endpointId: id }),
        getSecret(who, { endpointId: id }),
        rotate(who, { endpointId: id }),
      ]);
      expect(answers.map((answer) => [answer.statusCode, answer.body.error?.message])).toEqual(
        answers.map(() => [404, 'Endpoint not found.']),
      );
      expect((await list(who, {})).body.result?.data.endpoints).toEqual([]);
      // A uid is unique per API key only.
      expect((await create(who, { url: url(2), uid: 'shared-uid' })).statusCode).toBe(200);
    }
    expect(await getEndpoint(tenant.apiKeyId, id)).toMatchObject({ description: null, version: 1 });
    expect((await list(tenant, {})).body.result?.data.endpoints.map((item: { id: string }) => item.id)).toEqual([id]);
  });
});

describe('recordEndpointOutcome', () => {
  it('a failure starts a run once; later failures keep its start; a success ends it', async () => {
    const { id } = await createOk(tenant, { url: url(1) });
    const start = Date.now();

    await recordEndpointOutcome(tenant.apiKeyId, id, 'failure', start);
    await recordEndpointOutcome(tenant.apiKeyId, id, 'failure', start + 60_000);
    const failing = await getEndpoint(tenant.apiKeyId, id);
    await recordEndpointOutcome(tenant.apiKeyId, id, 'success', start + 120_000);
    const recovered = await getEndpoint(tenant.apiKeyId, id);

    expect(failing).toMatchObject({ failingSince: start, disabled: false });
    expect(recovered?.failingSince).toBeUndefined();
    expect(recovered?.disabled).toBe(false);
  });

  it('a failure when the run is 5 days old disables the endpoint; one just short of it does not', async () => {
    const { id } = await createOk(tenant, { url: url(1) });
    const start = Date.now();
    await recordEndpointOutcome(tenant.apiKeyId, id, 'failure', start);

    await recordEndpointOutcome(tenant.apiKeyId, id, 'failure', start + DISABLE_AFTER_FAILING_MS - 1);
    const shortOf = await getEndpoint(tenant.apiKeyId, id);
    await recordEndpointOutcome(tenant.apiKeyId, id, 'failure', start + DISABLE_AFTER_FAILING_MS);
    const disabled = await getEndpoint(tenant.apiKeyId, id);

    expect(shortOf?.disabled).toBe(false);
    expect(disabled).toMatchObject({ disabled: true, failingSince: start, version: 2 });
    expect((await list(tenant, {})).body.result?.data.endpoints[0].disabled).toBe(true);
  });

  it('does not recreate an endpoint deleted meanwhile', async () => {
    const { id } = await createOk(tenant, { url: url(1) });
    await remove(tenant, { endpointId: id });

    await recordEndpointOutcome(tenant.apiKeyId, id, 'failure', Date.now());
    await recordEndpointOutcome(tenant.apiKeyId, id, 'success', Date.now());

    expect(await getEndpoint(tenant.apiKeyId, id)).toBeUndefined();
  });
});
