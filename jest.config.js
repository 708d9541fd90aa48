/** Packages that ship ES modules only (P18's specs load them; zod's locales, which the AI SDK loads, are ES modules under a CommonJS
 * export); esm-packages.js makes them CommonJS for jest. */
const ESM_ONLY = '(ai|@ai-sdk/[^/]+|@workflow/serde|zod|@agentclientprotocol/sdk)';

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  // a worker per core, not jest's default of one less: many specs wait on child processes, sockets and Chromium,
  // so on this project's 2-core machine two workers take the suite from 366 s to 196 s (all 220 suites passing)
  maxWorkers: '100%',
  roots: ['<rootDir>/spec', '<rootDir>/marbles', '<rootDir>/examples'],
  testMatch: ['**/*.spec.ts', '**/*.marble.ts'],
  // D7's three-node cluster takes minutes: `npm run test:cluster` runs it (jest.cluster.config.js)
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/spec/restate/cluster/'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
    // P18: the AI SDK's packages are ES modules only; jest on Node 20 needs them as CommonJS
    [`/node_modules/${ESM_ONLY}/.+\\.js$`]: '<rootDir>/spec/support/esm-packages.js',
  },
  transformIgnorePatterns: [`/node_modules/(?!${ESM_ONLY}/)`],
  // sources import './x.js' (ESM-ready); jest resolves the .ts file
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // tests written as users write them import the package by its name
    '^rx-tool-loop$': '<rootDir>/src/index.ts',
    '^rx-tool-loop/testing$': '<rootDir>/src/testing/index.ts',
    '^rx-tool-loop/sessions$': '<rootDir>/src/sessions/index.ts',
    '^rx-tool-loop/sessions/testing$': '<rootDir>/src/sessions/testing/index.ts',
    '^rx-tool-loop/mcp$': '<rootDir>/src/mcp/index.ts',
    '^rx-tool-loop/otel$': '<rootDir>/src/otel/index.ts',
    '^rx-tool-loop/restate$': '<rootDir>/src/restate/index.ts',
    '^rx-tool-loop/ai-sdk$': '<rootDir>/src/ai-sdk/index.ts',
    '^rx-tool-loop/ui$': '<rootDir>/src/ui/index.ts',
    '^rx-tool-loop/acp$': '<rootDir>/src/acp/index.ts',
  },
};
