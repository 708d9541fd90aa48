/** D1–D6 on a real Restate server, the endpoint on the oldest SDK the peer range admits, on this Node (D6). */
import { SDKS } from './support/sdks.js';
import { conversationSuite } from './support/conversation-suite.js';

conversationSuite(SDKS.oldest);
