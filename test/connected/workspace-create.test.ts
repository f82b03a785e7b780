import { handler as createWorkspace } from '../../functions/workspace/create';
import { issueApiKey } from '../../shared/domain/credentials';
import { getEmailRegistry, getWorkspace, listWorkspacesByEmail } from '../../shared/db/workspace';
import { invoke } from '../support/invoke';
import { uniqueEmail } from '../support/ids';

const PATH = '/v2/workspace/create';
const create = (data: unknown, options = {}) => invoke(createWorkspace, PATH, data, options);

async function makePaid(workspaceId: string): Promise<void> {
  await issueApiKey({ workspaceId, apiKeyName: 'Production', type: 'production', createAuthToken: false });
}

describe('POST /v2/workspace/create', () => {
  it('creates a workspace with the documented defaults and a testing key', async () => {
    const email = uniqueEmail('jane.doe');

    const response = await create({ ownerEmail: email });

    expect(response.statusCode).toBe(200);
    expect(response.body.result?.status).toBe('success');
    const data = response.body.result?.data;
    expect(data.name).toBe(`${email} workspace`);
    expect(data.owner).toEqual({ email, id: expect.stringMatching(/^usr_/), name: email, avatar: '' });
    expect(data.authToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const keys = Object.values(data.apiKeyList) as Array<{ id: string; apiKeyName: string; type: string }>;
    expect(keys).toHaveLength(1);
    expect(keys[0]).toEqual({
      id: Object.keys(data.apiKeyList)[0],
      apiKeyName: expect.stringMatching(/^Jane\.doe-.* Test API Key$/),
      type: 'testing',
    });
    const stored = await getWorkspace(data.id);
    expect(stored?.authTokenHash).toBeDefined();
    expect(JSON.stringify(stored)).not.toContain(data.authToken);
  });

  it('trims and lower-cases the owner email and derives the key name from its local part', async () => {
    const local = `jane.doe.${Date.now()}`;

    const response = await create({
      ownerEmail: `  ${local.toUpperCase()}@Example.COM `,
      name: 'Jane',
      workspaceName: 'Acme',
      avatar: 'https://x.io/a.png',
    });

    const data = response.body.result?.data;
    expect(data.owner).toMatchObject({ email: `${local}@example.com`, name: 'Jane', avatar: 'https://x.io/a.png' });
    expect(data.name).toBe('Acme');
    expect((Object.values(data.apiKeyList)[0] as { apiKeyName: string }).apiKeyName).toBe(
      `J${local.slice(1)} Test API Key`,
    );
  });

  it('defaults the workspace name to "<name> workspace" when only name is given', async () => {
    const response = await create({ ownerEmail: uniqueEmail(), name: 'Jane Doe' });

    expect(response.body.result?.data.name).toBe('Jane Doe workspace');
  });

  it('rejects a disposable email domain and writes nothing', async () => {
    const email = `someone-${Date.now()}@mailinator.com`;

    const response = await create({ ownerEmail: email });

    expect(response.statusCode).toBe(400);
    expect(response.body.error).toEqual({
      status: 'INVALID_ARGUMENT',
      message: 'Disposable email domains are not allowed.',
    });
    expect(await getEmailRegistry(email)).toBeUndefined();
  });

  it('rejects a subdomain of a disposable domain', async () => {
    const response = await create({ ownerEmail: `x-${Date.now()}@mail.mailinator.com` });

    expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
  });

  it('refuses a second workspace while the root is not on a paid plan', async () => {
    const email = uniqueEmail();
    await create({ ownerEmail: email, workspaceName: 'First' });

    const response = await create({ ownerEmail: email, workspaceName: 'Second' });

    expect(response.statusCode).toBe(403);
    expect(response.body.error?.status).toBe('PERMISSION_DENIED');
    expect(await listWorkspacesByEmail(email)).toHaveLength(1);
  });

  it('answers ALREADY_EXISTS for a workspace name the email already owns, whatever its case', async () => {
    const email = uniqueEmail();
    await create({ ownerEmail: email, workspaceName: 'Acme' });

    const response = await create({ ownerEmail: email.toUpperCase(), workspaceName: ' acme ' });

    expect(response.statusCode).toBe(409);
    expect(response.body.error?.status).toBe('ALREADY_EXISTS');
    expect(await listWorkspacesByEmail(email)).toHaveLength(1);
  });

  it('allows more workspaces once the root holds a production key', async () => {
    const email = uniqueEmail();
    const root = await create({ ownerEmail: email, workspaceName: 'Root' });
    await makePaid(root.body.result?.data.id);

    const response = await create({ ownerEmail: email, workspaceName: 'Second' });

    expect(response.statusCode).toBe(200);
    expect(response.body.result?.data.owner.id).toBe(root.body.result?.data.owner.id);
  });

  it('leaves exactly 5 workspaces after 20 parallel creations for one email with a paid root', async () => {
    const email = uniqueEmail();
    const root = await create({ ownerEmail: email, workspaceName: 'Root' });
    await makePaid(root.body.result?.data.id);

    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => create({ ownerEmail: email, workspaceName: `Parallel ${i}` })),
    );

    const created = responses.filter((r) => r.statusCode === 200);
    const refused = responses.filter((r) => r.statusCode !== 200);
    expect(created).toHaveLength(4);
    for (const response of refused) {
      expect(response.statusCode).toBe(429);
      expect(response.body.error?.status).toBe('RESOURCE_EXHAUSTED');
      // Waiting does not lift the limit (a deleted workspace would), so nothing tells the client to retry later.
      expect(response.headers).not.toHaveProperty('Retry-After');
    }
    expect(await listWorkspacesByEmail(email)).toHaveLength(5);
    expect((await getEmailRegistry(email))?.workspaceCount).toBe(5);
  });

  it('answers RESOURCE_EXHAUSTED without Retry-After for a sixth workspace', async () => {
    const email = uniqueEmail();
    const root = await create({ ownerEmail: email, workspaceName: 'W0' });
    await makePaid(root.body.result?.data.id);
    for (let i = 1; i < 5; i += 1)
      expect((await create({ ownerEmail: email, workspaceName: `W${i}` })).statusCode).toBe(200);

    const response = await create({ ownerEmail: email, workspaceName: 'W5' });

    expect(response.statusCode).toBe(429);
    expect(response.body.error?.message).toBe('An email may own at most 5 workspaces.');
    expect(response.headers).not.toHaveProperty('Retry-After');
  });

  it('gives only one of two parallel first creations with the same name', async () => {
    const email = uniqueEmail();

    const responses = await Promise.all([create({ ownerEmail: email }), create({ ownerEmail: email })]);

    expect(responses.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expect(await listWorkspacesByEmail(email)).toHaveLength(1);
  });

  it.each([
    ['a missing ownerEmail', {}, 'data.ownerEmail'],
    ['an invalid email', { ownerEmail: 'not-an-email' }, 'data.ownerEmail'],
    ['a number as ownerEmail', { ownerEmail: 42 }, 'data.ownerEmail'],
    ['a name over 200 characters', { ownerEmail: 'a@example.com', name: 'n'.repeat(201) }, 'data.name'],
    ['an empty workspaceName', { ownerEmail: 'a@example.com', workspaceName: '  ' }, 'data.workspaceName'],
    [
      'a workspaceName over 200 characters',
      { ownerEmail: 'a@example.com', workspaceName: 'w'.repeat(201) },
      'data.workspaceName',
    ],
    [
      'an avatar over 2000 characters',
      { ownerEmail: 'a@example.com', avatar: `https://x.io/${'a'.repeat(2000)}` },
      'data.avatar',
    ],
    ['an avatar that is not a URL', { ownerEmail: 'a@example.com', avatar: 'not a url' }, 'data.avatar'],
    ['a boolean as name', { ownerEmail: 'a@example.com', name: true }, 'data.name'],
  ])('rejects %s with INVALID_ARGUMENT naming the field, and writes nothing', async (_, data, path) => {
    const response = await create(data);

    expect(response.statusCode).toBe(400);
    expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
    expect(response.body.error?.details.issues).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
    expect(await getEmailRegistry('a@example.com')).toBeUndefined();
  });

  it('ignores unknown fields and never lets them set server-owned values', async () => {
    const email = uniqueEmail();

    const response = await create({ ownerEmail: email, id: 'ws_chosen', plan: 'paid', authTokenHash: 'x' });

    const id = response.body.result?.data.id;
    expect(id).not.toBe('ws_chosen');
    const stored = await getWorkspace(id);
    expect(stored?.plan).toBe('free');
    expect(stored?.authTokenHash).not.toBe('x');
  });
});
