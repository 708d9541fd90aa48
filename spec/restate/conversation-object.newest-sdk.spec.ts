/** D1–D6 on a real Restate server, the endpoint on the newest 1.x SDK, on Node 22 from the npm package `node` (D6). */
import { SDKS } from './support/sdks.js';
import { conversationSuite } from './support/conversation-suite.js';

conversationSuite(SDKS.newest);
