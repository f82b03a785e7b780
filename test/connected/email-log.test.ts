/**
 * The email log operation (docs/decisions.md §12, (ext) `/v2/workspace/emails/get`): newest first, filtered by
 * notification, user or both, paged with the project's page tokens, bad input refused, and each API key seeing
 * only its own emails, at a cost that follows the page and not the log. The log is seeded with its own module (shared/db/email-log.ts `createEmails`), writing the
 * items the send pipeline writes, so these tests do not depend on that pipeline.
 */
import { dynamodb } from '../../shared/db/client';
import { createEmails, type StoredEmail } from '../../shared/db/email-log';
import { CapacityMeter } from '../support/capacity-meter';
import { newTenant, siblingKey, type Tenant } from '../support/fixtures';
import { uniqueId } from '../support/ids';
import { routeCaller, type Invocation } from '../support/invoke';

const EMAILS = '/v2/workspace/emails/get';

let tenant: Tenant;
let other: Tenant;
const call = routeCaller(() => tenant);

/** A stored email of `notificationId` to `userId`, created `timestamp`: sent through the mailbox unless `fields` say otherwise. */
function storedEmail(
  notificationId: string,
  userId: string,
  timestamp: number,
  fields: Partial<StoredEmail> = {},
): StoredEmail {
  return {
    id: uniqueId('eml'),
    notificationId,
    organizationId: 'org-1',
    userId,
    to: `${userId}@example.com`,
    subject: 'Ann Lee mentioned you in Roadmap 2026',
    status: 'sent',
    transport: 'mailbox',
    attempts: 1,
    timestamp,
    ...fields,
  };
}

/** An email as the operation shows it: without the send state, the provider's id and the organization. */
function shown(email: StoredEmail) {
  return {
    id: email.id,
    notificationId: email.notificationId,
    userId: email.userId,
    to: email.to,
    subject: email.subject,
    status: email.status,
    ...(email.reason === undefined ? {} : { reason: email.reason }),
    transport: email.transport,
    attempts: email.attempts,
    timestamp: email.timestamp,
  };
}

const newestFirst = (emails: readonly StoredEmail[]) =>
  [...emails].sort((a, b) => b.timestamp - a.timestamp).map(shown);

const idsOf = (response: Invocation): string[] =>
  (response.body.result?.data as Array<{ id: string }>).map((email) => email.id);

/** Every page of a listing of `data`, following its tokens (at most `maxPages`). */
async function pageThrough(data: Record<string, unknown>, maxPages = 20): Promise<Invocation[]> {
  const pages: Invocation[] = [];
  let pageToken: string | undefined;
  do {
    const page = await call(EMAILS, { ...data, ...(pageToken === undefined ? {} : { pageToken }) });
    if (page.statusCode !== 200) throw new Error(JSON.stringify(page.body));
    pages.push(page);
    pageToken = page.body.result?.pageToken;
  } while (pageToken !== undefined && pages.length < maxPages);
  return pages;
}

// One log for the whole file, read only: three notifications to three users, in every status, a minute apart.
const start = Date.now() - 60 * 60 * 1000;
const at = (minute: number) => start + minute * 60 * 1000;
const n1 = uniqueId('ntf');
const n2 = uniqueId('ntf');
const n3 = uniqueId('ntf');
const [ann, bob, cy] = [uniqueId('ann'), uniqueId('bob'), uniqueId('cy')];
const log: StoredEmail[] = [
  storedEmail(n1, ann, at(0), { providerMessageId: 'mailbox/1767225600000-a.eml' }),
  storedEmail(n1, bob, at(1), {
    status: 'failed',
    transport: 'sendgrid',
    attempts: 8,
    reason: 'SendGrid answered 503.',
  }),
  storedEmail(n1, cy, at(2), {
    status: 'skipped',
    to: '',
    attempts: 0,
    reason: 'No email address is known for the recipient.',
  }),
  storedEmail(n2, ann, at(3), {
    status: 'pending',
    transport: 'ses',
    reason: 'Throttled; retried.',
    nextAttemptAt: at(60),
    followUp: true,
  }),
  storedEmail(n2, bob, at(4)),
  storedEmail(n3, ann, at(5), { transport: 'ses', providerMessageId: 'ses-message-1' }),
];
// The same notification and user ids in another workspace's log.
const othersLog: StoredEmail[] = [storedEmail(n1, ann, at(10)), storedEmail(n2, bob, at(11))];

beforeAll(async () => {
  [tenant, other] = await Promise.all([newTenant(), newTenant()]);
  await createEmails(tenant.apiKeyId, log);
  await createEmails(other.apiKeyId, othersLog);
});

describe('the email log (emails/get)', () => {
  it("lists the API key's emails newest first, each with the log's fields only, and no token on the last page", async () => {
    const response = await call(EMAILS, {});

    expect(response.statusCode).toBe(200);
    expect(response.body.result).toEqual({
      status: 'success',
      message: 'Emails retrieved successfully.',
      data: newestFirst(log),
    });
    for (const internal of ['nextAttemptAt', 'followUp', 'providerMessageId', 'organizationId']) {
      expect(JSON.stringify(response.body)).not.toContain(internal);
    }
  });

  it("lists one notification's emails", async () => {
    const response = await call(EMAILS, { notificationId: n1 });

    expect(response.body.result?.data).toEqual(newestFirst(log.filter((email) => email.notificationId === n1)));
  });

  it("lists one user's emails", async () => {
    const response = await call(EMAILS, { userId: ann });

    expect(response.body.result?.data).toEqual(newestFirst(log.filter((email) => email.userId === ann)));
  });

  it("lists one notification's email to one user, and nothing for a pair that has none", async () => {
    const pair = await call(EMAILS, { notificationId: n2, userId: bob });
    const none = await call(EMAILS, { notificationId: n3, userId: bob });

    expect(pair.body.result?.data).toEqual(
      newestFirst(log.filter((email) => email.notificationId === n2 && email.userId === bob)),
    );
    expect(none.body.result).toEqual({ status: 'success', message: 'Emails retrieved successfully.', data: [] });
  });

  it('answers an empty list for a notification or user without emails', async () => {
    const byNotification = await call(EMAILS, { notificationId: uniqueId('ntf') });
    const byUser = await call(EMAILS, { userId: uniqueId('dee') });

    expect(byNotification.body.result?.data).toEqual([]);
    expect(byUser.body.result?.data).toEqual([]);
  });

  it.each([
    ['every email', {}, log],
    ["a notification's emails", { notificationId: n1 }, log.filter((email) => email.notificationId === n1)],
    ["a user's emails", { userId: ann }, log.filter((email) => email.userId === ann)],
  ])(
    'pages through %s with pageSize 2: full pages, every email once in order, no token on the last',
    async (_, filter, expected) => {
      const pages = await pageThrough({ ...filter, pageSize: 2 });

      expect(pages.flatMap(idsOf)).toEqual(newestFirst(expected).map((email) => email.id));
      expect(pages.slice(0, -1).map((page) => idsOf(page).length)).toEqual(pages.slice(0, -1).map(() => 2));
      expect(pages.slice(0, -1).every((page) => typeof page.body.result?.pageToken === 'string')).toBe(true);
      expect(pages[pages.length - 1].body.result).not.toHaveProperty('pageToken');
    },
  );

  it('continues where the token says whatever the next page size, with no email repeated or skipped', async () => {
    const first = await call(EMAILS, { pageSize: 1 });
    const rest = await call(EMAILS, { pageSize: 250, pageToken: first.body.result?.pageToken });

    expect([...idsOf(first), ...idsOf(rest)]).toEqual(newestFirst(log).map((email) => email.id));
    expect(rest.body.result).not.toHaveProperty('pageToken');
  });

  it('answers 50 emails a page when no pageSize is given', async () => {
    const busy = await newTenant();
    const many = Array.from({ length: 51 }, (_, i) => storedEmail(uniqueId('ntf'), ann, at(i)));
    await createEmails(busy.apiKeyId, many);

    const first = await call(EMAILS, {}, busy);
    const second = await call(EMAILS, { pageToken: first.body.result?.pageToken }, busy);

    expect(idsOf(first)).toEqual(
      newestFirst(many)
        .slice(0, 50)
        .map((email) => email.id),
    );
    expect(idsOf(second)).toEqual([newestFirst(many)[50].id]);
    expect(second.body.result).not.toHaveProperty('pageToken');
  });

  it('keeps ids with separators apart: a notification id that extends another is not listed under it', async () => {
    const base = uniqueId('ntf');
    const lookalikes = [
      storedEmail(base, ann, at(20)),
      storedEmail(`${base}#x`, ann, at(21)),
      storedEmail(`${base}|x`, ann, at(22)),
    ];
    const own = await newTenant();
    await createEmails(own.apiKeyId, lookalikes);

    const response = await call(EMAILS, { notificationId: base }, own);
    const hashed = await call(EMAILS, { notificationId: `${base}#x` }, own);

    expect(idsOf(response)).toEqual([lookalikes[0].id]);
    expect(idsOf(hashed)).toEqual([lookalikes[1].id]);
  });

  it('ignores fields it does not know, as every operation does', async () => {
    const response = await call(EMAILS, { organizationId: 'org-1', status: 'failed', apiKey: other.apiKeyId });

    expect(response.body.result?.data).toEqual(newestFirst(log));
  });

  it.each([
    ['pageSize 0', 'data.pageSize', { pageSize: 0 }],
    ['pageSize 251', 'data.pageSize', { pageSize: 251 }],
    ['a fractional pageSize', 'data.pageSize', { pageSize: 2.5 }],
    ['pageSize as a string', 'data.pageSize', { pageSize: '10' }],
    ['pageSize null', 'data.pageSize', { pageSize: null }],
    ['a numeric notificationId', 'data.notificationId', { notificationId: 42 }],
    ['an empty notificationId', 'data.notificationId', { notificationId: '' }],
    ['a notificationId of 257 characters', 'data.notificationId', { notificationId: 'n'.repeat(257) }],
    ['a notificationId with a control character', 'data.notificationId', { notificationId: 'line\nbreak' }],
    ['a userId list', 'data.userId', { userId: ['u1'] }],
    ['a userId of 257 characters', 'data.userId', { userId: 'u'.repeat(257) }],
    ['a numeric pageToken', 'data.pageToken', { pageToken: 7 }],
    ['an empty pageToken', 'data.pageToken', { pageToken: '' }],
    ['a pageToken over 8192 characters', 'data.pageToken', { pageToken: 't'.repeat(8193) }],
  ])('refuses %s with INVALID_ARGUMENT naming %s, never a 500', async (_, field, data) => {
    const response = await call(EMAILS, data);

    expect(response.statusCode).toBe(400);
    expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
    expect(JSON.stringify(response.body.error?.details)).toContain(field);
  });

  it('accepts ids of 256 characters and the page sizes 1 and 250', async () => {
    const responses = await Promise.all([
      call(EMAILS, { notificationId: 'n'.repeat(256), userId: 'u'.repeat(256) }),
      call(EMAILS, { pageSize: 1 }),
      call(EMAILS, { pageSize: 250 }),
    ]);

    expect(responses.map((response) => response.statusCode)).toEqual([200, 200, 200]);
  });

  it('refuses a malformed or altered page token with INVALID_ARGUMENT', async () => {
    const token = (await call(EMAILS, { pageSize: 1 })).body.result?.pageToken as string;
    const [body, signature] = token.split('.');
    const altered = `${body}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;

    const malformed = await call(EMAILS, { pageToken: 'not-a-page-token' });
    const forged = await call(EMAILS, { pageToken: altered });

    expect(malformed.statusCode).toBe(400);
    expect(malformed.body.error).toEqual({ status: 'INVALID_ARGUMENT', message: 'Invalid page token.' });
    expect(forged.statusCode).toBe(400);
    expect(forged.body.error).toEqual({ status: 'INVALID_ARGUMENT', message: 'Invalid page token.' });
  });

  it('refuses a page token made for other filters, or by another operation, with INVALID_ARGUMENT', async () => {
    const byUser = (await call(EMAILS, { userId: ann, pageSize: 1 })).body.result?.pageToken as string;
    await call('/v2/organizations/documents/add', {
      organizationId: 'org-1',
      createOrganization: true,
      documents: [{ documentId: 'doc-1' }, { documentId: 'doc-2' }],
    });
    const documents = (await call('/v2/organizations/documents/get', { organizationId: 'org-1', pageSize: 1 })).body
      .result?.pageToken as string;

    const otherFilter = await call(EMAILS, { notificationId: n1, pageToken: byUser });
    const unfiltered = await call(EMAILS, { pageToken: byUser });
    const otherOperation = await call(EMAILS, { pageToken: documents });

    for (const response of [otherFilter, unfiltered, otherOperation]) {
      expect(response.statusCode).toBe(400);
      expect(response.body.error).toEqual({
        status: 'INVALID_ARGUMENT',
        message: 'Page token does not belong to this query.',
      });
    }
  });
});

describe('the cost of an email log page', () => {
  const meter = new CapacityMeter();
  let busy: Tenant;
  const notificationId = uniqueId('ntf');

  // 300 emails of one notification, to 300 users: a log much longer than a page, its items all of one size.
  beforeAll(async () => {
    busy = await newTenant();
    await createEmails(
      busy.apiKeyId,
      Array.from({ length: 300 }, (_, i) => storedEmail(notificationId, `user-${String(i).padStart(3, '0')}`, at(i))),
    );
    // Authentication and the page-token secret are read once and cached: read them before measuring.
    await call(EMAILS, { pageSize: 1 }, busy);
    meter.attach(dynamodb);
  });

  afterAll(() => meter.detach());

  it('reads the same for a page deep in the log as for the first, about 0.1 read unit per email', async () => {
    const first = await meter.measure(() => call(EMAILS, { pageSize: 50 }, busy));
    let pageToken = first.value.body.result?.pageToken as string;
    for (let page = 2; page < 5; page += 1)
      pageToken = (await call(EMAILS, { pageSize: 50, pageToken }, busy)).body.result?.pageToken as string;
    const fifth = await meter.measure(() => call(EMAILS, { pageSize: 50, pageToken }, busy));

    expect(idsOf(fifth.value)).toHaveLength(50);
    expect(first.capacity.read).toBeLessThanOrEqual(6);
    expect(fifth.capacity.read).toBe(first.capacity.read);
  });

  it("examines at most 5 × pageSize of a notification's emails for a user who has none, answering a short page with a token", async () => {
    const response = await meter.measure(() => call(EMAILS, { notificationId, userId: 'nobody', pageSize: 10 }, busy));
    const unfiltered = await meter.measure(() => call(EMAILS, { notificationId, pageSize: 50 }, busy));

    expect(response.value.body.result?.data).toEqual([]);
    expect(typeof response.value.body.result?.pageToken).toBe('string');
    expect(response.capacity.read).toBeLessThanOrEqual(unfiltered.capacity.read * 2);
  });
});

describe('tenancy of the email log', () => {
  it("shows another API key of the same workspace none of the first key's emails", async () => {
    const sibling = await siblingKey(tenant);

    const responses = await Promise.all(
      [{}, { notificationId: n1 }, { userId: ann }, { notificationId: n1, userId: ann }].map((data) =>
        call(EMAILS, data, sibling),
      ),
    );

    for (const response of responses) expect(response.body.result?.data).toEqual([]);
  });

  it("shows an API key of another workspace its own emails only, though its notification and user ids are the first key's", async () => {
    const all = await call(EMAILS, {}, other);
    const byNotification = await call(EMAILS, { notificationId: n1 }, other);
    const byUser = await call(EMAILS, { userId: ann }, other);

    expect(all.body.result?.data).toEqual(newestFirst(othersLog));
    expect(byNotification.body.result?.data).toEqual(
      newestFirst(othersLog.filter((email) => email.notificationId === n1)),
    );
    expect(byUser.body.result?.data).toEqual(newestFirst(othersLog.filter((email) => email.userId === ann)));
  });

  it("refuses the first key's page token to another key of the same workspace and to another workspace's key", async () => {
    const token = (await call(EMAILS, { pageSize: 1 })).body.result?.pageToken as string;
    const byUserToken = (await call(EMAILS, { userId: ann, pageSize: 1 })).body.result?.pageToken as string;
    const sibling = await siblingKey(tenant);

    const responses = [
      await call(EMAILS, { pageSize: 1, pageToken: token }, sibling),
      await call(EMAILS, { pageSize: 1, pageToken: token }, other),
      await call(EMAILS, { userId: ann, pageToken: byUserToken }, other),
    ];

    for (const response of responses) {
      expect(response.statusCode).toBe(400);
      expect(response.body.error).toEqual({
        status: 'INVALID_ARGUMENT',
        message: 'Page token does not belong to this query.',
      });
    }
  });
});
