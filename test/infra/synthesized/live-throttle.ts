/**
 * The live WebSocket stage's throttle (issue 30 item 5): infra/limits.ts LIVE_STAGE_THROTTLE by default, and what
 * `-c liveThrottleRate` / `-c liveThrottleBurst` ask for (docs/operating.md "Live sync: the stage's throttle").
 * The HTTP API's stage keeps its own throttle whatever they say.
 */
import { buildApp } from '../../../infra/app';
import { type Deployment, describeReference, resourcesOfType, templatesOf, testApp } from '../templates';

function deploy(context: Record<string, unknown>): Deployment {
  return templatesOf(buildApp(testApp(context)));
}

/** The DefaultRouteSettings of the WebSocket API's stage and of the HTTP API's. */
function stageThrottles(deployment: Deployment): { live: unknown; http: unknown } {
  const stages = resourcesOfType(deployment, 'AWS::ApiGatewayV2::Stage');
  const of = (reference: string) =>
    stages.find((stage) => describeReference(stage.resource.Properties.ApiId, stage.stack) === reference)?.resource
      .Properties.DefaultRouteSettings;
  return { live: of('websocket api Ref'), http: of('api Ref') };
}

const HTTP_STAGE = { ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 };

describe('the live stage throttle', () => {
  it('is 1,000 frames/s with bursts of 2,000 by default', () => {
    expect(stageThrottles(deploy({}))).toEqual({
      live: { ThrottlingRateLimit: 1000, ThrottlingBurstLimit: 2000 },
      http: HTTP_STAGE,
    });
  });

  it('takes -c liveThrottleRate and -c liveThrottleBurst, as strings from the command line or numbers from cdk.json', () => {
    expect([
      stageThrottles(deploy({ liveThrottleRate: '3000', liveThrottleBurst: '5000' })),
      stageThrottles(deploy({ liveThrottleRate: 400, liveThrottleBurst: 800 })),
    ]).toEqual([
      { live: { ThrottlingRateLimit: 3000, ThrottlingBurstLimit: 5000 }, http: HTTP_STAGE },
      { live: { ThrottlingRateLimit: 400, ThrottlingBurstLimit: 800 }, http: HTTP_STAGE },
    ]);
  });

  it('keeps the default burst for a rate alone, or twice the rate when that is larger; and the default rate for a burst alone', () => {
    expect([
      stageThrottles(deploy({ liveThrottleRate: '500' })).live,
      stageThrottles(deploy({ liveThrottleRate: '4000' })).live,
      stageThrottles(deploy({ liveThrottleBurst: '3000' })).live,
    ]).toEqual([
      { ThrottlingRateLimit: 500, ThrottlingBurstLimit: 2000 },
      { ThrottlingRateLimit: 4000, ThrottlingBurstLimit: 8000 },
      { ThrottlingRateLimit: 1000, ThrottlingBurstLimit: 3000 },
    ]);
  });

  it.each([
    ['liveThrottleRate', '0'],
    ['liveThrottleRate', '-5'],
    ['liveThrottleRate', 'fast'],
    ['liveThrottleBurst', '0'],
    ['liveThrottleBurst', '1.5'],
  ])('refuses -c %s=%s', (name, value) => {
    expect(() => buildApp(testApp({ [name]: value }))).toThrow(new RegExp(`Context ${name} must be`));
  });
});
