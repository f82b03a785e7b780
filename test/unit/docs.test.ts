/**
 * The docs' shape (issue 23, item 4): the README stays a front door, and the endpoint table in docs/ is the one
 * `npm run openapi` writes from the route table. Reading Markdown here is a test of the docs; no service code reads it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { endpointTable, ENDPOINTS_FILE } from '../../openapi/document';
import { routeDocs } from '../../shared/route-docs';
import { routes } from '../../shared/routes';

const ROOT = join(__dirname, '..', '..');

describe('the docs', () => {
  it('keep the README at most 300 lines', () => {
    const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length;

    expect(lines).toBeLessThanOrEqual(300);
  });

  it('hold the endpoint table as npm run openapi writes it from the route table', () => {
    const committed = readFileSync(ENDPOINTS_FILE, 'utf8');

    expect(committed).toBe(endpointTable());
  });

  it('give every route a description, which is its row in the endpoint table', () => {
    const table = endpointTable();

    for (const route of routes) {
      expect({ path: route.path, described: Boolean(routeDocs[route.path].description) }).toEqual({
        path: route.path,
        described: true,
      });
      expect(table).toContain(`\`${route.path}\``);
    }
  });
});
