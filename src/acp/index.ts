/**
 * `rx-tool-loop/acp` (E1–E3): any loop configuration served to an editor over the Agent Client Protocol, on the
 * optional peer `@agentclientprotocol/sdk`.
 */
export {};
