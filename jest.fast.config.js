/**
 * The fast tier (`npm run test:fast`): the unit specs and the marble scenarios, in well under a minute. It
 * leaves out what `npm test` alone runs: the property suites (1,000 runs a property), the specs that pack the
 * package, build it, spawn processes (the examples, MCP servers, the chat, a killed writer, restate-server),
 * drive a browser, type-check generated code with the compiler, or overflow the stack on purpose.
 * @type {import('jest').Config}
 */
const { availableParallelism } = require('node:os');
const base = require('./jest.config.js');

module.exports = {
  ...base,
  testPathIgnorePatterns: [
    '/node_modules/',
    // property suites
    '<rootDir>/spec/properties/',
    '<rootDir>/spec/conversation/conversation-properties\\.spec\\.ts$',
    '<rootDir>/spec/testing/replay-property\\.spec\\.ts$',
    // the package as published, and what needs dist/
    '<rootDir>/spec/package\\.spec\\.ts$',
    '<rootDir>/spec/testing/consumer-setup\\.spec\\.ts$',
    '<rootDir>/spec/browser\\.spec\\.ts$',
    '<rootDir>/spec/playground\\.spec\\.ts$',
    '<rootDir>/spec/examples/ui\\.spec\\.ts$',
    // child processes: the examples, MCP servers, the chat, a killed writer, restate-server, the stream check
    '<rootDir>/spec/s0[457]\\.spec\\.ts$',
    '<rootDir>/spec/chat\\.spec\\.ts$',
    '<rootDir>/spec/acp/acp-agent\\.spec\\.ts$',
    '<rootDir>/spec/providers/s04-demo\\.spec\\.ts$',
    '<rootDir>/spec/examples/mcp-filesystem\\.spec\\.ts$',
    '<rootDir>/spec/mcp/conformance\\.spec\\.ts$',
    '<rootDir>/spec/mcp/real-servers\\.spec\\.ts$',
    '<rootDir>/spec/sessions/jsonl-store-crash\\.spec\\.ts$',
    '<rootDir>/spec/restate/',
    '<rootDir>/spec/scripts/check-streams\\.spec\\.ts$',
    // the compiler over generated or declared code
    '<rootDir>/spec/providers/openai-responses-types\\.spec\\.ts$',
    '<rootDir>/spec/providers/anthropic-cache-types\\.spec\\.ts$',
    '<rootDir>/spec/testing/replay-test\\.spec\\.ts$',
    // the textbook loops' failures: thousands of turns until the stack overflows
    '<rootDir>/spec/examples/textbook-loop\\.spec\\.ts$',
  ],
  // jest's default on 2 cores is one worker, and the main process idles: two use both cores
  maxWorkers: Math.max(2, availableParallelism() - 1),
};
