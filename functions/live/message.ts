import type { APIGatewayProxyWebsocketHandlerV2 } from 'aws-lambda';

// Placeholder while live sync is built (issue 24): refuses every connection.
export const handler: APIGatewayProxyWebsocketHandlerV2 = async () => ({ statusCode: 503 });
