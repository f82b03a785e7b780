/**
 * What a function needs to reach the live-sync WebSocket API (docs/decisions.md §13) from whichever stack it is in:
 * the API's id and stage, the URLs and `@connections` ARNs built from them, and the names cdk-nag gives them. Its
 * own module so that infra/service-function.ts (which hands them to functions) and infra/live.ts (which builds the
 * API and its socket functions, themselves ServiceFunctions) both import it and not each other.
 */
import { CfnParameter, NestedStack, Stack } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { RoutePath } from '../shared/routes';

/**
 * Routes whose functions hand the WebSocket URL to clients without touching connections themselves: they get
 * LIVE_URL and LIVE_CONNECTIONS_ENDPOINT, but no grant (a function that declares `connections: 'manage'` gets both
 * anyway). Typed by the route table, so a renamed path fails the type check.
 */
export const LIVE_SESSION_ROUTES: readonly RoutePath[] = ['/v2/crdt/live/authorize'];

/**
 * The API Gateway Management API actions behind `execute-api:ManageConnections`: PostToConnection (POST),
 * GetConnection (GET) and DeleteConnection (DELETE) on `@connections/{connectionId}`.
 */
export const CONNECTION_METHODS = ['POST', 'GET', 'DELETE'] as const;

/**
 * What a function needs to reach the live API: its id and its stage's name. Everything else (URLs, ARNs) is built
 * from these in the function's own stack, so a nested stack receives the id as one parameter.
 */
export interface LiveApiReference {
  readonly apiId: string;
  readonly stageName: string;
}

/** The nested stacks' parameter that carries the API id from the parent. */
export const LIVE_API_ID_PARAMETER = 'LiveApiId';

/**
 * The API as `scope`'s stack refers to it. A nested stack gets the id through a parameter of a fixed name
 * (LIVE_API_ID_PARAMETER, made once per nested stack) instead of the parameter CDK would generate for the reference,
 * whose name carries the stack's name and a hash: the IAM statements then read the same in every stage, and so does
 * the cdk-nag acknowledgment of their `@connections/*` (which names the resource exactly).
 */
export function liveApiIn(scope: Construct, live: LiveApiReference): LiveApiReference {
  const stack = Stack.of(scope);
  if (!(stack instanceof NestedStack)) return live;
  const existing = stack.node.tryFindChild(LIVE_API_ID_PARAMETER);
  if (existing instanceof CfnParameter) return { apiId: existing.valueAsString, stageName: live.stageName };
  const parameter = new CfnParameter(stack, LIVE_API_ID_PARAMETER, {
    type: 'String',
    description: 'Id of the live-sync WebSocket API (parent stack)',
  });
  stack.setParameter(LIVE_API_ID_PARAMETER, live.apiId);
  return { apiId: parameter.valueAsString, stageName: live.stageName };
}

export interface LiveEndpoints {
  /** `wss://<api>.execute-api.<region>.<suffix>/<stage>`: what browsers connect to (LIVE_URL). */
  readonly url: string;
  /** `https://<api>.execute-api.<region>.<suffix>/<stage>`: the Management API of the stage (LIVE_CONNECTIONS_ENDPOINT). */
  readonly connectionsEndpoint: string;
  /** `arn:<partition>:execute-api:<region>:<account>:<api>/<stage>/<method>/@connections/*`, one per CONNECTION_METHODS. */
  readonly connectionArns: readonly string[];
}

/**
 * The stage's URLs and `@connections` ARNs, as seen from `scope`'s stack (its region, partition and URL suffix). The
 * stage's own `url` is the same string, but built here from the API id and the stage's name so that nothing refers
 * to the stage resource.
 */
export function liveEndpoints(scope: Construct, reference: LiveApiReference): LiveEndpoints {
  const stack = Stack.of(scope);
  const live = liveApiIn(scope, reference);
  const host = `${live.apiId}.execute-api.${stack.region}.${stack.urlSuffix}`;
  return {
    url: `wss://${host}/${live.stageName}`,
    connectionsEndpoint: `https://${host}/${live.stageName}`,
    connectionArns: CONNECTION_METHODS.map((method) =>
      stack.formatArn({
        service: 'execute-api',
        resource: live.apiId,
        resourceName: `${live.stageName}/${method}/@connections/*`,
      }),
    ),
  };
}

/** An IAM resource as cdk-nag names it in a finding (`arn:<AWS::Partition>:…:<LiveApiId>/dev/POST/@connections/*`). */
export function nagResourceName(scope: Construct, arn: string): string {
  const flatten = (value: unknown): string => {
    if (typeof value === 'string') return value;
    if (typeof value === 'object' && value !== null) {
      if ('Ref' in value) return `<${String(value.Ref)}>`;
      if ('Fn::Join' in value && Array.isArray(value['Fn::Join'])) {
        const [separator, parts] = value['Fn::Join'] as [string, unknown[]];
        return parts.map(flatten).join(separator);
      }
    }
    throw new Error(`Cannot name ${JSON.stringify(value)} as cdk-nag does.`);
  };
  return flatten(Stack.of(scope).resolve(arn));
}
