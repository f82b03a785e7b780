/**
 * `npm run route-stacks`: records in infra/route-stacks.json the nested stack of every route of the table that is not
 * recorded yet (its area's last nested stack with room, or a new one), and drops routes the table no longer has. A
 * recorded route never moves (infra/route-stack.ts says why). Commit the file with the route.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { groupRoutes } from '../infra/route-stack';
import { routes } from '../shared/routes';

const FILE = join(__dirname, '..', 'infra', 'route-stacks.json');

const recorded: Record<string, string> = {};
for (const group of groupRoutes(routes)) for (const route of group.routes) recorded[route.path] = group.id;
writeFileSync(FILE, `${JSON.stringify(recorded, null, 2)}\n`);
console.log(
  `Wrote ${FILE}: ${Object.keys(recorded).length} routes in ${new Set(Object.values(recorded)).size} nested stacks.`,
);
