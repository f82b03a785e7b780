/**
 * Decisions §1 "Well-formed input": depth, UTF-8 and well-formed strings are checked once, before authentication,
 * on every route; free-form objects take any key name and round-trip exactly; a request that fails leaves nothing
 * behind.
 */
import { takeViolations } from '../../local/grant-check';
import { handler as addNotification } from '../../functions/notifications/add';
import { TABLE_WRITE_ACTIONS, type Grants } from '../../shared/grants';
import { routes } from '../../shared/routes';
import { newTenant, type Tenant } from '../support/fixtures';
import { invoke, invokeRoute, routeCaller } from '../support/invoke';
import { uniqueId } from '../support/ids';

let tenant: Tenant;
const call = routeCaller(() => tenant);
const feedOf = async (organizationId: string, userId: string) =>
  (await call('/v2/notifications/get', { organizationId, userId })).body.result?.data;

/** `levels` objects nested inside one another around 'bottom'. */
function nested(levels: number): unknown {
  let deep: unknown = 'bottom';
  for (let i = 0; i < levels; i += 1) deep = { level: deep };
  return deep;
}

/** Every key name a naive object copy or the DynamoDB marshaller gets wrong. */
const AWKWARD_KEYS =
  '{"__proto__":{"polluted":true},"constructor":"c","prototype":{"p":1},"hasOwnProperty":0,"a#b":"x"}';

beforeAll(async () => {
  tenant = await newTenant();
});

describe('well-formed input', () => {
  const deepBodies: Array<[string, string]> = [
    ['5,000 levels of [', `{"data":${'['.repeat(5000)}${']'.repeat(5000)}}`],
    ['5,000 levels of {"a":', `{"data":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`],
  ];
  const cases = routes.flatMap((route) => deepBodies.map(([shape, body]) => [route.path, shape, body] as const));

  it.each(cases)('%s answers %s with INVALID_ARGUMENT before authentication, never a 500', async (path, _, rawBody) => {
    const response = await invokeRoute(path, undefined, { rawBody });

    expect(response.statusCode).toBe(400);
    expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
  });

  it('names the path where the body nests past 32 levels', async () => {
    // {data} is level 1 and data level 2: 31 more objects reach level 33.
    const response = await call('/v2/notifications/add', { organizationId: 'o', documentId: 'd', deep: nested(31) });

    expect(response.body.error?.details?.issues).toEqual([
      {
        path: `data.deep${'.level'.repeat(30)}`,
        message: 'JSON may nest at most 32 levels (the {"data": ...} wrapper included).',
      },
    ]);
  });

  it('refuses a lone surrogate in a value or a key name, naming where', async () => {
    const inValue = await invokeRoute('/v2/organizations/documents/add', undefined, {
      headers: tenant.apiKeyHeaders,
      rawBody: '{"data":{"organizationId":"o","documents":[{"documentId":"d\\ud800"}]}}',
    });
    const inKey = await invokeRoute('/v2/organizations/documents/add', undefined, {
      headers: tenant.apiKeyHeaders,
      rawBody: '{"data":{"organizationId":"o","documents":[{"documentId":"d","metadata":{"k\\udc00":"v"}}]}}',
    });

    expect(inValue.statusCode).toBe(400);
    expect(inValue.body.error?.details?.issues).toEqual([
      { path: 'data.documents.0.documentId', message: 'Must be well-formed Unicode (no lone surrogates).' },
    ]);
    expect(inKey.body.error?.details?.issues).toEqual([
      {
        path: 'data.documents.0.metadata.k\udc00',
        message: 'Key names must be well-formed Unicode (no lone surrogates).',
      },
    ]);
  });

  it('refuses bytes that are not UTF-8 instead of replacing them', async () => {
    const rawBody = Buffer.concat([
      Buffer.from('{"data":{"organizationId":"o'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}}'),
    ]);

    const response = await invokeRoute('/v2/organizations/documents/get', undefined, {
      headers: tenant.apiKeyHeaders,
      rawBody,
    });

    expect(response.statusCode).toBe(400);
    expect(response.body.error?.message).toBe('Request body is not valid UTF-8.');
  });

  it('never lets two long ids that differ by a lone surrogate meet on one key', async () => {
    const organizationId = uniqueId('org');
    const long = 'x'.repeat(130);

    const lone = await invokeRoute('/v2/organizations/documents/add', undefined, {
      headers: tenant.apiKeyHeaders,
      rawBody: JSON.stringify({
        data: { organizationId, createOrganization: true, documents: [{ documentId: `${long}\\ud800` }] },
      }).replace('\\\\ud800', '\\ud800'),
    });
    const replacement = await call('/v2/organizations/documents/add', {
      organizationId,
      createOrganization: true,
      documents: [{ documentId: `${long}\ufffd`, documentName: 'second' }],
    });

    expect(lone.statusCode).toBe(400);
    expect(replacement.statusCode).toBe(200);
    expect((await call('/v2/organizations/documents/get', { organizationId })).body.result?.data).toEqual([
      expect.objectContaining({ documentId: `${long}\ufffd`, documentName: 'second' }),
    ]);
  });
});

describe('free-form objects', () => {
  it('round-trip any key name and 30 levels in notification source and template data', async () => {
    const organizationId = uniqueId('org');
    const awkward = JSON.parse(AWKWARD_KEYS) as Record<string, unknown>;
    const sourceData = { ...awkward, deep: nested(26) };
    const rawBody = JSON.stringify({
      data: {
        organizationId,
        documentId: 'doc',
        createOrganization: true,
        createDocument: true,
        notificationId: 'n',
        displayHeadlineMessageTemplate: 'x',
        actionUser: { userId: 'actor' },
        notifyUsers: [{ userId: 'u' }],
      },
    }).replace(
      '"notificationId":"n"',
      `"notificationId":"n","notificationSourceData":${JSON.stringify(sourceData)},"displayHeadlineMessageTemplateData":${AWKWARD_KEYS}`,
    );

    const added = await invokeRoute('/v2/notifications/add', undefined, { headers: tenant.apiKeyHeaders, rawBody });
    const [stored] = await feedOf(organizationId, 'u');

    expect(added.statusCode).toBe(200);
    expect(JSON.stringify(stored.notificationSourceData)).toBe(JSON.stringify(sourceData));
    expect(JSON.stringify(stored.displayHeadlineMessageTemplateData)).toBe(AWKWARD_KEYS);
    expect(Object.prototype.hasOwnProperty.call(stored.displayHeadlineMessageTemplateData, '__proto__')).toBe(true);
  });

  it('round-trip any key name in document metadata and activity changes', async () => {
    const organizationId = uniqueId('org');
    const metadata = '{"__proto__":"p","constructor":"c","prototype":"q"}';
    await call('/v2/workspace/activityconfig/update', { activityServiceConfig: { isEnabled: true } });

    const document = await invokeRoute('/v2/organizations/documents/add', undefined, {
      headers: tenant.apiKeyHeaders,
      rawBody: `{"data":{"organizationId":"${organizationId}","createOrganization":true,"documents":[{"documentId":"d"}]}}`,
    });
    const updated = await invokeRoute('/v2/organizations/documents/update', undefined, {
      headers: tenant.apiKeyHeaders,
      rawBody: `{"data":{"organizationId":"${organizationId}","documents":[{"documentId":"d","metadata":${metadata}}]}}`,
    });
    const activity = await invokeRoute('/v2/activities/add', undefined, {
      headers: tenant.apiKeyHeaders,
      rawBody: `{"data":{"organizationId":"${organizationId}","activities":[{"id":"a","featureType":"custom","actionType":"x.y","targetEntityId":"t","changes":${AWKWARD_KEYS},"entityData":${AWKWARD_KEYS}}]}}`,
    });
    const [storedDocument] = (await call('/v2/organizations/documents/get', { organizationId })).body.result?.data;
    const [storedActivity] = (await call('/v2/activities/get', { organizationId })).body.result?.data;

    expect([document.statusCode, updated.statusCode, activity.statusCode]).toEqual([200, 200, 200]);
    expect(JSON.stringify(storedDocument.metadata)).toBe(metadata);
    expect(JSON.stringify(storedActivity.changes)).toBe(AWKWARD_KEYS);
    expect(JSON.stringify(storedActivity.entityData)).toBe(AWKWARD_KEYS);
  });
});

describe('a failed request leaves no trace', () => {
  /** Add Notification run under other grants than its route's: a missing grant makes that one step fail. */
  async function addUnderGrants(grants: Grants, data: unknown) {
    return invoke(addNotification, '/v2/notifications/add', data, { headers: tenant.apiKeyHeaders, grants });
  }

  it('Add Notification refused for its depth writes no feed entry', async () => {
    const organizationId = uniqueId('org');

    const response = await call('/v2/notifications/add', {
      organizationId,
      documentId: 'doc',
      createOrganization: true,
      createDocument: true,
      displayHeadlineMessageTemplate: 'x',
      actionUser: { userId: 'actor' },
      notifyUsers: [{ userId: 'u' }],
      notificationSourceData: nested(32),
    });

    expect(response.statusCode).toBe(400);
    expect(await feedOf(organizationId, 'u')).toEqual([]);
  });

  it('Add Notification whose notification write fails takes back the feed entries it wrote', async () => {
    const organizationId = uniqueId('org');
    await call('/v2/organizations/documents/add', {
      organizationId,
      createOrganization: true,
      documents: [{ documentId: 'doc' }],
    });
    // The notification item is the transaction's Put; a role without PutItem makes exactly that step fail.
    const withoutPut: Grants = {
      tableActions: TABLE_WRITE_ACTIONS.filter((action) => action !== 'dynamodb:PutItem'),
      idempotencyActions: [],
      indexes: [],
      kmsActions: [],
      queueActions: [],
      sesActions: [],
      connectionActions: [],
    };

    const response = await addUnderGrants(withoutPut, {
      organizationId,
      documentId: 'doc',
      notificationId: 'n',
      displayHeadlineMessageTemplate: 'x',
      actionUser: { userId: 'actor' },
      notifyUsers: [{ userId: 'u1' }, { userId: 'u2' }],
    });
    takeViolations();

    expect(response.statusCode).toBe(500);
    expect(await feedOf(organizationId, 'u1')).toEqual([]);
    expect(await feedOf(organizationId, 'u2')).toEqual([]);
  });

  it('Add Notification re-sent with a new recipient takes back only that entry when it fails', async () => {
    const organizationId = uniqueId('org');
    const base = {
      organizationId,
      documentId: 'doc',
      createOrganization: true,
      createDocument: true,
      notificationId: 'n',
      displayHeadlineMessageTemplate: 'x',
      actionUser: { userId: 'actor' },
    };
    await call('/v2/notifications/add', { ...base, notifyUsers: [{ userId: 'u1' }] });
    const withoutPut: Grants = {
      tableActions: TABLE_WRITE_ACTIONS.filter((action) => action !== 'dynamodb:PutItem'),
      idempotencyActions: [],
      indexes: [],
      kmsActions: [],
      queueActions: [],
      sesActions: [],
      connectionActions: [],
    };

    const response = await addUnderGrants(withoutPut, { ...base, notifyUsers: [{ userId: 'u1' }, { userId: 'u2' }] });
    takeViolations();

    expect(response.statusCode).toBe(500);
    expect((await feedOf(organizationId, 'u1')).map((n: { id: string }) => n.id)).toEqual(['n']);
    expect(await feedOf(organizationId, 'u2')).toEqual([]);
  });
});
