import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildOpenApiDocument, operationIdOf } from '../../openapi/document';
import { checkResponse } from '../support/contract';
import { handler as notRouted } from '../../functions/gateway/not-routed';
import { routes } from '../../shared/routes';

describe('the OpenAPI document', () => {
  const document = buildOpenApiDocument() as { openapi: string; paths: Record<string, { post: any }> };

  it('is OpenAPI 3.1 with exactly the routes of the table', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths).sort()).toEqual(routes.map((route) => route.path).sort());
  });

  it('describes each request body as {data: <the handler schema>}', () => {
    const create = document.paths['/v2/workspace/create'].post;
    const data = create.requestBody.content['application/json'].schema.properties.data;

    expect(data.required).toEqual(['ownerEmail']);
    expect(data.properties.name).toMatchObject({ type: 'string', maxLength: 200 });
  });

  it('names the credentials of each auth level', () => {
    expect(document.paths['/v2/workspace/create'].post.security).toEqual([]);
    expect(document.paths['/v2/workspace/apikeys/get'].post.security).toEqual([
      { workspaceId: [], workspaceAuthToken: [] },
    ]);
    expect(document.paths['/v2/workspace/activityconfig/get'].post.security).toEqual([{ apiKey: [], authToken: [] }]);
  });

  it('describes the own result shapes of Ask AI and Suggest Decision instead of the success envelope', () => {
    const schemaOf = (path: string) => document.paths[path].post.responses['200'].content['application/json'].schema;

    expect(schemaOf('/v2/rewriter/ask-ai').properties.result.anyOf).toEqual([
      expect.objectContaining({ required: ['success', 'text'] }),
      expect.objectContaining({ required: ['success', 'error'] }),
    ]);
    expect(schemaOf('/v2/memory/suggest').properties.result.required).toEqual(['primary', 'conflict']);
    expect(schemaOf('/v2/users/get').properties.result.properties.status).toEqual({ type: 'string', const: 'success' });
  });

  it('is committed as npm run openapi writes it, so the published document and the contract check never trail the code', () => {
    const committed = readFileSync(join(__dirname, '..', '..', 'openapi.json'), 'utf8');

    expect(committed).toBe(`${JSON.stringify(document, null, 2)}\n`);
  });

  it('is served by the API itself at GET /openapi.json (the $default route of the deployed API, and the local gateway)', async () => {
    const event = {
      rawPath: '/openapi.json',
      requestContext: { requestId: 'r', http: { method: 'GET' } },
    } as unknown as Parameters<typeof notRouted>[0];

    const response = await notRouted(event);

    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body ?? '')).toEqual(
      JSON.parse(readFileSync(join(__dirname, '..', '..', 'openapi.json'), 'utf8')),
    );
  });

  it('names operations in camelCase, verb first, and marks the /v1 aliases deprecated', () => {
    expect(operationIdOf('/v2/users/get')).toBe('getUsers');
    expect(operationIdOf('/v2/organizations/usergroups/users/add')).toBe('addUsergroupsUsers');
    expect(operationIdOf('/v1/users/delete')).toBe('deleteUsersV1');
    expect(document.paths['/v1/users/delete'].post.deprecated).toBe(true);
    expect(document.paths['/v2/users/delete'].post.deprecated).toBeUndefined();
  });

  it('references the error responses, without 401 on the operation that needs no credentials', () => {
    const responses = (path: string) => document.paths[path].post.responses;

    expect(responses('/v2/users/get')['429']).toEqual({ $ref: '#/components/responses/TooManyRequests' });
    expect(Object.keys(responses('/v2/workspace/create'))).not.toContain('401');
    expect(Object.keys(responses('/v2/users/get'))).toEqual(
      expect.arrayContaining(['200', '400', '401', '403', '404', '405', '409', '413', '429', '500', '503']),
    );
  });
});

describe('the contract check', () => {
  it('catches a success whose data has a field of the wrong type', () => {
    const wrong = {
      result: {
        status: 'success',
        message: 'Users retrieved successfully.',
        data: [{ userId: 7, accessRole: 'editor' }],
      },
    };

    expect(() => checkResponse('/v2/users/get', 200, wrong)).toThrow(/does not match openapi.json/);
  });

  it('catches a field the document does not name, and a status it does not document', () => {
    const extra = { result: { status: 'success', message: 'ok', data: [], secret: 'leaked' } };

    expect(() => checkResponse('/v2/users/get', 200, extra)).toThrow(/does not match/);
    expect(() =>
      checkResponse('/v2/workspace/create', 401, { error: { status: 'UNAUTHENTICATED', message: 'x' } }),
    ).toThrow(/does not document/);
  });

  it('accepts the error envelope on a documented error status', () => {
    expect(() =>
      checkResponse('/v2/users/get', 404, { error: { status: 'NOT_FOUND', message: 'Organization not found.' } }),
    ).not.toThrow();
  });
});
