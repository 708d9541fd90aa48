/**
 * `rx-tool-loop/acp` (E1–E3): any loop configuration served to an editor over the Agent Client Protocol, on the
 * optional peer `@agentclientprotocol/sdk`. The only entry that imports it: the main entry never does.
 */
export { serveAcp } from './serve-acp.js';
export type { AcpAgent, AcpSession, ServeAcpOptions } from './serve-acp.js';
export { acpUpdates, guessToolKind, historyUpdates } from './acp-updates.js';
export type { ToolKindOf } from './acp-updates.js';
export { acpPrompt } from './acp-prompt.js';
