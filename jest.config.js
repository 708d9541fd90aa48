/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/spec', '<rootDir>/marbles', '<rootDir>/examples'],
  testMatch: ['**/*.spec.ts', '**/*.marble.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
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
  },
};
