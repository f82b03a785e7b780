/**
 * `npm run openapi`: writes openapi.json from the route table and the handlers' schemas (offline), the client types,
 * and the endpoint table (docs/endpoints.md) from the route table.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

// Handler modules read their configuration at load; the document needs none of it.
process.env.TABLE_NAME ??= 'openapi';
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const { buildOpenApiDocument, endpointTable, ENDPOINTS_FILE } =
  require('../openapi/document') as typeof import('../openapi/document');

const { openApiTypes, TYPES_FILE } = require('../openapi/client-types') as typeof import('../openapi/client-types');

async function main(): Promise<void> {
  const target = join(__dirname, '..', 'openapi.json');
  const document = buildOpenApiDocument();
  writeFileSync(target, `${JSON.stringify(document, null, 2)}\n`);
  console.log(`Wrote ${target} (${Object.keys(document.paths as object).length} operations).`);
  writeFileSync(TYPES_FILE, await openApiTypes(target));
  console.log(`Wrote ${TYPES_FILE}.`);
  writeFileSync(ENDPOINTS_FILE, endpointTable());
  console.log(`Wrote ${ENDPOINTS_FILE}.`);
}

void main();
