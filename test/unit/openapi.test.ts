import { buildOpenApiDocument } from '../../bin/openapi-document';
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
    expect(document.paths['/v2/workspace/apikeys/get'].post.security).toEqual([{ workspaceId: [], workspaceAuthToken: [] }]);
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
});
