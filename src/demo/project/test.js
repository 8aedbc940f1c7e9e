import assert from 'node:assert/strict';
import { sum } from './sum.js';

assert.equal(sum(2, 3), 5, 'sum(2, 3) should be 5');
assert.equal(sum(-1, 1), 0, 'sum(-1, 1) should be 0');
console.log('all tests pass');
