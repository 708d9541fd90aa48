/**
 * D7 (`npm run test:cluster`): the three-node Restate cluster, alone. `npm test` leaves it out (jest.config.js):
 * it takes minutes on two cores.
 * @type {import('jest').Config}
 */
const base = require('./jest.config.js');

module.exports = {
  ...base,
  roots: ['<rootDir>/spec/restate/cluster'],
  testPathIgnorePatterns: ['/node_modules/'],
};
